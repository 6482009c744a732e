import { type Account, type Subscription, newAccount } from '../../../../functions/core/accounts/account';
import { usdToMicros } from '../../../../functions/core/billing/money';
import { planCatalogue } from '../../../../functions/core/billing/plans';
import { SubscriptionCatalog } from '../../../../functions/core/subscriptions/catalog';
import type { ProviderSubscription } from '../../../../functions/core/subscriptions/ports';
import {
  accountPlanAfter,
  deriveSubscription,
  grantPeriodAllowance,
  mapProviderStatus,
  mergeProviderSubscription,
} from '../../../../functions/core/subscriptions/reconcile';

const catalog = SubscriptionCatalog.fromPlans(planCatalogue({ starter: 'price_s', business: 'price_b' }));
const starter = catalog.forPrice('price_s')!;
const business = catalog.forPrice('price_b')!;
const P1 = { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' };
const P2 = { start: '2026-12-01T00:00:00.000Z', end: '2027-01-01T00:00:00.000Z' };

function provider(overrides: Partial<ProviderSubscription> = {}): ProviderSubscription {
  return {
    id: 'sub_1', customer_id: 'cus_1', status: 'active', price_id: 'price_s', item_id: 'si_1', period_start: P1.start, period_end: P1.end,
    cancel_at_period_end: false, cancel_at: null, pause_collection: false, account_ref: null, ...overrides,
  };
}

/** A Starter subscription in P1 whose allowance was granted and partly spent. */
function granted(allowanceUsd = 15): Subscription {
  const merged = mergeProviderSubscription(null, provider(), starter, null);
  const paid = grantPeriodAllowance(merged, { period_start: P1.start, period_end: P1.end, price_id: 'price_s' }, catalog)!;
  return deriveSubscription({ ...paid, allowance_micros: usdToMicros(allowanceUsd) }, catalog);
}

function account(overrides: Partial<Account> = {}): Account {
  return { ...newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: null, now: new Date(P1.start) }), ...overrides };
}

describe('a new subscription', () => {
  it('takes the plan of its price and has no allowance until its invoice is paid', () => {
    const sub = deriveSubscription(mergeProviderSubscription(null, provider(), starter, '2026-11-01T00:00:05.000Z'), catalog);
    expect(sub).toMatchObject({ name: 'Starter', price_micros: usdToMicros(20), monthly_pdfs: 2000, allowance_micros: 0, status: 'active', scheduled_change: null });
    const paid = grantPeriodAllowance(sub, { period_start: P1.start, period_end: P1.end, price_id: 'price_s' }, catalog)!;
    expect(paid).toMatchObject({ allowance_micros: usdToMicros(20), allowance_period_start: P1.start });
    expect(grantPeriodAllowance(paid, { period_start: P1.start, period_end: P1.end, price_id: 'price_s' }, catalog)).toBeNull();
  });
});

describe('renewal', () => {
  it('resets the allowance to the plan amount when a live subscription renews (no rollover), and its invoice grants nothing more', () => {
    const moved = deriveSubscription(mergeProviderSubscription(granted(15), provider({ period_start: P2.start, period_end: P2.end }), starter, null), catalog);
    expect(moved).toMatchObject({ period_start: P2.start, allowance_micros: usdToMicros(20), allowance_period_start: P2.start, status: 'active' });
    expect(grantPeriodAllowance(moved, { period_start: P2.start, period_end: P2.end, price_id: 'price_s' }, catalog)).toBeNull();
    // The same renewal reported again does not top the spent allowance up.
    const spent = { ...moved, allowance_micros: usdToMicros(4) };
    expect(mergeProviderSubscription(spent, provider({ period_start: P2.start, period_end: P2.end }), starter, null).allowance_micros).toBe(usdToMicros(4));
  });

  it('grants nothing at a renewal that starts past due, until its invoice is paid', () => {
    const moved = deriveSubscription(mergeProviderSubscription(granted(15), provider({ status: 'past_due', period_start: P2.start, period_end: P2.end }), starter, null), catalog);
    expect(moved).toMatchObject({ period_start: P2.start, allowance_micros: 0, status: 'past_due' });
    const paid = grantPeriodAllowance(moved, { period_start: P2.start, period_end: P2.end, price_id: 'price_s' }, catalog)!;
    expect(paid.allowance_micros).toBe(usdToMicros(20));
  });

  it('accepts the invoice before the period update, and the update then keeps the allowance', () => {
    const paid = grantPeriodAllowance(granted(3), { period_start: P2.start, period_end: P2.end, price_id: 'price_s' }, catalog)!;
    expect(paid).toMatchObject({ period_start: P2.start, period_end: P2.end, allowance_micros: usdToMicros(20) });
    const updated = mergeProviderSubscription(paid, provider({ period_start: P2.start, period_end: P2.end }), starter, null);
    expect(updated.allowance_micros).toBe(usdToMicros(20));
  });

  it('ignores the invoice of an earlier period', () => {
    const moved = mergeProviderSubscription(granted(), provider({ period_start: P2.start, period_end: P2.end }), starter, null);
    expect(grantPeriodAllowance(moved, { period_start: P1.start, period_end: P1.end, price_id: 'price_s' }, catalog)).toBeNull();
  });
});

describe('plan changes', () => {
  it('upgrades at once and adds the difference between the plans', () => {
    const up = deriveSubscription(mergeProviderSubscription(granted(15), provider({ price_id: 'price_b' }), business, null), catalog);
    expect(up).toMatchObject({ name: 'Business', price_id: 'price_b', monthly_pdfs: 10000, allowance_micros: usdToMicros(95), scheduled_change: null });
    // The same state reported again adds nothing.
    expect(mergeProviderSubscription(up, provider({ price_id: 'price_b' }), business, null).allowance_micros).toBe(usdToMicros(95));
  });

  it('keeps the current plan until renewal on a downgrade, then applies it', () => {
    const onBusiness = deriveSubscription(mergeProviderSubscription(granted(15), provider({ price_id: 'price_b' }), business, null), catalog);
    const down = deriveSubscription(mergeProviderSubscription(onBusiness, provider({ price_id: 'price_s' }), starter, null), catalog);
    expect(down).toMatchObject({
      name: 'Business',
      allowance_micros: usdToMicros(95),
      scheduled_change: { action: 'downgrade', effective_at: P1.end, price_id: 'price_s', name: 'Starter', monthly_pdfs: 2000 },
    });
    const renewed = deriveSubscription(mergeProviderSubscription(down, provider({ price_id: 'price_s', period_start: P2.start, period_end: P2.end }), starter, null), catalog);
    expect(renewed).toMatchObject({ name: 'Starter', allowance_micros: usdToMicros(20), scheduled_change: null });
  });
});

describe('status and scheduled changes', () => {
  it('maps the provider statuses onto the five of the spec', () => {
    expect(['active', 'trialing', 'past_due', 'unpaid', 'incomplete', 'paused', 'canceled', 'incomplete_expired', 'weird'].map(mapProviderStatus)).toEqual([
      'active', 'trialing', 'past_due', 'past_due', 'past_due', 'paused', 'canceled', 'canceled', 'past_due',
    ]);
  });

  it('shows a cancel at period end (or at a date), keeping the allowance', () => {
    const c = deriveSubscription(mergeProviderSubscription(granted(15), provider({ cancel_at_period_end: true, cancel_at: P1.end }), starter, null), catalog);
    expect(c).toMatchObject({ status: 'active', allowance_micros: usdToMicros(15), scheduled_change: { action: 'cancel', effective_at: P1.end } });
    const dated = deriveSubscription(mergeProviderSubscription(granted(), provider({ cancel_at: '2026-11-20T00:00:00.000Z' }), starter, null), catalog);
    expect(dated.scheduled_change).toEqual({ action: 'cancel', effective_at: '2026-11-20T00:00:00.000Z' });
  });

  it('removes the allowance when cancelled', () => {
    const gone = deriveSubscription(mergeProviderSubscription(granted(15), provider({ status: 'canceled' }), starter, null), catalog);
    expect(gone).toMatchObject({ status: 'canceled', allowance_micros: 0, scheduled_change: null });
  });

  it('shows a pause as scheduled, and paused once a period starts unpaid', () => {
    const pausing = deriveSubscription(mergeProviderSubscription(granted(), provider({ pause_collection: true }), starter, null), catalog);
    expect(pausing).toMatchObject({ status: 'active', scheduled_change: { action: 'pause', effective_at: P1.end } });
    const paused = deriveSubscription(mergeProviderSubscription(pausing, provider({ pause_collection: true, period_start: P2.start, period_end: P2.end }), starter, null), catalog);
    expect(paused).toMatchObject({ status: 'paused', allowance_micros: 0, scheduled_change: null });
  });
});

describe('the account plan', () => {
  it('activates a pending account on the plan of a usable subscription only', () => {
    const none = { boughtPack: false };
    expect(accountPlanAfter(account(), granted(), catalog, none)).toEqual({ plan_id: 'starter', status: 'active' });
    const incomplete = deriveSubscription(mergeProviderSubscription(null, provider({ status: 'incomplete' }), starter, null), catalog);
    expect(accountPlanAfter(account(), incomplete, catalog, none)).toEqual({ plan_id: null, status: 'pending' });
  });

  it('falls back to the standard plan when the subscription ends on an account with a pack, so credits keep working', () => {
    const ended = deriveSubscription(mergeProviderSubscription(granted(), provider({ status: 'canceled' }), starter, null), catalog);
    const subscribed = account({ plan_id: 'starter', status: 'active' });
    expect(accountPlanAfter(subscribed, ended, catalog, { boughtPack: true })).toEqual({ plan_id: 'standard', status: 'active' });
    // Credits held without a recorded purchase (granted by an operator, or free credits) count as a pack too.
    expect(accountPlanAfter({ ...subscribed, credits_micros: 1 }, ended, catalog, { boughtPack: false })).toEqual({ plan_id: 'standard', status: 'active' });
    expect(accountPlanAfter({ ...subscribed, free_credits_micros: 1 }, ended, catalog, { boughtPack: false })).toEqual({ plan_id: 'standard', status: 'active' });
  });

  it('makes an account that never had a pack pending again when its subscription ends (no free tier)', () => {
    const ended = deriveSubscription(mergeProviderSubscription(granted(), provider({ status: 'canceled' }), starter, null), catalog);
    expect(accountPlanAfter(account({ plan_id: 'starter', status: 'active' }), ended, catalog, { boughtPack: false })).toEqual({ plan_id: null, status: 'pending' });
  });
});
