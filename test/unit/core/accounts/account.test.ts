import { type Subscription, allowanceTakesRefund, subscriptionIsUsable } from '../../../../functions/core/accounts/account';

const sub = (changes: Partial<Subscription> = {}): Subscription => ({
  subscription_id: 'sub_1',
  customer_id: 'cus_1',
  status: 'active',
  name: 'Starter',
  price_id: 'price_s',
  price_micros: 20_000_000,
  monthly_pdfs: 2000,
  allowance_micros: 0,
  period_start: '2026-12-01T00:00:00.000Z',
  period_end: '2026-12-31T00:00:00.000Z',
  allowance_period_start: '2026-12-01T00:00:00.000Z',
  cancel_at_period_end: false,
  scheduled_change: null,
  ...changes,
});

describe('subscriptionIsUsable', () => {
  const now = new Date('2026-12-10T00:00:00.000Z');

  it('is usable while active or trialing (a trial spends its allowance), not past due, paused or canceled', () => {
    expect(subscriptionIsUsable(sub(), now)).toBe(true);
    expect(subscriptionIsUsable(sub({ status: 'trialing' }), now)).toBe(true);
    for (const status of ['past_due', 'paused', 'canceled'] as const) expect(subscriptionIsUsable(sub({ status }), now)).toBe(false);
    expect(subscriptionIsUsable(null, now)).toBe(false);
  });

  it('stops at period_end itself: the DynamoDB debit requires period_end > now, so a charge chosen then could never commit', () => {
    expect(subscriptionIsUsable(sub(), new Date('2026-12-30T23:59:59.999Z'))).toBe(true);
    expect(subscriptionIsUsable(sub(), new Date('2026-12-31T00:00:00.000Z'))).toBe(false);
  });
});

describe('allowanceTakesRefund', () => {
  const now = new Date('2026-12-10T00:00:00.000Z');

  it('takes back a charge of the current period while the subscription is usable', () => {
    expect(allowanceTakesRefund(sub(), '2026-12-05T00:00:00.000Z', now)).toBe(true);
    expect(allowanceTakesRefund(sub({ allowance_period_start: undefined }), '2026-12-05T00:00:00.000Z', now)).toBe(true);
    // A charge made at the renewal instant drew on the new period's allowance (the DynamoDB condition is period_start <= chargedAt).
    expect(allowanceTakesRefund(sub(), '2026-12-01T00:00:00.000Z', now)).toBe(true);
  });

  it('sends to credits a charge of an earlier period, a period without a granted allowance, or an unusable subscription', () => {
    expect(allowanceTakesRefund(sub(), '2026-11-20T00:00:00.000Z', now)).toBe(false);
    expect(allowanceTakesRefund(sub({ allowance_period_start: null }), '2026-12-05T00:00:00.000Z', now)).toBe(false);
    expect(allowanceTakesRefund(sub({ status: 'past_due' }), '2026-12-05T00:00:00.000Z', now)).toBe(false);
    expect(allowanceTakesRefund(sub(), '2026-12-05T00:00:00.000Z', new Date('2027-01-02T00:00:00.000Z'))).toBe(false);
  });

  it("sends to credits a charge of last period's allowance while this period's is not granted yet (started past due or paused, active again)", () => {
    // The allowance still belongs to November; the December invoice, when paid, sets it to the plan amount.
    expect(allowanceTakesRefund(sub({ allowance_period_start: '2026-11-01T00:00:00.000Z' }), '2026-11-20T00:00:00.000Z', now)).toBe(false);
  });
});
