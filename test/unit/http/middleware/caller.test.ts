import { caller, principalFromAuthorizer } from '../../../../functions/http/middleware/caller';
import type { HttpRequest } from '../../../../functions/http/pipeline';
import { routeById } from '../../../../functions/routes';

describe('principalFromAuthorizer', () => {
  it('reads the context the authorizer writes: an empty api_key_id is an ID token caller', () => {
    expect(principalFromAuthorizer({ principalId: 'acc_1', account_id: 'acc_1', credential: 'api_key', api_key_id: 'key_1' })).toEqual({
      account_id: 'acc_1',
      credential: 'api_key',
      api_key_id: 'key_1',
    });
    expect(principalFromAuthorizer({ account_id: 'acc_1', credential: 'id_token', api_key_id: '' })).toEqual({ account_id: 'acc_1', credential: 'id_token', api_key_id: null });
  });

  // Defence in depth: a context the authorizer did not write (a route wired without it) names no caller.
  it.each([
    ['no context', undefined],
    ['no account', { credential: 'api_key', api_key_id: 'key_1' }],
    ['an empty account', { account_id: '', credential: 'id_token' }],
    ['no credential type', { account_id: 'acc_1' }],
    ['an unknown credential type', { account_id: 'acc_1', credential: 'anonymous' }],
  ])('names no caller for %s', (_what, context) => {
    expect(principalFromAuthorizer(context as Record<string, unknown> | undefined)).toBeNull();
  });
});

describe('caller middleware', () => {
  const request = (authorizer: Record<string, unknown> | null, loaded: string[]) =>
    ({
      route: routeById('me.get'),
      event: { requestContext: { authorizer } },
      services: { accounts: { get: async (id: string) => (loaded.push(id), { account_id: id }) } },
      principal: null,
      account: null,
    }) as unknown as HttpRequest;

  it('refuses a protected route that no authorizer verdict reached, before loading any account', async () => {
    const loaded: string[] = [];
    await expect(caller.before!(request(null, loaded))).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(caller.before!(request({ account_id: 'acc_1', credential: 'anonymous' }, loaded))).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(loaded).toEqual([]);
  });

  it('answers 403 ACCOUNT_NOT_FOUND for a valid credential whose account does not exist', async () => {
    const req = { ...request({ account_id: 'acc_9', credential: 'id_token', api_key_id: '' }, []), services: { accounts: { get: async () => null } } } as unknown as HttpRequest;
    await expect(caller.before!(req)).rejects.toMatchObject({ code: 'ACCOUNT_NOT_FOUND', details: { account_id: 'acc_9' } });
    expect(req.account).toBeNull();
  });

  it("loads the authorizer's account", async () => {
    const loaded: string[] = [];
    const req = request({ account_id: 'acc_1', credential: 'id_token', api_key_id: '' }, loaded);
    await caller.before!(req);
    expect(req.account).toEqual({ account_id: 'acc_1' });
    expect(loaded).toEqual(['acc_1']);
  });
});
