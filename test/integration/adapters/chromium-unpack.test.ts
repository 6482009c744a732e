import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedChromiumRelease, unpackedChromium } from '../../../functions/adapters/chromium/unpack';

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
    const binary = join(dir, 'chromium');
    const first = unpackIn(dir);
    let firstEnded = false;
    void first.then(
      () => (firstEnded = true),
      () => (firstEnded = true),
    );
    // Under way: the first child holds the lock and has begun writing the binary.
    const underWay = () => existsSync(join(dir, 'chromium.unpacking')) && existsSync(binary);
    while (!underWay() && !firstEnded) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(underWay()).toBe(true);
    // The second process is this one (another pid). Its first look runs before unpackedChromium's first await, so it
    // sees what `sizeThen` records. Its `unpack` does what the package does on finding a binary: hands it over.
    const sizeThen = statSync(binary).size;
    let unpackedBySecond = 0;
    const second = unpackedChromium({
      dir,
      release: installedChromiumRelease(),
      unpack: async () => {
        unpackedBySecond++;
        return binary;
      },
    }).then((path) => ({ path, size: statSync(path).size }));
    // The package alone handed the second process a third of the binary here: it saw the file and returned it.
    const results = await Promise.all([first, second]);
    const complete = statSync(binary).size;
    expect(complete).toBeGreaterThan(50 * 2 ** 20);
    // The overlap happened: the second asked while the binary was only partly written.
    expect(sizeThen).toBeLessThan(complete);
    expect(results).toEqual([
      { path: binary, size: complete },
      { path: binary, size: complete },
    ]);
    expect(unpackedBySecond).toBe(0);
  });
});
