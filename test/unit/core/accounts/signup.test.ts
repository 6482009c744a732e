import { openPendingAccount } from '../../../../functions/core/accounts/signup';
import { MemoryAccounts } from '../../../support/memory';

describe('openPendingAccount', () => {
  const now = new Date('2026-11-21T12:00:00Z');

  it('opens a pending account (no plan, nothing to spend) whose id is the sub', async () => {
    const accounts = new MemoryAccounts();
    const opened = await openPendingAccount(accounts, { sub: 'sub-1', email: 'a@example.com', now });
    expect(opened).toMatchObject({ account_id: 'sub-1', email: 'a@example.com', status: 'pending', plan_id: null, credits_micros: 0, free_credits_micros: 0, subscription: null });
    expect(await accounts.get('sub-1')).toEqual(opened);
  });

  it('run again (Cognito retries the trigger) leaves the existing account as it is and answers it', async () => {
    const accounts = new MemoryAccounts();
    await openPendingAccount(accounts, { sub: 'sub-1', email: 'a@example.com', now });
    // Meanwhile the account bought a pack.
    const paid = { ...(await accounts.get('sub-1'))!, plan_id: 'standard', status: 'active' as const, credits_micros: 5_000_000 };
    accounts.accounts.set('sub-1', paid);
    const again = await openPendingAccount(accounts, { sub: 'sub-1', email: 'a@example.com', now: new Date('2026-11-22T12:00:00Z') });
    expect(again).toEqual(paid);
    expect(await accounts.get('sub-1')).toEqual(paid);
  });
});
