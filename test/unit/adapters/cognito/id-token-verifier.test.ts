import { type JWK, SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';
import { CognitoIdTokenVerifier, ISSUED_AT_SKEW_SECONDS, MAX_ID_TOKEN_LIFETIME_SECONDS } from '../../../../functions/adapters/cognito/id-token-verifier';
import { TokenExpiredError } from '../../../../functions/core/auth/ports';

const POOL = 'us-east-1_TestPool';
const CLIENT = 'test-client';
const ISSUER = `https://cognito-idp.us-east-1.amazonaws.com/${POOL}`;

let privateJwk: JWK;
let verifier: CognitoIdTokenVerifier;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  privateJwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  verifier = new CognitoIdTokenVerifier({ userPoolId: POOL, clientId: CLIENT, localJwks: { keys: [publicJwk as never] } });
});

const now = () => Math.floor(Date.now() / 1000);

/** A token signed with the pool's key; `claims` may unset a standard claim with undefined. */
async function token(claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
  const payload = { sub: 'acct-1', token_use: 'id', iss: ISSUER, aud: CLIENT, iat: now() - 10, exp: now() + 600, ...claims };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete (payload as Record<string, unknown>)[k];
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'k1', ...header }).sign(await importJWK(privateJwk, 'RS256'));
}

describe('CognitoIdTokenVerifier', () => {
  it('accepts a token shaped as Cognito issues it', async () => {
    await expect(verifier.verify(await token({ email: 'a@example.com' }))).resolves.toEqual({ sub: 'acct-1', email: 'a@example.com' });
    await expect(verifier.verify(await token({ iat: now() + ISSUED_AT_SKEW_SECONDS - 5 }))).resolves.toMatchObject({ sub: 'acct-1' });
    await expect(verifier.verify(await token({ iat: now() - 100, exp: now() - 100 + MAX_ID_TOKEN_LIFETIME_SECONDS }))).resolves.toMatchObject({ sub: 'acct-1' });
  });

  // A Cognito access token of the same pool and client carries client_id instead of aud: it must still be refused.
  it('refuses an access token of the same pool and client, a token for another client and one from another pool', async () => {
    await expect(verifier.verify(await token({ token_use: 'access', aud: undefined, client_id: CLIENT }))).rejects.toThrow(/[Tt]oken use/);
    await expect(verifier.verify(await token({ token_use: 'access' }))).rejects.toThrow();
    await expect(verifier.verify(await token({ aud: 'other-client' }))).rejects.toThrow(/[Aa]udience|[Cc]lient/);
    await expect(verifier.verify(await token({ iss: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other' }))).rejects.toThrow(/[Ii]ssuer/);
  });

  it('says when a token has expired', async () => {
    await expect(verifier.verify(await token({ iat: now() - 700, exp: now() - 100 }))).rejects.toBeInstanceOf(TokenExpiredError);
  });

  it('refuses a token without an expiry or an issue time (the library checks exp only when it is there)', async () => {
    await expect(verifier.verify(await token({ exp: undefined }))).rejects.toThrow(/exp is required/);
    await expect(verifier.verify(await token({ iat: undefined }))).rejects.toThrow(/iat is required/);
    await expect(verifier.verify(await token({ exp: String(now() + 600) }))).rejects.toThrow();
  });

  it('refuses a token issued in the future or living longer than Cognito issues', async () => {
    await expect(verifier.verify(await token({ iat: now() + ISSUED_AT_SKEW_SECONDS + 60, exp: now() + 3600 }))).rejects.toThrow(/future/);
    // The allowance is for clock drift, a few minutes: a token dated ten minutes ahead was not issued by a clock we trust.
    await expect(verifier.verify(await token({ iat: now() + 600, exp: now() + 3600 }))).rejects.toThrow(/future/);
    await expect(verifier.verify(await token({ iat: now() - 10, exp: now() - 10 + MAX_ID_TOKEN_LIFETIME_SECONDS + 1 }))).rejects.toThrow(/lifetime/);
  });

  it.each([
    ['crit', { crit: ['foo'], foo: 1 }],
    ['b64', { crit: ['b64'], b64: true }],
    ['jku', { jku: 'https://attacker.example/jwks.json' }],
    ['jwk', { jwk: { kty: 'RSA', n: 'AQAB', e: 'AQAB' } }],
    ['x5u', { x5u: 'https://attacker.example/cert.pem' }],
    ['x5c', { x5c: ['MIIB'] }],
    ['x5t', { x5t: 'abc' }],
    ['x5t#S256', { 'x5t#S256': 'abc' }],
  ])('refuses a token whose header carries %s, which Cognito never sets', async (name, header) => {
    // jose refuses to sign an unknown crit itself; the signature is made over the header as given.
    const signed = await token();
    const [, payload] = signed.split('.');
    const forged = await signRaw(header, payload);
    await expect(verifier.verify(forged)).rejects.toThrow(new RegExp(`(header parameter (crit|${name}))`));
  });

  it('refuses a token that is not written in canonical base64url (a padded or re-encoded copy of a valid one)', async () => {
    const good = await token();
    await expect(verifier.verify(good)).resolves.toMatchObject({ sub: 'acct-1' });
    await expect(verifier.verify(`${good}=`)).rejects.toThrow(/canonical/);
    await expect(verifier.verify(` ${good}`)).rejects.toThrow(/canonical/);
    await expect(verifier.verify(`${good}.`)).rejects.toThrow(/canonical/);
    const [h, p, s] = good.split('.');
    // The last character of a base64url part can carry stray low bits that decode to the same bytes.
    const last = s[s.length - 1];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = [...alphabet].find((c) => c !== last && Buffer.from(s.slice(0, -1) + c, 'base64url').equals(Buffer.from(s, 'base64url')));
    if (s.length % 4 !== 0) expect(sibling).toBeDefined();
    if (sibling) await expect(verifier.verify(`${h}.${p}.${s.slice(0, -1)}${sibling}`)).rejects.toThrow(/canonical/);
  });
});

/** Signs header.payload with the pool key, header exactly as given (RS256). */
async function signRaw(header: Record<string, unknown>, payload: string) {
  const { createSign, createPrivateKey } = await import('node:crypto');
  const head = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k1', ...header })).toString('base64url');
  const signer = createSign('RSA-SHA256');
  signer.update(`${head}.${payload}`);
  return `${head}.${payload}.${signer.sign(createPrivateKey({ key: privateJwk as never, format: 'jwk' })).toString('base64url')}`;
}
