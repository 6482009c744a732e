import { SecretBox, newSigningSecret } from '../../../../functions/core/webhooks/secret-box';

describe('SecretBox (webhook secrets at rest)', () => {
  const box = new SecretBox('a-deployment-key-of-some-length');

  it('seals and opens, never storing the plaintext', () => {
    const secret = newSigningSecret();
    const sealed = box.seal(secret, 'wh_1');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.seal(secret, 'wh_1')).not.toBe(sealed);
    expect(box.open(sealed, 'wh_1')).toBe(secret);
  });

  it('refuses another webhook id, another key, or a changed byte', () => {
    const sealed = box.seal('whsec_x', 'wh_1');
    expect(() => box.open(sealed, 'wh_2')).toThrow();
    expect(() => new SecretBox('another-deployment-key-here').open(sealed, 'wh_1')).toThrow();
    const parts = sealed.split('.');
    const body = Buffer.from(parts[2], 'base64url');
    body[0] ^= 1;
    expect(() => box.open([parts[0], parts[1], body.toString('base64url'), parts[3]].join('.'), 'wh_1')).toThrow();
    expect(() => box.open('plain', 'wh_1')).toThrow();
    // Another format version (not authenticated by the tag) is not read as v1.
    expect(() => box.open(sealed.replace(/^v1\./, 'v2.'), 'wh_1')).toThrow('not a sealed webhook secret');
  });

  it('refuses a shortened tag (a 4-byte tag would be forged in about 2^32 tries, not 2^128)', () => {
    const [version, iv, body, tag] = box.seal('whsec_x', 'wh_1').split('.');
    for (const bytes of [4, 8, 12, 15]) {
      const short = Buffer.from(tag, 'base64url').subarray(0, bytes).toString('base64url');
      expect(() => box.open([version, iv, body, short].join('.'), 'wh_1')).toThrow();
    }
  });

  it('needs a real key', () => {
    expect(() => new SecretBox('')).toThrow();
    expect(() => new SecretBox('short')).toThrow();
    expect(() => new SecretBox('x'.repeat(15))).toThrow(/at least 16/);
    expect(() => new SecretBox('x'.repeat(16))).not.toThrow();
  });

  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSigningSecret()).not.toBe(a);
  });
});
