import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * @sparticuz/chromium unpacks its binary, fonts and GL libraries into the temp directory and skips each part that
 * already exists, complete or not. Two processes starting at once on one machine (`npm start` beside the tests or the
 * benchmark, two test workers) raced: the second found the binary half-written and launched it, failing its first
 * documents; a process killed mid-unpack left a broken Chromium for every later one. So one process at a time unpacks,
 * under a lock file in the temp directory, and a marker written after the last byte says the unpack is complete (and
 * which release it is, so an upgraded package is unpacked again rather than its old binary launched).
 */

/** What the package unpacks into the temp directory (al2023 only on Amazon Linux 2023). */
const UNPACKED = ['chromium', 'fonts', 'libEGL.so', 'libGLESv2.so', 'libvk_swiftshader.so', 'libvulkan.so.1', 'vk_swiftshader_icd.json', 'al2023'];

/** A lock whose holder wrote no pid yet is taken to be stale only after this long. */
const UNNAMED_LOCK_MS = 10_000;

export interface UnpackOptions {
  /** The unpacking itself (the package's executablePath); resolves to the binary's path. */
  unpack: () => Promise<string>;
  /** The package release; a complete unpack of another release is unpacked again. */
  release: string;
  /** How long to wait for another process's unpack before giving up. Default 3 minutes. */
  waitMs?: number;
  pollMs?: number;
  /** Where the package unpacks: the temp directory (tests use their own). */
  dir?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function markedRelease(marker: string): string | null {
  try {
    return readFileSync(marker, 'utf8');
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the lock's holder is gone (its pid is not running, or it never wrote one and that was a while ago). */
function stale(lock: string): boolean {
  try {
    const pid = Number.parseInt(readFileSync(lock, 'utf8'), 10);
    if (Number.isInteger(pid) && pid > 0) return !alive(pid);
    return Date.now() - statSync(lock).mtimeMs > UNNAMED_LOCK_MS;
  } catch {
    return false; // released meanwhile: try again
  }
}

function tryLock(lock: string): boolean {
  try {
    const fd = openSync(lock, 'wx');
    try {
      writeSync(fd, String(process.pid));
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Best effort: a part another user unpacked into a shared temp directory stays (the package then keeps it, as before). */
function removeIfAllowed(path: string) {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    /* not ours to remove */
  }
}

/** The binary's path once a complete unpack of `release` is in the temp directory, unpacking it here if needed. */
export async function unpackedChromium(options: UnpackOptions): Promise<string> {
  const dir = options.dir ?? tmpdir();
  const [binary, marker, lock] = [join(dir, 'chromium'), join(dir, 'chromium.unpacked'), join(dir, 'chromium.unpacking')];
  const waitMs = options.waitMs ?? 180_000;
  const started = Date.now();
  for (;;) {
    if (markedRelease(marker) === options.release && existsSync(binary)) return binary;
    if (tryLock(lock)) {
      try {
        // Checked again under the lock: another process may have finished between the look and the lock.
        if (markedRelease(marker) === options.release && existsSync(binary)) return binary;
        // Whatever is there is unfinished or another release: the package would keep any part that exists.
        rmSync(marker, { force: true });
        for (const name of UNPACKED) removeIfAllowed(join(dir, name));
        const path = await options.unpack();
        writeFileSync(marker, options.release);
        return path;
      } finally {
        rmSync(lock, { force: true });
      }
    }
    // A holder that died mid-unpack leaves its lock behind: it is removed, and the next look takes the lock.
    if (stale(lock)) {
      try {
        unlinkSync(lock);
      } catch {
        /* removed by another waiter */
      }
      continue;
    }
    if (Date.now() - started > waitMs) {
      throw new Error(`Chromium is still being unpacked by another process after ${Math.round(waitMs / 1000)} s (lock ${lock}). If no other process is starting, remove the lock and retry.`);
    }
    await sleep(options.pollMs ?? 100);
  }
}

/** The release of the installed @sparticuz/chromium package ("unknown" when its package.json cannot be read). */
export function installedChromiumRelease(): string {
  try {
    // The entry point is build/cjs/index.cjs; the package's own package.json is not exported.
    const entry = require.resolve('@sparticuz/chromium');
    for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@sparticuz/chromium') return pkg.version ?? 'unknown';
    }
  } catch {
    /* bundled without its package.json */
  }
  return 'unknown';
}
