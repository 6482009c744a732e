/**
 * Quick-job benchmark: 1-page HTML and ~10-page Markdown through the local gateway, at concurrency 1 and 8,
 * beside two baselines measured in the same run on the same machine:
 *  - warm: a bare puppeteer script with one warm browser (new context + setContent + pdf per document),
 *    measured in rounds alternating with the service's, so that the machine's drift reaches both alike;
 *  - launch: a browser launched per request (far slower; measured once, after the service has stopped).
 */
import { markdownToHtml } from '../functions/core/render/markdown';
import { ONE_PAGE_HTML, tenPageMarkdown } from './documents';
import { type Measurement, bareRender, drive, driveInterleaved, launchBaselineBrowser, localAccount, request, startService, table } from './lib';

export interface QuickjobBenchResult {
  rows: { doc: string; concurrency: number; service: Measurement; warm: Measurement; launch: Measurement | null }[];
  markdownPages: number;
}

export async function benchQuickjob(opts: { quick?: boolean } = {}): Promise<QuickjobBenchResult> {
  const markdown = tenPageMarkdown();
  const docs = [
    { name: '1-page HTML', html: ONE_PAGE_HTML, body: { input_type: 'html', html: ONE_PAGE_HTML } },
    { name: '10-page Markdown', html: markdownToHtml(markdown), body: { input_type: 'markdown', markdown } },
  ];
  // A short run still gives each concurrency-8 round 40 calls (five waves of 8): rounds of 10 calls were little more
  // than one wave, so they measured the start and the last straggler of each round rather than the rate.
  const n = (c: number) => (c === 1 ? (opts.quick ? 20 : 60) : opts.quick ? 80 : 240);
  const rounds = opts.quick ? 2 : 6;
  const rows: QuickjobBenchResult['rows'] = [];
  let markdownPages = 0;

  const service = await startService();
  const warmBrowser = await launchBaselineBrowser();
  try {
    const { api_key } = await localAccount(service.baseUrl);
    for (const doc of docs) {
      const body = JSON.stringify(doc.body);
      const call = async () => {
        const res = await request(`${service.baseUrl}/quickjob`, { method: 'POST', headers: { 'X-API-Key': api_key, 'Content-Type': 'application/json' }, body });
        if (res.status !== 200) throw new Error(`quickjob ${res.status}: ${res.body.toString()}`);
        if (doc.name.includes('Markdown')) markdownPages = Number(res.headers['x-pdf-pages']);
      };
      const bare = () => bareRender(warmBrowser, doc.html);
      for (const c of [1, 8]) {
        await drive('warmup', c, 16, call);
        await drive('warmup', c, 8, bare);
        const [measured, warm] = await driveInterleaved(c, n(c), rounds, [
          { label: `service ${doc.name}`, task: call },
          { label: `warm ${doc.name}`, task: bare },
        ]);
        rows.push({ doc: doc.name, concurrency: c, service: measured, warm, launch: null });
      }
    }
  } finally {
    await warmBrowser.close();
    await service.stop();
  }

  for (const row of rows) {
    const html = docs.find((d) => d.name === row.doc)!.html;
    row.launch = await drive(`launch ${row.doc}`, row.concurrency, opts.quick ? 4 : row.concurrency === 1 ? 12 : 24, async () => {
      const b = await launchBaselineBrowser();
      try {
        await bareRender(b, html);
      } finally {
        await b.close();
      }
    });
  }
  return { rows, markdownPages };
}

export function formatQuickjob(result: QuickjobBenchResult): string {
  const header = ['document', 'conc', 'service p50 ms', 'p95 ms', 'PDFs/s', 'warm p50 ms', 'warm PDFs/s', 'launch p50 ms', 'launch PDFs/s', 'p50 vs warm', 'PDFs/s vs warm', 'PDFs/s vs launch'];
  const lines = result.rows.map((r) => [
    r.doc,
    r.concurrency,
    r.service.p50,
    r.service.p95,
    r.service.perSecond,
    r.warm.p50,
    r.warm.perSecond,
    r.launch?.p50 ?? NaN,
    r.launch?.perSecond ?? NaN,
    `${(r.service.p50 / r.warm.p50).toFixed(2)}x`,
    `${(r.service.perSecond / r.warm.perSecond).toFixed(2)}x`,
    r.launch ? `${(r.service.perSecond / r.launch.perSecond).toFixed(2)}x` : '-',
  ]);
  const html1 = result.rows.find((r) => r.doc === '1-page HTML' && r.concurrency === 1)!;
  const html8 = result.rows.find((r) => r.doc === '1-page HTML' && r.concurrency === 8)!;
  const targets = [
    `target p50 <= 1.5x warm baseline (1-page HTML, c=1): ${(html1.service.p50 / html1.warm.p50).toFixed(2)}x ${html1.service.p50 <= 1.5 * html1.warm.p50 ? 'MET' : 'MISSED'}`,
    `target >= 25 PDFs/s (1-page HTML, c=8): ${html8.service.perSecond.toFixed(1)} ${html8.service.perSecond >= 25 ? 'MET' : 'MISSED'}`,
    `Markdown document pages: ${result.markdownPages}`,
  ];
  return `${table([header, ...lines])}\n${targets.join('\n')}`;
}
