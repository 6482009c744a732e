import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedChromiumRelease, unpackedChromium } from '../../../../functions/adapters/chromium/unpack';

const BINARY = 'x'.repeat(4096);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'unpack-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in for the package's executablePath: writes the binary in pieces, taking `ms`, and the fonts. */
function fakeUnpack(ms = 0) {
  const calls: number[] = [];
  const unpack = async () => {
    calls.push(Date.now());
    const binary = join(dir, 'chromium');
    writeFileSync(binary, BINARY.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, ms));
    writeFileSync(binary, BINARY);
    mkdirSync(join(dir, 'fonts'), { recursive: true });
    writeFileSync(join(dir, 'fonts', 'a.ttf'), 'font');
    return binary;
  };
  return { calls, unpack };
}

/** A pid that is certainly not running: a child that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('unpackedChromium', () => {
  it('unpacks once when callers ask at the same time, and none of them gets the binary before it is complete', async () => {
    const { calls, unpack } = fakeUnpack(300);
    const sizes = await Promise.all([1, 2, 3].map(() => unpackedChromium({ unpack, release: '1.0', dir, pollMs: 10 }).then((path) => statSync(path).size)));
    expect(calls).toHaveLength(1);
    expect(sizes).toEqual([BINARY.length, BINARY.length, BINARY.length]);
    expect(readFileSync(join(dir, 'chromium.unpacked'), 'utf8')).toBe('1.0');
    expect(existsSync(join(dir, 'chromium.unpacking'))).toBe(false);
  });

  it('uses a complete unpack of the same release without unpacking again', async () => {
    const first = fakeUnpack();
    await unpackedChromium({ unpack: first.unpack, release: '1.0', dir });
    const second = fakeUnpack();
    expect(await unpackedChromium({ unpack: second.unpack, release: '1.0', dir })).toBe(join(dir, 'chromium'));
    expect(second.calls).toHaveLength(0);
  });

  it('unpacks again over a half-written unpack (no marker) and over another release, removing what the package would keep', async () => {
    writeFileSync(join(dir, 'chromium'), 'half');
    mkdirSync(join(dir, 'fonts'));
    writeFileSync(join(dir, 'fonts', 'stale.ttf'), 'old');
    const { calls, unpack } = fakeUnpack();
    await unpackedChromium({ unpack, release: '1.0', dir });
    expect(calls).toHaveLength(1);
    expect(readFileSync(join(dir, 'chromium'), 'utf8')).toBe(BINARY);
    expect(existsSync(join(dir, 'fonts', 'stale.ttf'))).toBe(false);

    const upgrade = fakeUnpack();
    await unpackedChromium({ unpack: upgrade.unpack, release: '2.0', dir });
    expect(upgrade.calls).toHaveLength(1);
    expect(readFileSync(join(dir, 'chromium.unpacked'), 'utf8')).toBe('2.0');
  });

  it('takes over the lock of a process that died mid-unpack', async () => {
    writeFileSync(join(dir, 'chromium.unpacking'), String(deadPid()));
    writeFileSync(join(dir, 'chromium'), 'half');
    const { calls, unpack } = fakeUnpack();
    expect(statSync(await unpackedChromium({ unpack, release: '1.0', dir, pollMs: 10 })).size).toBe(BINARY.length);
    expect(calls).toHaveLength(1);
    expect(existsSync(join(dir, 'chromium.unpacking'))).toBe(false);
  });

  it('waits for a live holder to finish, then uses its unpack', async () => {
    // This process holds the lock (a live pid), as another process unpacking would.
    writeFileSync(join(dir, 'chromium.unpacking'), String(process.pid));
    const { calls, unpack } = fakeUnpack();
    const waiting = unpackedChromium({ unpack, release: '1.0', dir, pollMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    writeFileSync(join(dir, 'chromium'), BINARY);
    writeFileSync(join(dir, 'chromium.unpacked'), '1.0');
    rmSync(join(dir, 'chromium.unpacking'));
    expect(await waiting).toBe(join(dir, 'chromium'));
    expect(calls).toHaveLength(0);
  });

  it('gives up on a holder that never finishes, naming the lock to remove', async () => {
    writeFileSync(join(dir, 'chromium.unpacking'), String(process.pid));
    const { unpack } = fakeUnpack();
    await expect(unpackedChromium({ unpack, release: '1.0', dir, waitMs: 50, pollMs: 10 })).rejects.toThrow(`lock ${join(dir, 'chromium.unpacking')}`);
  });

  it('leaves no lock behind when unpacking fails, so the next caller tries again', async () => {
    await expect(unpackedChromium({ unpack: () => Promise.reject(new Error('disk full')), release: '1.0', dir })).rejects.toThrow('disk full');
    expect(existsSync(join(dir, 'chromium.unpacking'))).toBe(false);
    expect(existsSync(join(dir, 'chromium.unpacked'))).toBe(false);
  });

  it("reads the installed package's release", () => {
    expect(installedChromiumRelease()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
