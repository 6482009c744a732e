import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from './files';

/**
 * A random secret kept under the data dir, so what it signs or seals survives a restart. Written in one step: a
 * process killed mid-write must not leave an empty key that the next start would use.
 */
export function loadOrCreateSecret(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileAtomic(file, secret, { mode: 0o600 });
  return secret;
}
