/**
 * `npm run bench [-- quickjob|pdftools|bulk] [-- --quick]`: benchmarks with baselines measured in the same run on the same
 * machine, printed as tables with ratios. Results are also written to bench/results/latest.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchQuickjob, formatQuickjob } from './quickjob';
import { benchPdftools, formatPdftools } from './pdftools';
import { benchBulk, formatBulk } from './bulk';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const BENCHMARKS = ['quickjob', 'pdftools', 'bulk'];

async function main() {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const only = args.filter((a) => !a.startsWith('--'));
  // A misspelt name would otherwise run nothing and look like a finished benchmark.
  const unknown = [...only.filter((a) => !BENCHMARKS.includes(a)), ...args.filter((a) => a.startsWith('--') && a !== '--quick')];
  if (unknown.length) {
    process.stderr.write(`Unknown argument ${unknown.join(', ')}. Usage: npm run bench [-- ${BENCHMARKS.join('|')}] [-- --quick]\n`);
    process.exit(2);
  }
  const want = (name: string) => only.length === 0 || only.includes(name);
  const results: Record<string, unknown> = { machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version }, at: new Date().toISOString() };

  if (want('quickjob')) {
    process.stdout.write('quickjob: measuring baselines and the service...\n');
    const r = await benchQuickjob({ quick });
    results.quickjob = r;
    process.stdout.write(`\n## quickjob\n${formatQuickjob(r)}\n`);
  }

  if (want('pdftools')) {
    const r = await benchPdftools({ quick });
    results.pdftools = r;
    process.stdout.write(`\n## pdftools\n${formatPdftools(r)}\n`);
  }

  if (want('bulk')) {
    process.stdout.write('bulk: measuring the warm baseline and the service...\n');
    const r = await benchBulk({ quick });
    results.bulk = r;
    process.stdout.write(`\n## bulk\n${formatBulk(r)}\n`);
  }

  const dir = path.join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  // Keep the latest figures of benchmarks not run this time.
  const file = path.join(dir, 'latest.json');
  let previous: Record<string, unknown> = {};
  try {
    previous = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    previous = {};
  }
  writeFileSync(file, JSON.stringify({ ...previous, ...results }, null, 2));
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
