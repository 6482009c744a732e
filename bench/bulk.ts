/**
 * Bulk benchmark: 200 one-page HTML invoices sharing one stylesheet and one image, as a ZIP uploaded through
 * POST /bulkjob/upload-url → POST /bulkjob → poll GET /jobs/{id} → GET /jobs/{id}/download → the output ZIP
 * fetched, through the local gateway of the service started exactly as `npm start`. Beside it, the quick-job
 * warm baseline measured in the same run on the same machine: a bare puppeteer script with one warm browser
 * (new context + setContent + pdf per document, 8 at once) printing the same 200 documents with the stylesheet
 * and image inlined (setContent has no origin to resolve them from).
 */
import { ZipFile } from 'yazl';
import { png } from '../test/support/images';
import { type Measurement, bareRender, drive, launchBaselineBrowser, localAccount, startService, table } from './lib';

const FILES = 200;
export const BULK_TARGET_FILES_PER_SECOND = 15;

const CSS = `body{font-family:sans-serif;margin:32px;color:#223}header{display:flex;align-items:center;gap:16px;border-bottom:2px solid #234}
header img{width:64px;height:64px}h1{font-size:22px;margin:0}table{border-collapse:collapse;width:100%;margin-top:18px}
td,th{border:1px solid #ccc;padding:6px;text-align:left}tfoot td{font-weight:bold}`;

/** A small real PNG logo (64×64). */
const logoPng = () => png(64, 64, [40, 80, 160]);

function invoice(n: number, head: string, logo: string): string {
  const lines = Array.from({ length: 6 }, (_, i) => `<tr><td>Service line ${i + 1}</td><td>${i + 1}</td><td>${((n % 7) + i + 1) * 12.5} EUR</td></tr>`).join('');
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Invoice ${1000 + n}</title>${head}</head><body>
<header><img src="${logo}" alt="logo"><h1>Invoice ${1000 + n}</h1></header><p>Billed to: Customer ${n}, Hauptstraße ${n}, Berlin</p>
<table><thead><tr><th>Item</th><th>Qty</th><th>Price</th></tr></thead><tbody>${lines}</tbody><tfoot><tr><td colspan="3">Total due within 30 days</td></tr></tfoot></table></body></html>`;
}

function zipOf(entries: [string, Buffer][]): Promise<Buffer> {
  const zip = new ZipFile();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
  for (const [name, data] of entries) zip.addBuffer(data, name);
  zip.end();
  return done;
}

export interface BulkRun {
  wallSeconds: number;
  filesPerSecond: number;
  /** Submission accepted → job finished (the service's own part, without upload and download). */
  jobSeconds: number;
  status: string;
  successCount: number;
  outputBytes: number;
}

export interface BulkBenchResult {
  files: number;
  zipBytes: number;
  runs: BulkRun[];
  /** The run reported (the median by wall time). */
  median: BulkRun;
  warm: Measurement;
}

async function bulkRun(baseUrl: string, apiKey: string, zip: Buffer): Promise<BulkRun> {
  const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/json' };
  const started = performance.now();
  const up = await (await fetch(`${baseUrl}/bulkjob/upload-url`, { method: 'POST', headers, body: JSON.stringify({ content_length_bytes: zip.length }) })).json();
  const put = await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(zip) });
  if (put.status !== 200) throw new Error(`upload ${put.status}`);
  const res = await fetch(`${baseUrl}/bulkjob`, { method: 'POST', headers, body: JSON.stringify({ s3_key: up.s3_key, bundle_type: 'html' }) });
  if (res.status !== 202) throw new Error(`bulkjob ${res.status}: ${await res.text()}`);
  const { job_id } = await res.json();
  const accepted = performance.now();
  let job: Record<string, unknown>;
  for (;;) {
    job = await (await fetch(`${baseUrl}/jobs/${job_id}`, { headers })).json();
    if (job.status !== 'queued' && job.status !== 'processing') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const finished = performance.now();
  const link = await (await fetch(`${baseUrl}/jobs/${job_id}/download`, { headers })).json();
  const output = Buffer.from(await (await fetch(link.download_url)).arrayBuffer());
  const wall = (performance.now() - started) / 1000;
  return {
    wallSeconds: wall,
    filesPerSecond: FILES / wall,
    jobSeconds: (finished - accepted) / 1000,
    status: String(job.status),
    successCount: Number(job.success_count),
    outputBytes: output.length,
  };
}

export async function benchBulk(opts: { quick?: boolean } = {}): Promise<BulkBenchResult> {
  const logo = logoPng();
  const bundleHead = '<link rel="stylesheet" href="assets/site.css">';
  const zip = await zipOf([
    ['assets/site.css', Buffer.from(CSS)],
    ['assets/logo.png', logo],
    ...Array.from({ length: FILES }, (_, i) => [`invoices/invoice-${String(i + 1).padStart(3, '0')}.html`, Buffer.from(invoice(i + 1, bundleHead.replace('assets/', '../assets/'), '../assets/logo.png'))] as [string, Buffer]),
  ]);

  // Baseline first, with the service not running: the same documents, self-contained.
  const inlined = Array.from({ length: FILES }, (_, i) => invoice(i + 1, `<style>${CSS}</style>`, `data:image/png;base64,${logo.toString('base64')}`));
  const browser = await launchBaselineBrowser();
  const bare = (html: string) => bareRender(browser, html);
  await drive('warmup', 8, 16, (i) => bare(inlined[i]));
  const warm = await drive('warm baseline', 8, FILES, (i) => bare(inlined[i]));
  await browser.close();

  const service = await startService();
  const runs: BulkRun[] = [];
  try {
    const { api_key } = await localAccount(service.baseUrl);
    // One warm-up job (browser launch, first contexts), then the measured runs.
    await bulkRun(service.baseUrl, api_key, await zipOf([['a.html', Buffer.from('<p>warm</p>')]]));
    for (let i = 0; i < (opts.quick ? 1 : 3); i++) {
      const run = await bulkRun(service.baseUrl, api_key, zip);
      if (run.status !== 'completed' || run.successCount !== FILES) throw new Error(`bulk run ended ${run.status} with ${run.successCount} PDFs`);
      runs.push(run);
    }
  } finally {
    await service.stop();
  }
  const sorted = [...runs].sort((a, b) => a.wallSeconds - b.wallSeconds);
  return { files: FILES, zipBytes: zip.length, runs, median: sorted[Math.floor(sorted.length / 2)], warm };
}

export function formatBulk(r: BulkBenchResult): string {
  const header = ['run', 'files', 'wall s (ZIP in → ZIP out)', 'files/s', 'job s (accepted → finished)', 'output ZIP KB', 'warm baseline PDFs/s (c=8)', 'files/s vs warm'];
  const rows = r.runs.map((run, i) => [
    `#${i + 1}${run === r.median ? ' (median)' : ''}`,
    r.files,
    run.wallSeconds,
    run.filesPerSecond,
    run.jobSeconds,
    Math.round(run.outputBytes / 1024),
    r.warm.perSecond,
    `${(run.filesPerSecond / r.warm.perSecond).toFixed(2)}x`,
  ]);
  const met = r.median.filesPerSecond >= BULK_TARGET_FILES_PER_SECOND;
  return `${table([header, ...rows])}\ninput ZIP ${Math.round(r.zipBytes / 1024)} KB; target >= ${BULK_TARGET_FILES_PER_SECOND} files/s: ${r.median.filesPerSecond.toFixed(1)} ${met ? 'MET' : 'MISSED'}`;
}
