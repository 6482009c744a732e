import { API_KEY_PREFIX, generateApiKey, hashApiKey, isWellFormedApiKey, lookupPrefix } from '../../../../functions/core/auth/api-keys';

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
});
