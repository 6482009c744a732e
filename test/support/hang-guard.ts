import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Runs `body` (CommonJS, where `load('functions/…/x.ts')` requires a module of the repo) in a fresh Node process and
 * returns what it printed, failing when it runs past `timeoutMs`. Catastrophic regex backtracking blocks the event loop
 * for minutes to hours, which jest's own timeout cannot interrupt in a synchronous test. The bound is a hang guard,
 * hundreds of times what these inputs take, not a speed measurement.
 */
export function runIsolated(body: string, timeoutMs = 30_000): unknown {
  const prelude = `const load = (p) => require(require('node:path').join(${JSON.stringify(ROOT)}, p));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', `${prelude}\n${body}`], { cwd: ROOT, timeout: timeoutMs, encoding: 'utf8' });
  return JSON.parse(out);
}
