import { newAccount } from '../../../../functions/core/accounts/account';
import { presentAccount } from '../../../../functions/core/accounts/present';

describe('presentAccount', () => {
  it('shows a pending account\'s plan as "pending" everywhere in the body, as billing does', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const pending = newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: null, now });
    const shown = presentAccount(pending, null, { account_id: 'a1', credential: 'id_token', api_key_id: null }, now);
    expect(shown).toMatchObject({ plan_id: 'pending', status: 'pending', plan_name: null, billing: { plan_id: 'pending' } });
  });

  it('names the credential the caller used: an API key by its id, an ID token with none', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const account = newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: null, now });
    expect(presentAccount(account, null, { account_id: 'a1', credential: 'api_key', api_key_id: 'key_1' }, now).credential).toEqual({ type: 'api_key', api_key_id: 'key_1' });
    expect(presentAccount(account, null, { account_id: 'a1', credential: 'id_token', api_key_id: null }, now).credential).toEqual({ type: 'id_token', api_key_id: null });
  });
});
