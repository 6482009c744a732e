/**
 * The account, billing and subscription routes without a payment provider configured, and the refusal
 * paths every credentialed route of issue 5 shares: an API key on an ID-token-only route is 401, a valid
 * token without an account is 403 ACCOUNT_NOT_FOUND.
 */
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { tokenWithoutAccount } from '../support/tokens';
import { planCatalogue } from '../../functions/core/billing/plans';

let stack: TestStack;
let user: TestAccount;
/** The service's clock, held still where a test sets it (ID tokens are still checked against the real time). */
let pinned: Date | undefined;

beforeAll(async () => {
  stack = await startTestStack({}, { clock: { now: () => (pinned ? new Date(pinned) : new Date()) } });
  user = await stack.account({ credits_usd: 12.34, free_credits_usd: 0.5, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20 } });
});
afterAll(() => stack?.stop());

// Every row has three entries: jest passes a `done` callback to a test function with more parameters than the row.
const TOKEN_ONLY: [string, string, unknown][] = [
  ['GET', '/accounts/me', undefined],
  ['GET', '/accounts/me/billing', undefined],
  ['GET', '/accounts/me/credits', undefined],
  ['GET', '/accounts/me/subscription', undefined],
  ['POST', '/accounts/me/subscription/cancel', undefined],
  ['POST', '/accounts/me/subscription/resume', undefined],
  ['POST', '/accounts/me/subscription/change', { price_id: 'price_starter_monthly' }],
  ['POST', '/accounts/me/subscription/portal', undefined],
  ['GET', '/accounts/me/api-keys', undefined],
  ['POST', '/accounts/me/api-keys', { name: 'x' }],
  ['DELETE', '/accounts/me/api-keys/key_x', undefined],
  ['GET', '/plans', undefined],
  ['GET', '/plans/standard', undefined],
  ['GET', '/jobs', undefined],
];

describe('refusal paths of the account routes', () => {
  it.each(TOKEN_ONLY)('%s %s refuses an API key (401) and a missing credential (401)', async (method, route, json) => {
    for (const init of [{ key: user.api_key }, { headers: { Authorization: `Bearer ${user.api_key}` } }, {}]) {
      const res = await stack.request(method, route, { ...init, json });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('UNAUTHORIZED');
    }
  });

  it.each(TOKEN_ONLY)('%s %s answers 403 ACCOUNT_NOT_FOUND for a valid token without an account', async (method, route, json) => {
    const res = await stack.request(method, route, { token: await tokenWithoutAccount(stack), json });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('ACCOUNT_NOT_FOUND');
  });

  it('serves GET /me to a key and to a token, and refuses a token without an account', async () => {
    expect((await stack.request('GET', '/me', { key: user.api_key })).status).toBe(200);
    const res = await stack.request('GET', '/me', { token: await tokenWithoutAccount(stack) });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('ACCOUNT_NOT_FOUND');
  });
});

describe('GET /accounts/me/billing', () => {
  it('shows every field of the billing object, exact to the cent', async () => {
    const res = await stack.request('GET', '/accounts/me/billing', { token: user.id_token });
    expect(res.status).toBe(200);
    const { billing } = await res.json();
    expect(Object.keys(billing).sort()).toEqual(
      [
        'plan_id', 'plan_type', 'monthly_quota', 'credits_balance', 'free_credits_remaining', 'subscription_credits_remaining',
        'subscription_pdfs_remaining', 'subscription', 'total_pdf_count', 'total_amount', 'price_per_pdf',
      ].sort(),
    );
    expect(billing).toMatchObject({
      plan_id: 'standard',
      plan_type: 'pay_as_you_go',
      monthly_quota: 2000,
      credits_balance: 12.34,
      free_credits_remaining: 0.5,
      subscription_credits_remaining: 20,
      subscription_pdfs_remaining: 2000,
      total_pdf_count: 0,
      total_amount: 0,
      price_per_pdf: 0.01,
    });
    expect(Object.keys(billing.subscription).sort()).toEqual(
      [
        'subscription_id', 'status', 'name', 'price_id', 'price', 'monthly_pdfs', 'credits_remaining', 'pdfs_remaining',
        'period_start', 'period_end', 'active', 'scheduled_change',
      ].sort(),
    );
  });

  it('moves with charges: usage counters up, allowance down, to the cent', async () => {
    const other = await stack.account({ credits_usd: 1, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 0.03 } });
    for (let i = 0; i < 4; i++) {
      await stack.services.billing.charge({ account_id: other.account_id, job_id: `job_b${i}`, unit: 'pdf', operation: 'pdf', amount_micros: 10_000, pdf_count: 1 });
    }
    const { billing } = await (await stack.request('GET', '/accounts/me/billing', { token: other.id_token })).json();
    expect(billing).toMatchObject({ subscription_credits_remaining: 0, subscription_pdfs_remaining: 0, credits_balance: 0.99, total_pdf_count: 4, total_amount: 0.04 });
  });

  it('shows every field on both sides of a period ending at a UTC month boundary, to the millisecond', async () => {
    const charge = (accountId: string, jobId: string) =>
      stack.services.billing.charge({ account_id: accountId, job_id: jobId, unit: 'pdf', operation: 'pdf', amount_micros: 10_000, pdf_count: 1 });
    try {
      pinned = new Date('2031-01-31T23:59:59.999Z');
      // The end written with an offset is the same instant, stored and shown in UTC.
      const edge = await stack.account({
        plan_id: 'starter',
        credits_usd: 1,
        free_credits_usd: 0.01,
        subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20, period_end: '2031-02-01T01:00:00+01:00' },
      });
      const summary = async () => {
        const { billing } = await (await stack.request('GET', '/accounts/me/billing', { token: edge.id_token })).json();
        const me = await (await stack.request('GET', '/me', { key: edge.api_key })).json();
        expect(me.billing).toEqual(billing);
        return billing;
      };
      expect((await charge(edge.account_id, 'job_edge_before')).bucket).toBe('subscription');
      const before = await summary();
      expect(before).toEqual({
        plan_id: 'starter',
        plan_type: 'subscription',
        monthly_quota: 2000,
        credits_balance: 1,
        free_credits_remaining: 0.01,
        subscription_credits_remaining: 19.99,
        subscription_pdfs_remaining: 1999,
        subscription: expect.objectContaining({ status: 'active', active: true, credits_remaining: 19.99, pdfs_remaining: 1999, period_end: '2031-02-01T00:00:00.000Z' }),
        total_pdf_count: 1,
        total_amount: 0.01,
        price_per_pdf: 0.01,
      });

      // The period's last millisecond has passed: no event has come, yet the allowance is not usable any more.
      pinned = new Date('2031-02-01T00:00:00.000Z');
      const after = await summary();
      expect(after).toEqual({
        ...before,
        subscription_credits_remaining: 0,
        subscription_pdfs_remaining: 0,
        subscription: { ...before.subscription, active: false, credits_remaining: 0, pdfs_remaining: 0 },
      });
      // Rule 1 at the edge: free credits, then one-off credits.
      expect((await charge(edge.account_id, 'job_edge_after_1')).bucket).toBe('free_credits');
      expect((await charge(edge.account_id, 'job_edge_after_2')).bucket).toBe('credits');
      expect(await summary()).toMatchObject({ credits_balance: 0.99, free_credits_remaining: 0, subscription_credits_remaining: 0, total_pdf_count: 3, total_amount: 0.03 });
    } finally {
      pinned = undefined;
    }
  });

  it('shows a pending account as pending with zero balances', async () => {
    const pending = await stack.account({ plan_id: 'pending' });
    const { billing } = await (await stack.request('GET', '/accounts/me/billing', { token: pending.id_token })).json();
    expect(billing).toMatchObject({ plan_id: 'pending', plan_type: 'pending', credits_balance: 0, subscription: null, monthly_quota: null });
  });
});

describe('GET /accounts/me/credits', () => {
  it('lists the balances in charging order and the packs on offer', async () => {
    const res = await stack.request('GET', '/accounts/me/credits', { token: user.id_token });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.credits).toEqual({
      credits_balance: 12.34,
      free_credits_remaining: 0.5,
      subscription_credits_remaining: 20,
      subscription_pdfs_remaining: 2000,
      total_available: 32.84,
      pdfs_available: 3284,
      price_per_pdf: 0.01,
      currency: 'USD',
      bucket_order: ['subscription', 'free_credits', 'credits'],
    });
    expect(body.packs.map((p: { amount: number; pdfs: number }) => [p.amount, p.pdfs])).toEqual([[10, 1000], [100, 10000], [300, 30000], [700, 70000], [1000, 100000], [1500, 150000]]);
    expect(body.purchases).toEqual([]);
  });

  it("counts an allowance whose period ended by the service's clock as spent", async () => {
    try {
      pinned = new Date('2031-02-01T00:00:00.001Z');
      const lapsed = await stack.account({ plan_id: 'starter', credits_usd: 1, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20, period_end: '2031-02-01T00:00:00Z' } });
      const { credits } = await (await stack.request('GET', '/accounts/me/credits', { token: lapsed.id_token })).json();
      expect(credits).toMatchObject({ credits_balance: 1, subscription_credits_remaining: 0, subscription_pdfs_remaining: 0, total_available: 1, pdfs_available: 100 });
    } finally {
      pinned = undefined;
    }
  });

  it('lists the latest 20 purchases, newest first', async () => {
    const buyer = await stack.account();
    for (let i = 0; i < 21; i++) {
      const seen = (await stack.services.accounts.get(buyer.account_id))!;
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
      const purchase = { purchase_id: `pur_${i}`, amount_micros: 10_000_000, source: 'test', reference: `ref_${i}`, created_at: at.toISOString() };
      const next = { plan_id: seen.plan_id, status: seen.status, subscription: seen.subscription, stripe_customer_id: seen.stripe_customer_id };
      expect(await stack.services.billingState.commit({ seen, next, purchase }, at)).toBe('committed');
    }
    const { purchases } = await (await stack.request('GET', '/accounts/me/credits', { token: buyer.id_token })).json();
    expect(purchases.map((p: { purchase_id: string }) => p.purchase_id)).toEqual(Array.from({ length: 20 }, (_, i) => `pur_${20 - i}`));
  });
});

describe('without a payment provider', () => {
  it('still shows the subscription and the plans on offer', async () => {
    const sub = await (await stack.request('GET', '/accounts/me/subscription', { token: user.id_token })).json();
    expect(sub.subscription).toMatchObject({ name: 'Starter', status: 'active', active: true, credits_remaining: 20, pdfs_remaining: 2000, scheduled_change: null });
    const none = await stack.account();
    expect(await (await stack.request('GET', '/accounts/me/subscription', { token: none.id_token })).json()).toEqual({ subscription: null });
    const plans = await (await stack.request('GET', '/accounts/me/subscription/plans')).json();
    expect(plans.plans.map((p: { name: string; price: number; monthly_pdfs: number; price_id: string }) => [p.name, p.price, p.monthly_pdfs, p.price_id])).toEqual([
      ['Starter', 20, 2000, 'price_starter_monthly'],
      ['Business', 100, 10000, 'price_business_monthly'],
    ]);
  });

  it.each([
    ['/accounts/me/subscription/cancel', undefined],
    ['/accounts/me/subscription/resume', undefined],
    ['/accounts/me/subscription/change', { price_id: 'price_business_monthly' }],
  ])('POST %s without a subscription answers 409 NO_ACTIVE_SUBSCRIPTION, Stripe or not', async (route, json) => {
    const none = await stack.account({ credits_usd: 1 });
    const res = await stack.request('POST', route, { token: none.id_token, json });
    expect(res.status).toBe(409);
    expect((await res.json()).error.code).toBe('NO_ACTIVE_SUBSCRIPTION');
  });

  it.each([
    ['POST', '/accounts/me/subscription/cancel', undefined],
    ['POST', '/accounts/me/subscription/change', { price_id: 'price_business_monthly' }],
  ])('%s %s of a subscription answers 503 PAYMENTS_NOT_CONFIGURED', async (method, route, json) => {
    const res = await stack.request(method, route, { token: user.id_token, json });
    expect(res.status).toBe(503);
    const { error } = await res.json();
    expect(error).toMatchObject({ code: 'PAYMENTS_NOT_CONFIGURED', details: { setting: 'STRIPE_SECRET_KEY' } });
    expect(error.message).toMatch(/Stripe is not configured/);
  });

  it('answers the Stripe webhook with 503 PAYMENTS_NOT_CONFIGURED, so Stripe retries once it is configured', async () => {
    const res = await stack.request('POST', '/stripe/webhook', { body: '{"id":"evt_1"}', headers: { 'Stripe-Signature': 't=1,v1=00' } });
    expect(res.status).toBe(503);
    expect((await res.json()).error).toMatchObject({ code: 'PAYMENTS_NOT_CONFIGURED', details: { setting: 'STRIPE_WEBHOOK_SECRET' } });
  });
});

describe('GET /plans and GET /plans/{plan_id}', () => {
  it('lists only the active plans, with their count, priced in USD; one plan by its id', async () => {
    // A plan withdrawn from sale stays stored (accounts on it keep it) but is no longer listed.
    const retired = { ...planCatalogue()[0], plan_id: 'retired', name: 'Retired', active: false };
    await stack.services.plans.put([retired]);
    const list = await (await stack.request('GET', '/plans', { token: user.id_token })).json();
    expect(list.plans.map((p: { plan_id: string }) => p.plan_id).sort()).toEqual(['business', 'standard', 'starter']);
    expect(list.count).toBe(3);
    const res = await stack.request('GET', '/plans/standard', { token: user.id_token });
    expect(res.status).toBe(200);
    expect((await res.json()).plan).toMatchObject({ plan_id: 'standard', active: true, price_per_pdf: 0.01, price_per_pdf_operation: 0.0025, monthly_price: null });
  });
});
