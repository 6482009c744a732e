import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

/**
 * A fresh directory in the system temp dir, removed after the test file (runs left CDK outdirs, font directories and
 * the like behind). It may be made anywhere, in a test or hook too. It goes in an afterAll declared when this module
 * is imported, so before the file's own top-level afterAll hooks run: a directory that something stopped there still
 * uses (a stack's DATA_DIR) is removed by that hook instead.
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
