import { newAccount } from '../../../../functions/core/accounts/account';
import { type Bucket, type Charge, chooseBucket } from '../../../../functions/core/billing/charging';
import { MemoryAccounts, MemoryChargeStore, MemoryJobs } from '../../../support/memory';

// The in-memory store stands in for the DynamoDB transaction in every unit test of charging, so its debit must be the real one.
const PRICE = 10_000;
const NOW = new Date('2026-11-22T10:00:00Z');

function store() {
  const accounts = new MemoryAccounts();
  const account = newAccount({ account_id: 'acct1', email: 'a@example.com', plan_id: 'standard', credits_micros: 10 * PRICE, free_credits_micros: 5 * PRICE, now: NOW });
  account.subscription = {
    subscription_id: 'sub_1', customer_id: null, status: 'active', name: 'Starter', price_id: null, price_micros: 20_000_000, monthly_pdfs: 2000,
    allowance_micros: 3 * PRICE, period_start: '2026-11-01T00:00:00Z', period_end: '2026-12-01T00:00:00Z', cancel_at_period_end: false, scheduled_change: null,
  };
  accounts.accounts.set('acct1', account);
  return { accounts, charges: new MemoryChargeStore(accounts, new MemoryJobs()), stored: () => accounts.accounts.get('acct1')! };
}

const charge = (unit: string): Charge => ({ account_id: 'acct1', job_id: 'job_1', unit, operation: 'pdf', amount_micros: PRICE, pdf_count: 1 });

describe('MemoryChargeStore.commit', () => {
  it('takes a charge from the subscription allowance out of the allowance, once', async () => {
    const s = store();
    expect(chooseBucket(s.stored(), PRICE, NOW)).toBe('subscription');
    expect(await s.charges.commit(charge('pdf'), 'subscription', NOW)).toBe('charged');
    expect(s.stored()).toMatchObject({ subscription: { allowance_micros: 2 * PRICE }, free_credits_micros: 5 * PRICE, credits_micros: 10 * PRICE, total_pdf_count: 1, total_amount_micros: PRICE });
    expect(await s.charges.commit(charge('pdf'), 'subscription', NOW)).toBe('already_charged');
    expect(s.stored().subscription!.allowance_micros).toBe(2 * PRICE);
  });

  it.each<Bucket>(['subscription', 'free_credits', 'credits'])('debits %s as commitMany does', async (bucket) => {
    const one = store();
    const many = store();
    if (bucket !== 'subscription') for (const s of [one, many]) s.stored().subscription!.allowance_micros = 0;
    if (bucket === 'credits') for (const s of [one, many]) s.stored().free_credits_micros = 0;
    expect(await one.charges.commit(charge('pdf'), bucket, NOW)).toBe('charged');
    expect(await many.charges.commitMany([{ charge: charge('pdf'), bucket }], NOW)).toBe('charged');
    expect(one.stored()).toEqual(many.stored());
  });
});
