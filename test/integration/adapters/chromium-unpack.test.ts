import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TSX = join(__dirname, '../../../node_modules/.bin/tsx');
const CHILD = join(__dirname, '../../support/unpack-chromium.ts');

/** Runs the unpacking child with its own temp directory; resolves to what it printed. */
function unpackIn(dir: string): Promise<{ path: string; size: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [CHILD], { env: { ...process.env, TMPDIR: dir }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`unpacking child exited with ${code}`))));
  });
}

describe('unpacking the bundled Chromium', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'chromium-unpack-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('hands a second process starting during the first unpack the complete binary, not the half written so far', async () => {
    const first = unpackIn(dir);
    // The package alone handed the second process a third of the binary here: it saw the file and returned it.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const second = unpackIn(dir);
    const results = await Promise.all([first, second]);
    const complete = statSync(join(dir, 'chromium')).size;
    expect(complete).toBeGreaterThan(50 * 2 ** 20);
    expect(results).toEqual([
      { path: join(dir, 'chromium'), size: complete },
      { path: join(dir, 'chromium'), size: complete },
    ]);
  });
});
