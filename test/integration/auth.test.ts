import { createPrivateKey, createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../../functions/adapters/dynamodb/client';
import path from 'node:path';
import { type JWK, SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';
import { LOCAL_CLIENT_ID, LOCAL_ISSUER } from '../../local/issuer';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;
let signingJwk: JWK;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account();
  signingJwk = JSON.parse(readFileSync(path.join(stack.dataDir, 'issuer', 'signing-key.json'), 'utf8'));
});
afterAll(() => stack?.stop());

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A token signed with the local issuer's real key, with claims and header under the test's control. */
async function token(overrides: { claims?: Record<string, unknown>; iss?: string; aud?: string; exp?: number; kid?: string; key?: JWK; sub?: string | null } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const key = overrides.key ?? signingJwk;
  const jwt = new SignJWT({ email: user.email, token_use: 'id', ...overrides.claims })
    .setProtectedHeader({ alg: 'RS256', kid: overrides.kid ?? signingJwk.kid })
    .setIssuer(overrides.iss ?? LOCAL_ISSUER)
    .setAudience(overrides.aud ?? LOCAL_CLIENT_ID);
  if (overrides.sub !== null) jwt.setSubject(overrides.sub ?? user.account_id);
  return jwt
    .setIssuedAt(now - 10)
    .setExpirationTime(overrides.exp ?? now + 600)
    .sign(await importJWK(key, 'RS256'));
}

async function expect401(res: Response, message?: RegExp, reason?: string) {
  expect(res.status).toBe(401);
  // Every refusal of a credential names the scheme that would work.
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="api"');
  const { error } = await res.json();
  expect(error.code).toBe('UNAUTHORIZED');
  expect(typeof error.message).toBe('string');
  if (message) expect(error.message).toMatch(message);
  // The authorizer's reason survives the gateway's ACCESS_DENIED response.
  expect(error.details.reason).toEqual(reason ?? expect.stringMatching(/^[a-z_]+$/));
}

describe('credentials', () => {
  it('accepts the API key in X-API-Key and as a bearer pk_ token', async () => {
    expect((await stack.request('GET', '/me', { key: user.api_key })).status).toBe(200);
    expect((await stack.request('GET', '/me', { headers: { Authorization: `Bearer ${user.api_key}` } })).status).toBe(200);

    // /me names the key that was used (the authorizer hands its id on), so a caller can tell which of its keys this is.
    const { api_keys } = await (await stack.request('GET', '/accounts/me/api-keys', { token: user.id_token })).json();
    const used = api_keys.find((k: { prefix: string }) => user.api_key.startsWith(k.prefix));
    expect(await (await stack.request('GET', '/me', { key: user.api_key })).json()).toMatchObject({ credential: { type: 'api_key', api_key_id: used.api_key_id } });
  });

  it('accepts a valid ID token on key-or-token and token-only routes', async () => {
    const me = await (await stack.request('GET', '/me', { token: user.id_token })).json();
    expect(me).toMatchObject({ account_id: user.account_id, credential: { type: 'id_token' } });
    expect((await stack.request('GET', '/accounts/me/api-keys', { token: user.id_token })).status).toBe(200);
  });

  it('uses the key when both a key and a token are sent', async () => {
    const other = await stack.account();
    const res = await stack.request('GET', '/me', { key: user.api_key, token: other.id_token });
    expect((await res.json()).account_id).toBe(user.account_id);
  });

  it('refuses API keys on ID-token-only routes, so a key cannot manage keys', async () => {
    await expect401(await stack.request('GET', '/accounts/me/api-keys', { key: user.api_key }), /only a dashboard ID token/, 'id_token_required');
    await expect401(await stack.request('POST', '/accounts/me/api-keys', { key: user.api_key, json: { name: 'escalate' } }));
    await expect401(await stack.request('GET', '/plans', { headers: { Authorization: `Bearer ${user.api_key}` } }));
  });

  it('refuses a missing credential, and tells a malformed Authorization header from one', async () => {
    await expect401(await stack.request('GET', '/me'), undefined, 'missing_credential');
    await expect401(await stack.request('GET', '/me', { headers: { Authorization: 'Basic dXNlcjpwYXNz' } }), undefined, 'malformed_authorization');
  });

  it('refuses unknown, malformed and revoked keys', async () => {
    await expect401(await stack.request('GET', '/me', { key: `${user.api_key.slice(0, -1)}${user.api_key.endsWith('A') ? 'B' : 'A'}` }));
    await expect401(await stack.request('GET', '/me', { key: 'pk_not-a-key' }), undefined, 'invalid_api_key');
    await expect401(await stack.request('GET', '/me', { key: 'x'.repeat(5000) }));

    const created = await (await stack.request('POST', '/accounts/me/api-keys', { token: user.id_token, json: { name: 'short-lived' } })).json();
    expect((await stack.request('GET', '/me', { key: created.api_key })).status).toBe(200);
    const revoke = await stack.request('DELETE', `/accounts/me/api-keys/${created.api_key_id}`, { token: user.id_token });
    expect(revoke.status).toBe(200);
    await expect401(await stack.request('GET', '/me', { key: created.api_key }));
  });

  it('refuses an expired token, saying so', async () => {
    const expired = await token({ exp: Math.floor(Date.now() / 1000) - 60 });
    await expect401(await stack.request('GET', '/me', { token: expired }), /expired/, 'token_expired');
  });

  it('refuses a token from another issuer, for another client, or of the wrong use', async () => {
    await expect401(await stack.request('GET', '/me', { token: await token({ iss: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Attacker' }) }));
    await expect401(await stack.request('GET', '/me', { token: await token({ aud: 'some-other-client' }) }), undefined, 'invalid_token');
    // Shaped like a real access token of this pool and client (client_id set): refused for its use, not for a missing claim.
    await expect401(await stack.request('GET', '/me', { token: await token({ claims: { token_use: 'access', client_id: LOCAL_CLIENT_ID } }) }), undefined, 'invalid_token');
  });

  it('refuses alg "none" and tampered payloads', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: user.account_id, iss: LOCAL_ISSUER, aud: LOCAL_CLIENT_ID, token_use: 'id', iat: now, exp: now + 600 };
    await expect401(await stack.request('GET', '/me', { token: `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.` }));
    const [h, , s] = user.id_token.split('.');
    const other = await stack.account();
    await expect401(await stack.request('GET', '/me', { token: `${h}.${b64url({ ...claims, sub: other.account_id })}.${s}` }));
  });

  it('refuses a token with an unknown kid, and one signed by another key under the real kid', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const foreign = await exportJWK(privateKey);
    await expect401(await stack.request('GET', '/me', { token: await token({ key: foreign, kid: 'unknown-kid' }) }));
    await expect401(await stack.request('GET', '/me', { token: await token({ key: foreign }) }));
  });

  it('refuses a well-signed token Cognito would not issue: no expiry, a ten-year lifetime, a crit header', async () => {
    const now = Math.floor(Date.now() / 1000);
    const key = await importJWK(signingJwk, 'RS256');
    const base = { email: user.email, token_use: 'id', sub: user.account_id, iss: LOCAL_ISSUER, aud: LOCAL_CLIENT_ID, iat: now };
    const forever = await new SignJWT(base).setProtectedHeader({ alg: 'RS256', kid: signingJwk.kid }).sign(key);
    await expect401(await stack.request('GET', '/me', { token: forever }), undefined, 'invalid_token');
    const tenYears = await new SignJWT({ ...base, exp: now + 10 * 365 * 86400 }).setProtectedHeader({ alg: 'RS256', kid: signingJwk.kid }).sign(key);
    await expect401(await stack.request('GET', '/me', { token: tenYears }), undefined, 'invalid_token');
    // jose will not write a crit it does not understand: signed by hand.
    const signingInput = `${b64url({ alg: 'RS256', kid: signingJwk.kid, crit: ['x-ext'], 'x-ext': 1 })}.${b64url({ ...base, exp: now + 600 })}`;
    const signature = createSign('RSA-SHA256').update(signingInput).sign(createPrivateKey({ key: signingJwk as never, format: 'jwk' })).toString('base64url');
    await expect401(await stack.request('GET', '/me', { token: `${signingInput}.${signature}` }), undefined, 'invalid_token');
    expect((await stack.request('GET', '/me', { token: await token() })).status).toBe(200);
  });

  it('answers 403 ACCOUNT_NOT_FOUND for a valid token without an account', async () => {
    const now = Math.floor(Date.now() / 1000);
    const orphan = await new SignJWT({ token_use: 'id', email: 'ghost@example.com' })
      .setProtectedHeader({ alg: 'RS256', kid: signingJwk.kid })
      .setIssuer(LOCAL_ISSUER)
      .setAudience(LOCAL_CLIENT_ID)
      .setSubject('00000000-0000-0000-0000-000000000000')
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(await importJWK(signingJwk, 'RS256'));
    const res = await stack.request('GET', '/me', { token: orphan });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('ACCOUNT_NOT_FOUND');
  });

  it('mints fresh tokens for local accounts', async () => {
    const res = await stack.request('POST', `/_local/accounts/${user.account_id}/token`);
    const { id_token } = await res.json();
    expect((await stack.request('GET', '/accounts/me', { token: id_token })).status).toBe(200);
    expect((await stack.request('POST', '/_local/accounts/nobody/token')).status).toBe(404);
  });
});

describe('API key management', () => {
  it('shows the key once, lists prefix and metadata only, and revokes', async () => {
    const created = await stack.request('POST', '/accounts/me/api-keys', { token: user.id_token, json: { name: 'ci' } });
    expect(created.status).toBe(201);
    const key = await created.json();
    expect(key).toMatchObject({ name: 'ci', last_used_at: null });
    expect(key.api_key).toMatch(/^pk_/);
    expect(key.api_key.startsWith(key.prefix)).toBe(true);

    const list = await (await stack.request('GET', '/accounts/me/api-keys', { token: user.id_token })).json();
    const listed = list.api_keys.find((k: any) => k.api_key_id === key.api_key_id);
    expect(listed).toEqual({ api_key_id: key.api_key_id, name: 'ci', prefix: key.prefix, created_at: key.created_at, last_used_at: null });
    expect(JSON.stringify(list)).not.toContain(key.api_key);

    const stored = await stack.services.apiKeys.findByPrefix(key.prefix);
    expect(JSON.stringify(stored)).not.toContain(key.api_key);

    expect((await stack.request('DELETE', `/accounts/me/api-keys/${key.api_key_id}`, { token: user.id_token })).status).toBe(200);
    const again = await stack.request('DELETE', `/accounts/me/api-keys/${key.api_key_id}`, { token: user.id_token });
    expect(again.status).toBe(404);
    expect((await again.json()).error.code).toBe('API_KEY_NOT_FOUND');
  });

  it("cannot revoke another account's key", async () => {
    const other = await stack.account();
    const theirs = (await (await stack.request('GET', '/accounts/me/api-keys', { token: other.id_token })).json()).api_keys[0];
    const res = await stack.request('DELETE', `/accounts/me/api-keys/${theirs.api_key_id}`, { token: user.id_token });
    expect(res.status).toBe(403);
    expect((await res.json()).error).toMatchObject({ code: 'ACCESS_DENIED', details: { api_key_id: theirs.api_key_id } });
    expect((await stack.request('GET', '/me', { key: other.api_key })).status).toBe(200);
  });

  it('refuses a bad name', async () => {
    const res = await stack.request('POST', '/accounts/me/api-keys', { token: user.id_token, json: { name: '' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'name' } });
  });
});

describe('credentials that name no account, or two', () => {
  it.each([
    ['no sub', null],
    ['an empty sub', ''],
    ['a sub of 2,100 characters', 'a'.repeat(2100)],
  ])('refuses a correctly signed token with %s: 401 at the authorizer, never a 500', async (_label, sub) => {
    await expect401(await stack.request('GET', '/me', { token: await token({ sub }) }), undefined, 'invalid_token');
  });

  /** GET /me with headers written as they are (fetch would merge repeated ones). */
  const send = (headers: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(stack.baseUrl).port), '127.0.0.1');
      let reply = '';
      socket.on('data', (chunk) => (reply += chunk));
      socket.on('end', () => resolve(reply));
      socket.on('error', reject);
      socket.write(`GET /me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers}\r\n`);
    });

  it('refuses two different X-API-Key headers (or Authorization headers) instead of using the last one', async () => {
    const other = await stack.account();
    for (const headers of [
      `X-API-Key: ${user.api_key}\r\nX-API-Key: ${other.api_key}\r\n`,
      `X-API-Key: ${user.api_key}\r\nx-api-key: ${other.api_key}\r\n`,
      `Authorization: Bearer ${user.id_token}\r\nAuthorization: Bearer ${other.id_token}\r\n`,
    ]) {
      const reply = await send(headers);
      expect(reply).toMatch(/^HTTP\/1\.1 401/);
      expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'conflicting_credentials' } });
    }
    // The same key twice is still that key.
    expect(await send(`X-API-Key: ${user.api_key}\r\nX-API-Key: ${user.api_key}\r\n`)).toMatch(/^HTTP\/1\.1 200/);
  });

  it('reads a credential header sent again empty as its one value, whichever comes last', async () => {
    const other = await stack.account();
    const accountOf = async (headers: string) => {
      const reply = await send(headers);
      expect(reply).toMatch(/^HTTP\/1\.1 200/);
      return JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)).account_id;
    };
    // The key is used: not refused as missing, and not passed over for the token beside it.
    expect(await accountOf(`X-API-Key: ${user.api_key}\r\nX-API-Key: \r\n`)).toBe(user.account_id);
    expect(await accountOf(`X-API-Key: ${user.api_key}\r\nX-API-Key: \r\nAuthorization: Bearer ${other.id_token}\r\n`)).toBe(user.account_id);
    expect(await accountOf(`Authorization: Bearer ${user.api_key}\r\nAuthorization: \r\n`)).toBe(user.account_id);
  });
});

describe('ids too long to be stored keys', () => {
  it('answers the route\'s 404, not a 500', async () => {
    const huge = 'k'.repeat(3000);
    const revoke = await stack.request('DELETE', `/accounts/me/api-keys/${huge}`, { token: user.id_token });
    expect(revoke.status).toBe(404);
    expect((await revoke.json()).error.code).toBe('API_KEY_NOT_FOUND');
    const job = await stack.request('GET', `/jobs/job_${huge}`, { key: user.api_key });
    expect(job.status).toBe(404);
    expect((await job.json()).error.code).toBe('JOB_NOT_FOUND');
    const webhook = await stack.request('GET', `/accounts/me/webhooks/wh_${huge}`, { token: user.id_token });
    expect(webhook.status).toBe(404);
    expect((await webhook.json()).error.code).toBe('WEBHOOK_NOT_FOUND');
  });
});

describe('the API key limit', () => {
  const create = (token: string) => stack.request('POST', '/accounts/me/api-keys', { token, json: { name: 'k' } });

  it('holds under concurrent creations: from 49 keys, exactly one of 20 at once gets through', async () => {
    const owner = await stack.account(); // one key already
    for (let i = 0; i < 48; i++) expect((await create(owner.id_token)).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(owner.id_token)));
    expect(answers.map((r) => r.status).sort()).toEqual([201, ...Array(19).fill(403)]);
    const refused = await answers.find((r) => r.status === 403)!.json();
    expect(refused.error).toMatchObject({ code: 'API_KEY_LIMIT_EXCEEDED', details: { current_count: 50, max_allowed: 50 } });
    const list = await (await stack.request('GET', '/accounts/me/api-keys', { token: owner.id_token })).json();
    expect(list.api_keys).toHaveLength(50);
    // Revoking frees a place.
    expect((await stack.request('DELETE', `/accounts/me/api-keys/${list.api_keys[0].api_key_id}`, { token: owner.id_token })).status).toBe(200);
    expect((await create(owner.id_token)).status).toBe(201);
    expect((await create(owner.id_token)).status).toBe(403);
  });

  it('counts the keys of an account that has no count yet (keys made before it) from its listing', async () => {
    const owner = await stack.account();
    for (let i = 0; i < 3; i++) expect((await create(owner.id_token)).status).toBe(201);
    const db = createDynamo({ tableName: stack.services.config.tableName, region: 'us-east-1', endpoint: stack.services.config.dynamodbEndpoint });
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: `ACCOUNT#${owner.account_id}`, sk: 'APIKEYS' } }));
    // 4 keys and no count: a revoke still works, and the next creation starts the count at 3.
    const list = await (await stack.request('GET', '/accounts/me/api-keys', { token: owner.id_token })).json();
    expect((await stack.request('DELETE', `/accounts/me/api-keys/${list.api_keys[0].api_key_id}`, { token: owner.id_token })).status).toBe(200);
    expect((await create(owner.id_token)).status).toBe(201);
    const { Item } = await db.doc.send(new GetCommand({ TableName: db.table, Key: { pk: `ACCOUNT#${owner.account_id}`, sk: 'APIKEYS' }, ConsistentRead: true }));
    expect(Item?.key_count).toBe(4);
  });
});
