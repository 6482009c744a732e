import { spawnSync } from 'node:child_process';
import path from 'node:path';

const repo = path.resolve(__dirname, '../../..');
const bench = (...args: string[]) => spawnSync(path.join(repo, 'node_modules/.bin/tsx'), [path.join(repo, 'bench/run.ts'), ...args], { cwd: repo, encoding: 'utf8' });

describe('npm run bench', () => {
  it.each([['a misspelt benchmark', 'quikjob'], ['an unknown option', '--fast']])('refuses %s with the usage, measuring nothing', (_what, arg) => {
    const run = bench(arg);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`Unknown argument ${arg}. Usage: npm run bench [-- quickjob|pdftools|bulk] [-- --quick]`);
    expect(run.stdout).toBe('');
  });
});
