import { generateApiKey } from '../../../../functions/core/auth/api-keys';
import { authenticate, readCredential } from '../../../../functions/core/auth/authenticate';
import { type ApiKeyRecord, type ApiKeyRepository, TokenExpiredError } from '../../../../functions/core/auth/ports';

describe('readCredential', () => {
  it('reads X-API-Key, a bearer pk_ key, or a bearer ID token; the key wins over a token', () => {
    expect(readCredential({ 'x-api-key': 'pk_abc' })).toEqual({ type: 'api_key', key: 'pk_abc' });
    expect(readCredential({ authorization: 'Bearer pk_abc' })).toEqual({ type: 'api_key', key: 'pk_abc' });
    expect(readCredential({ authorization: 'bearer eyJ.x.y' })).toEqual({ type: 'id_token', token: 'eyJ.x.y' });
    expect(readCredential({ 'x-api-key': 'pk_abc', authorization: 'Bearer eyJ.x.y' })).toEqual({ type: 'api_key', key: 'pk_abc' });
    expect(readCredential({})).toBeNull();
    expect(readCredential({ authorization: '  ' })).toBeNull();
  });

  it('tells an Authorization header that is not "Bearer <one value>" from a missing credential; X-API-Key still wins', () => {
    for (const authorization of ['Basic abc', 'pk_abc', 'Bearer pk_abc extra', 'Bearer', 'Token eyJ.x.y']) expect(readCredential({ authorization })).toEqual({ type: 'malformed' });
    expect(readCredential({ 'x-api-key': 'pk_abc', authorization: 'Basic abc' })).toEqual({ type: 'api_key', key: 'pk_abc' });
  });

  it('refuses two different values of one credential header instead of picking one', () => {
    expect(readCredential({ 'x-api-key': 'pk_b' }, { 'X-API-Key': ['pk_a'], 'x-api-key': ['pk_b'] })).toEqual({ type: 'conflicting' });
    expect(readCredential({ authorization: 'Bearer b' }, { Authorization: ['Bearer a', 'Bearer b'] })).toEqual({ type: 'conflicting' });
    // The same value twice, or an empty duplicate, is not a conflict.
    expect(readCredential({ 'x-api-key': 'pk_a' }, { 'X-API-Key': ['pk_a', ' pk_a '] })).toEqual({ type: 'api_key', key: 'pk_a' });
    expect(readCredential({ 'x-api-key': 'pk_a' }, { 'X-API-Key': ['', 'pk_a'] })).toEqual({ type: 'api_key', key: 'pk_a' });
    // …also when it comes last, where the single-value map (the last value sent) holds it.
    expect(readCredential({ 'x-api-key': '' }, { 'X-API-Key': ['pk_a', ''] })).toEqual({ type: 'api_key', key: 'pk_a' });
    expect(readCredential({ 'x-api-key': ' ', authorization: 'Bearer t' }, { 'X-API-Key': ['pk_a', ' '], Authorization: ['Bearer t'] })).toEqual({ type: 'api_key', key: 'pk_a' });
    expect(readCredential({ authorization: '' }, { Authorization: ['Bearer t', ''] })).toEqual({ type: 'id_token', token: 't' });
    // A key and a token in their own headers are not a conflict: the key is used.
    expect(readCredential({ 'x-api-key': 'pk_a', authorization: 'Bearer t' }, { 'X-API-Key': ['pk_a'], Authorization: ['Bearer t'] })).toEqual({ type: 'api_key', key: 'pk_a' });
  });

  it('refuses two different API keys, one in X-API-Key and one as a Bearer (the same key in both is one credential)', () => {
    expect(readCredential({ 'x-api-key': 'pk_a', authorization: 'Bearer pk_b' })).toEqual({ type: 'conflicting' });
    expect(readCredential({ 'x-api-key': ' pk_a', authorization: 'Bearer pk_a' })).toEqual({ type: 'api_key', key: 'pk_a' });
  });

  it('takes a bearer value as a key only with the whole pk_ prefix; anything else is an ID token', () => {
    expect(readCredential({ authorization: 'Bearer pkabc' })).toEqual({ type: 'id_token', token: 'pkabc' });
    expect(readCredential({ authorization: 'Bearer PK_abc' })).toEqual({ type: 'id_token', token: 'PK_abc' });
  });
});

describe('authenticate', () => {
  const key = generateApiKey();
  const record: ApiKeyRecord = { api_key_id: 'key_1', account_id: 'acc_1', prefix: key.prefix, hash: key.hash, name: 'k', created_at: '2026-01-01T00:00:00Z', last_used_at: null };
  const touched: string[] = [];
  const apiKeys: ApiKeyRepository = {
    findByPrefix: async (p) => (p === record.prefix ? [record] : []),
    create: async () => ({ created: true as const }),
    listForAccount: async () => [record],
    delete: async () => 'deleted' as const,
    touch: async (r) => void touched.push(r.api_key_id),
  };
  const deps = (verify: (t: string) => Promise<{ sub: string; email: string | null }>) => ({ apiKeys, idTokens: { verify }, clock: { now: () => new Date() } });
  const okToken = async () => ({ sub: 'acc_2', email: null });

  it('accepts a stored key on key-or-token routes and records its use', async () => {
    const p = await authenticate(deps(okToken), 'key_or_token', { type: 'api_key', key: key.plaintext });
    expect(p).toEqual({ account_id: 'acc_1', credential: 'api_key', api_key_id: 'key_1' });
    expect(touched).toContain('key_1');
  });

  it("waits for the key's last-use write before answering (a frozen Lambda would lose it), but not for a stuck one", async () => {
    const written: string[] = [];
    const slow: ApiKeyRepository = { ...apiKeys, touch: (r) => new Promise((resolve) => setTimeout(() => resolve(void written.push(r.api_key_id)), 30)) };
    await authenticate({ ...deps(okToken), apiKeys: slow }, 'key_or_token', { type: 'api_key', key: key.plaintext });
    expect(written).toEqual(['key_1']);
    const stuck: ApiKeyRepository = { ...apiKeys, touch: () => new Promise(() => undefined) };
    await expect(authenticate({ ...deps(okToken), apiKeys: stuck }, 'key_or_token', { type: 'api_key', key: key.plaintext })).resolves.toMatchObject({ api_key_id: 'key_1' });
  });

  it('refuses a well-formed key that shares a stored key\'s lookup prefix but not its hash', async () => {
    // The prefix is shown in listings, so it is no secret: only the full hash may let a key in.
    const collide: ApiKeyRepository = { ...apiKeys, findByPrefix: async () => [record] };
    await expect(authenticate({ ...deps(okToken), apiKeys: collide }, 'key_or_token', { type: 'api_key', key: generateApiKey().plaintext })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      details: { reason: 'invalid_api_key' },
    });
  });

  it('skips a stored record whose hash is not a SHA-256 (damaged or foreign) instead of failing the comparison', async () => {
    const damaged: ApiKeyRepository = { ...apiKeys, findByPrefix: async () => [{ ...record, api_key_id: 'key_0', hash: 'abc' }, record] };
    await expect(authenticate({ ...deps(okToken), apiKeys: damaged }, 'key_or_token', { type: 'api_key', key: key.plaintext })).resolves.toMatchObject({ api_key_id: 'key_1' });
  });

  it('records a use at most once a minute per key', async () => {
    const writes: string[] = [];
    const at = (msAgo: number | null): ApiKeyRepository => {
      const r = { ...record, last_used_at: msAgo === null ? null : new Date(Date.now() - msAgo).toISOString() };
      return { ...apiKeys, findByPrefix: async () => [r], touch: async (t) => void writes.push(t.last_used_at ?? 'never') };
    };
    await authenticate({ ...deps(okToken), apiKeys: at(10_000) }, 'key_or_token', { type: 'api_key', key: key.plaintext });
    expect(writes).toEqual([]);
    await authenticate({ ...deps(okToken), apiKeys: at(120_000) }, 'key_or_token', { type: 'api_key', key: key.plaintext });
    await authenticate({ ...deps(okToken), apiKeys: at(null) }, 'key_or_token', { type: 'api_key', key: key.plaintext });
    expect(writes).toHaveLength(2);
  });

  it('refuses a malformed key or one with a bad checksum before any database read', async () => {
    const lookups: string[] = [];
    const counting: ApiKeyRepository = { ...apiKeys, findByPrefix: async (p) => (lookups.push(p), []) };
    const badChecksum = key.plaintext.slice(0, -1) + (key.plaintext.endsWith('a') ? 'b' : 'a');
    for (const k of ['pk_nope', badChecksum, `${key.plaintext}x`]) {
      await expect(authenticate({ ...deps(okToken), apiKeys: counting }, 'key_or_token', { type: 'api_key', key: k })).rejects.toMatchObject({ details: { reason: 'invalid_api_key' } });
    }
    expect(lookups).toEqual([]);
  });

  it("lets a valid key in when its last-use write fails, and logs the failure (the use record is not worth the request)", async () => {
    const logged: string[] = [];
    const failing: ApiKeyRepository = { ...apiKeys, touch: async () => Promise.reject(new Error('throttled')) };
    const p = await authenticate({ ...deps(okToken), apiKeys: failing, log: (m) => void logged.push(m) }, 'key_or_token', { type: 'api_key', key: key.plaintext });
    expect(p).toEqual({ account_id: 'acc_1', credential: 'api_key', api_key_id: 'key_1' });
    expect(logged).toEqual(['could not record API key use']);
  });

  it('refuses keys on ID-token-only routes', async () => {
    await expect(authenticate(deps(okToken), 'token', { type: 'api_key', key: key.plaintext })).rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'id_token_required' } });
  });

  it('refuses unknown, malformed and missing credentials with 401 UNAUTHORIZED', async () => {
    const other = generateApiKey().plaintext;
    await expect(authenticate(deps(okToken), 'key_or_token', { type: 'api_key', key: other })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(authenticate(deps(okToken), 'key_or_token', { type: 'api_key', key: 'pk_nope' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(authenticate(deps(okToken), 'key_or_token', null)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('maps token failures to 401, telling expiry apart', async () => {
    await expect(authenticate(deps(async () => { throw new TokenExpiredError(); }), 'token', { type: 'id_token', token: 't' })).rejects.toMatchObject({ details: { reason: 'token_expired' } });
    await expect(authenticate(deps(async () => { throw new Error('bad sig'); }), 'token', { type: 'id_token', token: 't' })).rejects.toMatchObject({ details: { reason: 'invalid_token' } });
    await expect(authenticate(deps(okToken), 'token', { type: 'id_token', token: 't' })).resolves.toMatchObject({ account_id: 'acc_2', credential: 'id_token' });
  });

  it('refuses a malformed Authorization header with 401 saying how to send one', async () => {
    const err = authenticate(deps(okToken), 'key_or_token', { type: 'malformed' });
    await expect(err).rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'malformed_authorization' } });
    await expect(err).rejects.toThrow(/"Bearer " followed by one API key/);
  });

  it('refuses conflicting credentials with 401', async () => {
    await expect(authenticate(deps(okToken), 'key_or_token', { type: 'conflicting' })).rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'conflicting_credentials' } });
  });

  it('accepts a sub of exactly 128 characters (the longest account id)', async () => {
    const sub = 'a'.repeat(128);
    await expect(authenticate(deps(async () => ({ sub, email: null })), 'token', { type: 'id_token', token: 't' })).resolves.toMatchObject({ account_id: sub });
  });

  it.each([
    ['no sub', undefined],
    ['an empty sub', ''],
    ['a sub longer than any account id', 'a'.repeat(129)],
    ['a sub with control characters', 'acc\u0000'],
  ])('refuses a correctly signed token with %s (it names no account)', async (_label, sub) => {
    const verify = async () => ({ sub: sub as string, email: null });
    await expect(authenticate(deps(verify), 'token', { type: 'id_token', token: 't' })).rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'invalid_token' } });
  });
});
