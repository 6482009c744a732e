import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** Replaces a file in one step: a process killed meanwhile leaves the old file or the new one, never a torn one. */
export function writeFileAtomic(file: string, data: string, options: { mode?: number } = {}): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data, options);
  renameSync(tmp, file);
}

/**
 * The JSON a state file holds, or `fallback` when there is none. A file that does not parse (torn by an older
 * version, edited by hand) is moved aside to `<file>.corrupt-<time>` and reported, so the service still starts.
 */
export function readJsonFile<T>(file: string, fallback: T, log?: (message: string) => void): T {
  if (!existsSync(file)) return fallback;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (err) {
    const aside = `${file}.corrupt-${Date.now()}`;
    renameSync(file, aside);
    log?.(`${file} could not be read (${(err as Error).message}); moved to ${aside} and started without it`);
    return fallback;
  }
}
