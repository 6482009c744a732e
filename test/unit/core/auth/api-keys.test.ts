import { crc32 } from 'node:zlib';
import { API_KEY_PREFIX, generateApiKey, hashApiKey, isWellFormedApiKey, lookupPrefix } from '../../../../functions/core/auth/api-keys';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('API keys', () => {
  it('are pk_-prefixed, random, checksummed and stored only as a hash', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.plaintext).toMatch(/^pk_[0-9A-Za-z]{38}$/);
    expect(a.plaintext).not.toBe(b.plaintext);
    expect(a.prefix).toBe(lookupPrefix(a.plaintext));
    expect(a.prefix.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(a.hash).toBe(hashApiKey(a.plaintext));
    expect(a.hash).not.toContain(a.plaintext.slice(3));
    expect(isWellFormedApiKey(a.plaintext)).toBe(true);
  });

  it('rejects a key with a typo through its checksum', () => {
    const { plaintext } = generateApiKey();
    const flipped = plaintext.slice(0, 10) + (plaintext[10] === 'a' ? 'b' : 'a') + plaintext.slice(11);
    expect(isWellFormedApiKey(flipped)).toBe(false);
    expect(isWellFormedApiKey(`${plaintext}x`)).toBe(false);
    expect(isWellFormedApiKey('pk_short')).toBe(false);
  });

  // Keys already handed out are stored by prefix and checked by checksum: either changing would lock every customer out.
  it('keeps the format of keys already issued: the same lookup prefix (pk_ + 8) and the same checksum', () => {
    const issued = 'pk_YLyYh6NsEP9WepylvSOAB16znhNx4Hvn1wzXa8';
    expect(isWellFormedApiKey(issued)).toBe(true);
    expect(lookupPrefix(issued)).toBe('pk_YLyYh6Ns');
    expect(hashApiKey(issued)).toBe('f4704945e57b03fce3312153ab757e11e9e9fb19722552a865c8e7a7867c4df2');
  });

  it('checksums with CRC32 of the random part in 6 big-endian base62 digits, as secret scanners recompute it', () => {
    const { plaintext, prefix } = generateApiKey();
    expect(prefix).toHaveLength(API_KEY_PREFIX.length + 8);
    const random = plaintext.slice(3, 35);
    let n = crc32(random);
    let digits = '';
    for (let i = 0; i < 6; i++, n = Math.floor(n / 62)) digits = BASE62[n % 62] + digits;
    expect(plaintext.slice(35)).toBe(digits);
  });

  it('draws characters without modulo bias: random bytes of 248 and above are skipped, not folded onto 0-7', () => {
    // 248..255 would map to 0..7 a second time if kept; the key must come from the bytes after them.
    const bytes = Buffer.from([248, 249, 250, 251, 252, 253, 254, 255, ...Array.from({ length: 56 }, (_, i) => i + 10)]);
    jest.isolateModules(() => {
      jest.doMock('node:crypto', () => ({ ...jest.requireActual('node:crypto'), randomBytes: () => Buffer.from(bytes) }));
      const fresh = require('../../../../functions/core/auth/api-keys') as typeof import('../../../../functions/core/auth/api-keys');
      expect(fresh.generateApiKey().plaintext.slice(3, 35)).toBe(Array.from({ length: 32 }, (_, i) => BASE62[(i + 10) % 62]).join(''));
    });
    jest.dontMock('node:crypto');
  });
});
