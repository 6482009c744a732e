import { newAccount } from '../../../../functions/core/accounts/account';
import { presentAccount } from '../../../../functions/core/accounts/present';

describe('presentAccount', () => {
  it('shows a pending account\'s plan as "pending" everywhere in the body, as billing does', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const pending = newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: null, now });
    const shown = presentAccount(pending, null, { account_id: 'a1', credential: 'id_token', api_key_id: null }, now);
    expect(shown).toMatchObject({ plan_id: 'pending', status: 'pending', plan_name: null, billing: { plan_id: 'pending' } });
  });
});
