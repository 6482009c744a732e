import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API keys look like `pk_<32 random base62><6 checksum base62>`: a fixed prefix and a CRC32 checksum let
 * secret scanners recognise a leaked key without a database, and let us refuse typos before any lookup.
 * Only a SHA-256 hash is stored (the key has ~190 bits of entropy, so a slow hash adds nothing);
 * lookup is by the first characters after `pk_`, which are also shown in listings.
 */
export const API_KEY_PREFIX = 'pk_';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const LOOKUP_LENGTH = 8;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62]; // 248 = 4 * 62: no modulo bias
      if (out.length === length) break;
    }
  }
  return out;
}

function checksum(random: string): string {
  let n = crc32(random);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export interface NewApiKey {
  plaintext: string;
  /** Shown in listings and used for lookup, e.g. `pk_Ab3dE9xQ`. */
  prefix: string;
  hash: string;
}

export function generateApiKey(): NewApiKey {
  const random = randomBase62(RANDOM_LENGTH);
  const plaintext = `${API_KEY_PREFIX}${random}${checksum(random)}`;
  return { plaintext, prefix: lookupPrefix(plaintext), hash: hashApiKey(plaintext) };
}

/** True when the text has the shape and a valid checksum; says nothing about whether the key exists. */
export function isWellFormedApiKey(text: string): boolean {
  if (!KEY_SHAPE.test(text)) return false;
  const body = text.slice(API_KEY_PREFIX.length);
  return checksum(body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH);
}

export function lookupPrefix(plaintext: string): string {
  return plaintext.slice(0, API_KEY_PREFIX.length + LOOKUP_LENGTH);
}

export function hashApiKey(plaintext: string): string {
  return createHash('sha256').update(plaintext, 'utf8').digest('hex');
}

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
