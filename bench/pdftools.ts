/**
 * PDF tools benchmark: merge 200 two-page PDFs and split a 400-page PDF into single pages, with the
 * service's engine (functions/core/pdf) beside qpdf doing the same in the same run on the same machine.
 * Both start from files on disk and end with files on disk. Inputs are rendered by Chromium (like the
 * service's own PDFs: embedded font subsets, tagged structure, links), once per run.
 *
 * qpdf is not a dependency of the service; the benchmark uses Debian's if present (`apt-get install -y qpdf`)
 * and prints a note instead of its column otherwise.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseFilenamePattern } from '../functions/core/pdf/filenames';
import { JOB_LIMITS } from '../functions/core/pdf/limits';
import { openInput, planMerge, planSplit, produce } from '../functions/core/pdf/operations';
import { launchBaselineBrowser, table } from './lib';

const run = promisify(execFile);

export interface PdftoolsRow {
  operation: string;
  oursMedianMs: number;
  oursFirstMs: number;
  qpdfMedianMs: number | null;
  ratio: number | null;
  target: number;
  met: boolean | null;
  oursBytes: number;
  qpdfBytes: number | null;
  outputs: number;
}

export interface PdftoolsBenchResult {
  qpdf: string | null;
  runs: number;
  inputs: { mergeFiles: number; mergeBytes: number; splitPages: number; splitBytes: number };
  rows: PdftoolsRow[];
}

function invoice(label: string, pages: number): string {
  const page = (i: number) => `<div class="p"><h1>${label} — page ${i + 1}</h1>
<p>Billed to: Example GmbH, Hauptstraße 1, 10115 Berlin. <a href="https://example.com/${encodeURIComponent(label)}/${i}">Online copy</a></p>
<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>${Array.from({ length: 12 }, (_, j) => `<tr><td>Service line ${j + 1} for ${label}</td><td>${j + 1}</td><td>${((j + 1) * 12.5).toFixed(2)} EUR</td></tr>`).join('')}</table>
<p><i>Total due within 30 days.</i> <b>Thank you for your business.</b></p></div>`;
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${label}</title><style>body{font-family:sans-serif;margin:40px}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:6px}h1{color:#234}.p{page-break-after:always}</style></head><body>${Array.from({ length: pages }, (_, i) => page(i)).join('')}</body></html>`;
}

async function renderInputs(dir: string, mergeFiles: number, splitPages: number) {
  const browser = await launchBaselineBrowser();
  try {
    const page = await browser.newPage();
    mkdirSync(path.join(dir, 'merge'), { recursive: true });
    for (let i = 0; i < mergeFiles; i++) {
      await page.setContent(invoice(`Invoice ${1000 + i}`, 2));
      writeFileSync(path.join(dir, 'merge', `in-${String(i).padStart(3, '0')}.pdf`), await page.pdf({ format: 'A4', printBackground: true }));
    }
    await page.setContent(invoice('Annual report', splitPages));
    writeFileSync(path.join(dir, 'report.pdf'), await page.pdf({ format: 'A4', printBackground: true }));
  } finally {
    await browser.close();
  }
}

function qpdfVersion(): string | null {
  try {
    return execFileSync('qpdf', ['--version'], { encoding: 'utf8' }).split('\n')[0];
  } catch {
    return null;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function dirBytes(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
}

/** Ours: read the inputs from disk, merge, write the result. */
async function oursMerge(inputDir: string, outFile: string): Promise<number> {
  const files = readdirSync(inputDir).sort();
  const inputs = files.map((f, index) => ({ bytes: readFileSync(path.join(inputDir, f)), filename: f, index, pages: null }));
  const plan = planMerge({ inputs }, inputs.map((i) => openInput(i)), JOB_LIMITS);
  const { files: out } = await produce(plan, { limits: JOB_LIMITS, onFile: async (f) => writeFileSync(outFile, f.bytes) });
  return out.length;
}

/** Ours: read the input, split each page, write every file. */
async function oursSplit(inputFile: string, outDir: string): Promise<number> {
  const input = { bytes: readFileSync(inputFile), filename: 'report.pdf', index: 0 };
  const plan = planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(input), JOB_LIMITS);
  const { files } = await produce(plan, { limits: JOB_LIMITS, onFile: async (f) => writeFileSync(path.join(outDir, f.name), f.bytes) });
  return files.length;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export async function benchPdftools(opts: { quick?: boolean } = {}): Promise<PdftoolsBenchResult> {
  const runs = opts.quick ? 3 : 7;
  const mergeFiles = 200;
  const splitPages = 400;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-bench-pdftools-'));
  const qpdf = qpdfVersion();
  try {
    process.stdout.write(`pdftools: rendering ${mergeFiles} two-page PDFs and a ${splitPages}-page PDF with Chromium...\n`);
    await renderInputs(dir, mergeFiles, splitPages);
    const mergeDir = path.join(dir, 'merge');
    const report = path.join(dir, 'report.pdf');
    const inputs = { mergeFiles, mergeBytes: dirBytes(mergeDir), splitPages, splitBytes: statSync(report).size };
    const mergeInputs = readdirSync(mergeDir).sort().map((f) => path.join(mergeDir, f));

    const fresh = (name: string) => {
      const p = path.join(dir, name);
      rmSync(p, { recursive: true, force: true });
      mkdirSync(p, { recursive: true });
      return p;
    };

    // Alternate ours and qpdf run by run, so machine noise hits both alike.
    const ours = { merge: [] as number[], split: [] as number[] };
    const theirs = { merge: [] as number[], split: [] as number[] };
    let oursSplitBytes = 0;
    let qpdfSplitBytes = 0;
    let splitOutputs = 0;
    for (let i = 0; i < runs; i++) {
      const oursOut = fresh('ours-merge');
      ours.merge.push(await timed(() => oursMerge(mergeDir, path.join(oursOut, 'merged.pdf'))));
      const oursSplitDir = fresh('ours-split');
      ours.split.push(await timed(async () => (splitOutputs = await oursSplit(report, oursSplitDir))));
      oursSplitBytes = dirBytes(oursSplitDir);
      if (qpdf) {
        const qOut = fresh('qpdf-merge');
        theirs.merge.push(await timed(() => run('qpdf', ['--empty', '--pages', ...mergeInputs, '--', path.join(qOut, 'merged.pdf')])));
        const qSplitDir = fresh('qpdf-split');
        theirs.split.push(await timed(() => run('qpdf', ['--split-pages', report, path.join(qSplitDir, 'page-%d.pdf')])));
        qpdfSplitBytes = dirBytes(qSplitDir);
      }
    }
    const oursMergeBytes = statSync(path.join(dir, 'ours-merge', 'merged.pdf')).size;
    const qpdfMergeBytes = qpdf ? statSync(path.join(dir, 'qpdf-merge', 'merged.pdf')).size : null;

    const row = (operation: string, o: number[], q: number[], target: number, oursBytes: number, qpdfBytes: number | null, outputs: number): PdftoolsRow => {
      const qm = q.length ? median(q) : null;
      const ratio = qm ? median(o) / qm : null;
      return {
        operation,
        oursMedianMs: median(o),
        oursFirstMs: o[0],
        qpdfMedianMs: qm,
        ratio,
        target,
        met: ratio === null ? null : ratio <= target && (qpdfBytes === null || oursBytes <= qpdfBytes),
        oursBytes,
        qpdfBytes,
        outputs,
      };
    };
    return {
      qpdf,
      runs,
      inputs,
      rows: [
        row(`merge ${mergeFiles} × 2 pages`, ours.merge, theirs.merge, 1.5, oursMergeBytes, qpdfMergeBytes, 1),
        row(`split ${splitPages} pages each_page`, ours.split, theirs.split, 2, oursSplitBytes, qpdf ? qpdfSplitBytes : null, splitOutputs),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatPdftools(r: PdftoolsBenchResult): string {
  const kb = (n: number | null) => (n === null ? '—' : `${(n / 1024).toFixed(0)} KB`);
  const lines = [
    `inputs: ${r.inputs.mergeFiles} files, ${kb(r.inputs.mergeBytes)} to merge; ${r.inputs.splitPages} pages, ${kb(r.inputs.splitBytes)} to split; median of ${r.runs} runs`,
    r.qpdf ? `baseline: ${r.qpdf}` : 'baseline: qpdf is not installed (apt-get install -y qpdf) — its columns are empty and no ratio is computed',
    '',
    table([
      ['operation', 'ours p50 ms', 'ours 1st run ms', 'qpdf p50 ms', 'ours/qpdf', 'target', 'ours output', 'qpdf output', 'met'],
      ...r.rows.map((x) => [
        x.operation,
        x.oursMedianMs,
        x.oursFirstMs,
        x.qpdfMedianMs ?? '—',
        x.ratio === null ? '—' : `${x.ratio.toFixed(2)}x`,
        `≤ ${x.target}x, ≤ size`,
        `${kb(x.oursBytes)}${x.outputs > 1 ? ` (${x.outputs} files)` : ''}`,
        kb(x.qpdfBytes),
        x.met === null ? '—' : x.met ? 'yes' : 'NO',
      ]),
    ]),
  ];
  return lines.join('\n');
}
