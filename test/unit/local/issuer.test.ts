import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { LOCAL_CLIENT_ID, LOCAL_ISSUER, loadOrCreateIssuer } from '../../../local/issuer';

describe('local issuer', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'issuer-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('publishes only the public key, keeps the private one readable by its owner only, and reuses it after a restart', async () => {
    const issuer = await loadOrCreateIssuer(dir);
    const [key] = issuer.jwks.keys;
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
    expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
    expect(JSON.parse(readFileSync(issuer.jwksFile, 'utf8'))).toEqual(issuer.jwks);
    expect(statSync(path.join(dir, 'signing-key.json')).mode & 0o777).toBe(0o600);
    const token = await issuer.mintIdToken({ sub: 'acc-1', email: 'a@example.com' });
    const again = await loadOrCreateIssuer(dir);
    expect(again.jwks).toEqual(issuer.jwks);
    await expect(jwtVerify(token, createLocalJWKSet(again.jwks))).resolves.toBeDefined();
  });

  it('mints ID tokens shaped like Cognito\'s, for an hour unless told', async () => {
    const issuer = await loadOrCreateIssuer(dir);
    const { payload, protectedHeader } = await jwtVerify(await issuer.mintIdToken({ sub: 'acc-1', email: 'a@example.com' }), createLocalJWKSet(issuer.jwks), { issuer: LOCAL_ISSUER, audience: LOCAL_CLIENT_ID });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: issuer.jwks.keys[0].kid });
    expect(payload).toMatchObject({ sub: 'acc-1', email: 'a@example.com', email_verified: true, token_use: 'id', 'cognito:username': 'acc-1' });
    expect(payload.exp! - payload.iat!).toBe(3600);
    const short = await jwtVerify(await issuer.mintIdToken({ sub: 'acc-1', email: 'a@example.com' }, 60), createLocalJWKSet(issuer.jwks));
    expect(short.payload.exp! - short.payload.iat!).toBe(60);
  });
});
