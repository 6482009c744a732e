/**
 * Stripe end to end: signed events into POST /stripe/webhook and the subscription routes, with the service's
 * real `stripe` client talking to a loopback double of Stripe's API.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { Charge } from '../../functions/core/billing/charging';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { PRICES, type StripeDouble, TEST_WEBHOOK_SECRET, seconds, startStripeDouble } from '../support/stripe-double';

let double: StripeDouble;
let stack: TestStack;

beforeAll(async () => {
  double = await startStripeDouble();
  stack = await startTestStack(double.env());
});
afterAll(async () => {
  await stack?.stop();
  await double?.stop();
});

const DAY = 86_400_000;
/** Stripe times are whole seconds. */
const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString();
const cus = () => `cus_${randomBytes(6).toString('hex')}`;

async function deliver(type: string, object: unknown, opts: { id?: string; created?: number } = {}) {
  const { event, payload, signature } = double.signedEvent(type, object, opts);
  const res = await stack.request('POST', '/stripe/webhook', { body: payload, headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature } });
  return { status: res.status, body: await res.json(), event };
}

async function billing(user: TestAccount) {
  const res = await stack.request('GET', '/accounts/me/billing', { token: user.id_token });
  expect(res.status).toBe(200);
  return (await res.json()).billing;
}

async function subscription(user: TestAccount) {
  const res = await stack.request('GET', '/accounts/me/subscription', { token: user.id_token });
  expect(res.status).toBe(200);
  return (await res.json()).subscription;
}

function spend(accountId: string, usd: number, jobId = `job_spend_${randomBytes(4).toString('hex')}`) {
  const charge: Charge = { account_id: accountId, job_id: jobId, unit: 'pdf', operation: 'pdf', amount_micros: Math.round(usd * 1e6), pdf_count: Math.round(usd * 100) };
  return stack.services.billing.charge(charge);
}

/** A Starter (or other) subscription bought through checkout by `user`, in a period that started yesterday. */
async function subscribe(user: TestAccount, price = PRICES.starter) {
  const now = Date.now();
  const customer = cus();
  const periodStart = iso(now - DAY);
  const periodEnd = iso(now + 29 * DAY);
  const sub = double.subscription({ customer, price, periodStart, periodEnd });
  const session = double.checkoutSession({ mode: 'subscription', accountId: user.account_id, customer, subscription: sub.id });
  const res = await deliver('checkout.session.completed', session);
  expect(res.body).toMatchObject({ received: true, result: 'applied' });
  return { sub, customer, periodStart, periodEnd };
}

describe('POST /stripe/webhook: one-off credit packs', () => {
  it('credits a paid pack to credits_balance and turns a pending account into a paying one', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const blocked = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>x</p>' } });
    expect(blocked.status).toBe(402);

    const customer = cus();
    const session = double.checkoutSession({ mode: 'payment', accountId: user.account_id, customer, items: [{ price: PRICES.pack100 }] });
    const res = await deliver('checkout.session.completed', session);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, event_id: res.event.id, type: 'checkout.session.completed', result: 'applied', account_id: user.account_id });
    expect(double.requests.some((r) => r.method === 'GET' && r.path === `/v1/checkout/sessions/${session.id}/line_items`)).toBe(true);

    expect(await billing(user)).toMatchObject({ plan_id: 'standard', plan_type: 'pay_as_you_go', credits_balance: 100, subscription: null });
    const account = await stack.services.accounts.get(user.account_id);
    expect(account).toMatchObject({ status: 'active', credits_micros: 100_000_000, stripe_customer_id: customer });
    const ok = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>x</p>' } });
    expect(ok.status).toBe(200);
    expect((await billing(user)).credits_balance).toBe(99.99);

    const credits = await (await stack.request('GET', '/accounts/me/credits', { token: user.id_token })).json();
    expect(credits.purchases).toEqual([expect.objectContaining({ amount: 100, source: 'stripe_checkout', reference: session.id })]);
  });

  it('adds up several packs and quantities in one checkout', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const session = double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: PRICES.pack10, quantity: 3 }, { price: PRICES.pack1500 }] });
    expect((await deliver('checkout.session.completed', session)).body.result).toBe('applied');
    expect((await billing(user)).credits_balance).toBe(1530);
  });

  it('applies an event id once: redelivered and concurrent copies change nothing', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const session = double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: PRICES.pack10 }] });
    const first = await deliver('checkout.session.completed', session);
    expect(first.body.result).toBe('applied');
    // Stripe re-signs a retried delivery: same event id, fresh signature.
    const again = await deliver('checkout.session.completed', session, { id: first.event.id });
    expect(again.status).toBe(200);
    expect(again.body.result).toBe('duplicate');

    const other = double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: PRICES.pack10 }] });
    const eventId = `evt_concurrent_${randomBytes(4).toString('hex')}`;
    const results = await Promise.all(Array.from({ length: 8 }, () => deliver('checkout.session.completed', other, { id: eventId })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(results.filter((r) => r.body.result === 'applied')).toHaveLength(1);
    expect((await billing(user)).credits_balance).toBe(20);

    // The same for an event whose effect is not a purchase: a subscription update delivered many times at once.
    const { sub } = await subscribe(user);
    const updateId = `evt_sub_${randomBytes(4).toString('hex')}`;
    const updates = await Promise.all(Array.from({ length: 8 }, () => deliver('customer.subscription.updated', double.subscriptions.get(sub.id), { id: updateId })));
    expect(updates.map((r) => r.body.result).sort()).toEqual(['applied', ...Array(7).fill('duplicate')]);
    expect(await stack.services.billingState.eventApplied(updateId)).toBe(true);
  });

  it('applies 30 different checkouts of one account delivered at once, each once, without failing any into retries', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const results = await Promise.all(
      Array.from({ length: 30 }, () => deliver('checkout.session.completed', double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: PRICES.pack10 }] }))),
    );
    expect(results.map((r) => `${r.status} ${r.body.result}`)).toEqual(Array(30).fill('200 applied'));
    expect((await billing(user)).credits_balance).toBe(300);
  });

  it('credits a checkout once, whichever of its events lands (async payment methods)', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const unpaid = double.checkoutSession({ mode: 'payment', accountId: user.account_id, paymentStatus: 'unpaid', items: [{ price: PRICES.pack10 }] });
    expect((await deliver('checkout.session.completed', unpaid)).body).toMatchObject({ result: 'ignored', reason: 'payment_pending' });
    expect((await billing(user)).credits_balance).toBe(0);
    const paid = { ...unpaid, payment_status: 'paid' };
    expect((await deliver('checkout.session.async_payment_succeeded', paid)).body.result).toBe('applied');
    expect((await deliver('checkout.session.completed', paid)).body.result).toBe('duplicate');
    expect((await billing(user)).credits_balance).toBe(10);
  });

  it('ignores checkouts it cannot attribute or price, and event types it does not handle', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const foreign = double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: 'price_some_other_product' }] });
    expect((await deliver('checkout.session.completed', foreign)).body).toMatchObject({ result: 'ignored', reason: 'no_credit_pack' });
    const anonymous = double.checkoutSession({ mode: 'payment', accountId: null, items: [{ price: PRICES.pack10 }] });
    expect((await deliver('checkout.session.completed', anonymous)).body).toMatchObject({ result: 'ignored', reason: 'unknown_account' });
    expect((await deliver('customer.created', { id: cus(), object: 'customer' })).body).toMatchObject({ result: 'ignored', reason: 'event_type_not_handled' });
    expect(await stack.services.accounts.get(user.account_id)).toMatchObject({ status: 'pending', credits_micros: 0 });
  });

  it('answers 502 PAYMENT_PROVIDER_ERROR when Stripe cannot give the checkout\'s items, so that Stripe delivers it again', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    // A session the double does not know: its line items are 404 there.
    const unknown = { ...double.checkoutSession({ mode: 'payment', accountId: user.account_id }), id: 'cs_test_unknown' };
    const res = await deliver('checkout.session.completed', unknown);
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'PAYMENT_PROVIDER_ERROR' });
    expect(await stack.services.accounts.get(user.account_id)).toMatchObject({ status: 'pending', credits_micros: 0 });
  });
});

describe('POST /stripe/webhook: refunds and lost disputes of credit packs', () => {
  /** A pending account that bought a 100 USD pack (paid 100.00 USD) and has spent `spentUsd` of it. */
  async function boughtPack(spentUsd = 0) {
    const user = await stack.account({ plan_id: 'pending' });
    const session = double.checkoutSession({ mode: 'payment', accountId: user.account_id, customer: cus(), items: [{ price: PRICES.pack100 }] });
    expect((await deliver('checkout.session.completed', session)).body.result).toBe('applied');
    if (spentUsd > 0) await spend(user.account_id, spentUsd);
    return { user, session };
  }
  const credits = async (user: TestAccount) => (await stack.services.accounts.get(user.account_id))!.credits_micros;

  it('takes back the refunded share from the one-off balance, never below zero, once per event', async () => {
    const { user, session } = await boughtPack(30);
    const half = await deliver('charge.refunded', double.refundedCharge(session, 5_000));
    expect(half.status).toBe(200);
    expect(half.body).toMatchObject({ received: true, type: 'charge.refunded', result: 'applied', account_id: user.account_id });
    expect(await credits(user)).toBe(20_000_000);
    expect((await deliver('charge.refunded', double.refundedCharge(session, 5_000), { id: half.event.id })).body.result).toBe('duplicate');

    // The rest refunded: 50 USD of credits more are owed, 20 are left; the balance stops at zero.
    expect((await deliver('charge.refunded', double.refundedCharge(session, 10_000))).body.result).toBe('applied');
    expect(await credits(user)).toBe(0);
    const listed = await (await stack.request('GET', '/accounts/me/credits', { token: user.id_token })).json();
    expect(listed.purchases).toEqual([expect.objectContaining({ amount: 100, reference: session.id, revoked: 100 })]);
    expect(listed.credits.credits_balance).toBe(0);
    const blocked = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>x</p>' } });
    expect(blocked.status).toBe(403);
    expect((await blocked.json()).error.code).toBe('INSUFFICIENT_CREDITS');
  });

  it('applies one of many concurrent copies of a refund, and never overdraws against concurrent charges', async () => {
    const { user, session } = await boughtPack();
    const eventId = `evt_refund_${randomBytes(4).toString('hex')}`;
    const copies = await Promise.all(Array.from({ length: 6 }, () => deliver('charge.refunded', double.refundedCharge(session, 4_000), { id: eventId })));
    expect(copies.map((c) => c.body.result).sort()).toEqual(['applied', ...Array(5).fill('duplicate')]);
    expect(await credits(user)).toBe(60_000_000);

    // The rest refunded while 20 charges of 5 USD race it: whatever interleaving, the balance ends at zero or above,
    // and everything that left it is either a charge or the refund's recovered credits.
    const [refund, ...charges] = await Promise.all([
      deliver('charge.refunded', double.refundedCharge(session, 10_000)),
      ...Array.from({ length: 20 }, () => spend(user.account_id, 5).then(() => true, (err) => (err.code === 'INSUFFICIENT_CREDITS' ? false : Promise.reject(err)))),
    ]);
    expect(refund.body.result).toBe('applied');
    const charged = charges.filter(Boolean).length;
    const [purchase] = await stack.services.billingState.purchases(user.account_id, 1);
    const left = await credits(user);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(left).toBe(60_000_000 - charged * 5_000_000 - (purchase!.reversal!.recovered_micros - 40_000_000));
    expect(purchase!.reversal).toMatchObject({ refunded_minor: 10_000, revoked_micros: 100_000_000 });
  });

  it('takes back a lost dispute once and leaves a won one alone', async () => {
    const { user, session } = await boughtPack();
    expect((await deliver('charge.dispute.closed', double.dispute(session, 'won'))).body).toMatchObject({ result: 'ignored', reason: 'dispute_not_lost' });
    expect(await credits(user)).toBe(100_000_000);
    const lost = double.dispute(session, 'lost', 2_500);
    expect((await deliver('charge.dispute.closed', lost)).body).toMatchObject({ result: 'applied', account_id: user.account_id });
    expect(await credits(user)).toBe(75_000_000);
    expect((await deliver('charge.dispute.closed', lost)).body).toMatchObject({ result: 'ignored', reason: 'already_reversed' });
    expect(await credits(user)).toBe(75_000_000);
  });

  it('gives the credits back when Stripe reports the refund failed, and a late copy of the refund takes nothing again', async () => {
    const { user, session } = await boughtPack();
    const refunded = double.refundedCharge(session, 6_000);
    expect((await deliver('charge.refunded', refunded)).body.result).toBe('applied');
    expect(await credits(user)).toBe(40_000_000);
    const failed = await deliver('refund.failed', double.failRefund(session));
    expect(failed.body).toMatchObject({ result: 'applied', account_id: user.account_id });
    expect(await credits(user)).toBe(100_000_000);
    expect(double.requests.filter((r) => r.path === '/v1/refunds').at(-1)).toMatchObject({ method: 'GET', form: { charge: refunded.id } });
    // The charge.refunded event from before the failure, delivered again late: Stripe's total is what counts.
    expect((await deliver('charge.refunded', refunded)).body).toMatchObject({ result: 'ignored', reason: 'already_reversed' });
    expect(await credits(user)).toBe(100_000_000);
    const listed = await (await stack.request('GET', '/accounts/me/credits', { token: user.id_token })).json();
    expect(listed.purchases).toEqual([expect.objectContaining({ amount: 100, revoked: 0 })]);
  });

  it('applies a checkout whose own event has not come yet before taking its refund back, and credits it once', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const session = double.checkoutSession({ mode: 'payment', accountId: user.account_id, customer: cus(), items: [{ price: PRICES.pack100 }] });
    const refund = await deliver('charge.refunded', double.refundedCharge(session, 4_000));
    expect(refund.body).toMatchObject({ result: 'applied', account_id: user.account_id });
    expect(await stack.services.accounts.get(user.account_id)).toMatchObject({ status: 'active', credits_micros: 60_000_000 });
    // The checkout's event, delivered late, credits nothing more.
    expect((await deliver('checkout.session.completed', session)).body).toMatchObject({ result: 'duplicate' });
    expect(await credits(user)).toBe(60_000_000);
    const listed = await (await stack.request('GET', '/accounts/me/credits', { token: user.id_token })).json();
    expect(listed.purchases).toEqual([expect.objectContaining({ amount: 100, reference: session.id, revoked: 40 })]);
  });

  it('ignores refunds of payments that bought no pack (a subscription invoice)', async () => {
    const user = await stack.account({ plan_id: 'standard', credits_usd: 7 });
    const invoicePayment = { payment_intent: `pi_${randomBytes(6).toString('hex')}`, amount_total: 2_000 };
    expect((await deliver('charge.refunded', double.refundedCharge(invoicePayment, 2_000))).body).toMatchObject({ result: 'ignored', reason: 'not_a_credit_purchase' });
    expect(await credits(user)).toBe(7_000_000);
  });
});

describe('POST /stripe/webhook: correctly signed events that are not what Stripe documents', () => {
  /** Exactly these bytes, signed as the double signs its events (the stripe library's generateTestHeaderString with the endpoint secret). */
  async function deliverRaw(payload: string) {
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET });
    const res = await stack.request('POST', '/stripe/webhook', { body: payload, headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature } });
    return { status: res.status, body: await res.json() };
  }
  const envelope = (fields: Record<string, unknown>) => ({ object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), livemode: false, pending_webhooks: 1, ...fields });
  /** A paid checkout of a 100-credit pack for `user`: what a lenient reader of the body would credit. */
  const paidPack = (user: TestAccount, quantity = 1) => double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: PRICES.pack100, quantity }] });

  it.each<[string, (user: TestAccount, id: string) => string, (user: TestAccount, id: string) => Record<string, unknown>]>([
    [
      'a body that is not JSON (a paid pack event cut short)',
      (user, id) => JSON.stringify(envelope({ id, type: 'checkout.session.completed', data: { object: paidPack(user) } })).slice(0, -1),
      () => ({ event_id: null, type: null, result: 'ignored', reason: 'malformed_event' }),
    ],
    [
      'JSON without a type (around a paid pack checkout)',
      (user, id) => JSON.stringify(envelope({ id, data: { object: paidPack(user) } })),
      (_user, id) => ({ event_id: id, type: null, result: 'ignored', reason: 'malformed_event' }),
    ],
    [
      'a checkout.session.completed without its object',
      (_user, id) => JSON.stringify(envelope({ id, type: 'checkout.session.completed', data: {} })),
      (_user, id) => ({ event_id: id, type: 'checkout.session.completed', result: 'ignored', reason: 'malformed_event' }),
    ],
    [
      'a checkout.session.completed whose line item quantity is not a whole number',
      (user, id) => JSON.stringify(envelope({ id, type: 'checkout.session.completed', data: { object: paidPack(user, 1.5) } })),
      (user, id) => ({ event_id: id, type: 'checkout.session.completed', result: 'ignored', reason: 'invalid_quantity', account_id: user.account_id }),
    ],
  ])('settles %s with 200 ignored and changes no balance', async (_what, payload, expected) => {
    const user = await stack.account({ plan_id: 'pending', credits_usd: 3 });
    const before = await stack.services.accounts.get(user.account_id);
    const id = `evt_malformed_${randomBytes(6).toString('hex')}`;
    const res = await deliverRaw(payload(user, id));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, ...expected(user, id) });
    const after = await stack.services.accounts.get(user.account_id);
    expect({ status: after!.status, plan_id: after!.plan_id, credits_micros: after!.credits_micros, subscription: after!.subscription }).toEqual({
      status: before!.status,
      plan_id: before!.plan_id,
      credits_micros: 3_000_000,
      subscription: before!.subscription,
    });
    expect((await billing(user)).credits_balance).toBe(3);
    expect(await stack.services.billingState.eventApplied(id)).toBe(false);
  });
});

describe('POST /stripe/webhook: forged and replayed events', () => {
  async function expectRefused(res: Response) {
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('INVALID_SIGNATURE');
  }

  it('refuses a missing, wrong-secret, tampered or stale signature and changes nothing', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const session = double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: PRICES.pack1500 }] });
    const post = (body: string, signature?: string) =>
      stack.request('POST', '/stripe/webhook', { body, headers: { 'Content-Type': 'application/json', ...(signature ? { 'Stripe-Signature': signature } : {}) } });

    const forged = double.signedEvent('checkout.session.completed', session, { secret: 'whsec_attacker' });
    await expectRefused(await post(forged.payload));
    await expectRefused(await post(forged.payload, forged.signature));

    const genuine = double.signedEvent('checkout.session.completed', double.checkoutSession({ mode: 'payment', accountId: user.account_id, items: [{ price: PRICES.pack10 }] }));
    await expectRefused(await post(genuine.payload.replace(PRICES.pack10, PRICES.pack1500).replace('"paid"', '"paid" '), genuine.signature));
    await expectRefused(await post(forged.payload, genuine.signature));

    // A captured delivery replayed after the tolerance window (5 minutes).
    const old = double.signedEvent('checkout.session.completed', session, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    await expectRefused(await post(old.payload, old.signature));

    expect(await stack.services.accounts.get(user.account_id)).toMatchObject({ status: 'pending', credits_micros: 0 });
    expect(await stack.services.billingState.eventApplied(forged.event.id)).toBe(false);
  });
});

describe('subscriptions through Stripe', () => {
  it('starts a subscription from checkout with its full allowance', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub, periodStart, periodEnd, customer } = await subscribe(user);
    expect(await subscription(user)).toEqual({
      subscription_id: sub.id,
      status: 'active',
      name: 'Starter',
      price_id: PRICES.starter,
      price: 20,
      monthly_pdfs: 2000,
      credits_remaining: 20,
      pdfs_remaining: 2000,
      period_start: periodStart,
      period_end: periodEnd,
      active: true,
      scheduled_change: null,
    });
    expect(await billing(user)).toMatchObject({ plan_id: 'starter', plan_type: 'subscription', monthly_quota: 2000, subscription_credits_remaining: 20, subscription_pdfs_remaining: 2000 });

    // The subscription's own events and its first invoice follow; none of them grants the allowance again.
    await spend(user.account_id, 0.5);
    // The creation event comes after the checkout read the subscription: it is older than what is stored.
    expect((await deliver('customer.subscription.created', double.subscriptions.get(sub.id))).body).toMatchObject({ result: 'ignored', reason: 'stale_event' });
    const invoice = double.invoice({ customer, subscription: sub.id, price: PRICES.starter, periodStart, periodEnd, billingReason: 'subscription_create' });
    expect((await deliver('invoice.paid', invoice)).body).toMatchObject({ result: 'ignored', reason: 'allowance_already_granted' });
    expect((await billing(user)).subscription_credits_remaining).toBe(19.5);
  });

  it('resets the allowance to the plan amount at renewal, with no rollover, and its invoice grants nothing more', async () => {
    const user = await stack.account({ plan_id: 'pending', credits_usd: 3 });
    const { sub, customer, periodEnd } = await subscribe(user);
    await spend(user.account_id, 5);
    expect((await billing(user)).subscription_credits_remaining).toBe(15);

    const nextStart = periodEnd;
    const nextEnd = iso(Date.parse(periodEnd) + 30 * DAY);
    // Stripe moves the period first and collects the renewal invoice about an hour later: the allowance resets at once.
    const renewed = double.renew(sub.id, nextStart, nextEnd);
    expect((await deliver('customer.subscription.updated', renewed)).body.result).toBe('applied');
    expect(await subscription(user)).toMatchObject({ period_start: nextStart, period_end: nextEnd, credits_remaining: 20, status: 'active' });
    await spend(user.account_id, 1);

    const invoice = double.invoice({ customer, subscription: sub.id, price: PRICES.starter, periodStart: nextStart, periodEnd: nextEnd });
    expect((await deliver('invoice.paid', invoice)).body).toMatchObject({ result: 'ignored', reason: 'allowance_already_granted' });
    expect(await billing(user)).toMatchObject({ subscription_credits_remaining: 19, subscription_pdfs_remaining: 1900, credits_balance: 3 });
  });

  it('grants a renewal that starts past due only when its invoice is paid', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub, customer, periodEnd } = await subscribe(user);
    const nextEnd = iso(Date.parse(periodEnd) + 30 * DAY);
    const pastDue = { ...double.renew(sub.id, periodEnd, nextEnd), status: 'past_due' };
    expect((await deliver('customer.subscription.updated', pastDue)).body.result).toBe('applied');
    expect(await subscription(user)).toMatchObject({ status: 'past_due', credits_remaining: 0, active: false });
    await deliver('customer.subscription.updated', { ...pastDue, status: 'active' }, { created: Math.floor(Date.now() / 1000) + 1 });
    const invoice = double.invoice({ customer, subscription: sub.id, price: PRICES.starter, periodStart: periodEnd, periodEnd: nextEnd });
    expect((await deliver('invoice.paid', invoice)).body.result).toBe('applied');
    expect(await subscription(user)).toMatchObject({ status: 'active', credits_remaining: 20 });
  });

  it('grants the renewal when its invoice arrives before the period update', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub, customer, periodEnd } = await subscribe(user);
    await spend(user.account_id, 1);
    const nextEnd = iso(Date.parse(periodEnd) + 30 * DAY);
    const invoice = double.invoice({ customer, subscription: sub.id, price: PRICES.starter, periodStart: periodEnd, periodEnd: nextEnd });
    expect((await deliver('invoice.paid', invoice)).body.result).toBe('applied');
    expect(await subscription(user)).toMatchObject({ period_start: periodEnd, period_end: nextEnd, credits_remaining: 20 });
    expect((await deliver('customer.subscription.updated', double.renew(sub.id, periodEnd, nextEnd))).body.result).toBe('applied');
    expect((await subscription(user)).credits_remaining).toBe(20);
  });

  it('cancels at period end, keeps the allowance until then, and resumes', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub, periodEnd } = await subscribe(user);
    const res = await stack.request('POST', '/accounts/me/subscription/cancel', { token: user.id_token });
    expect(res.status).toBe(200);
    const { subscription: cancelled } = await res.json();
    expect(cancelled).toMatchObject({ status: 'active', active: true, credits_remaining: 20, scheduled_change: { action: 'cancel', effective_at: periodEnd } });
    expect(double.requests.find((r) => r.method === 'POST' && r.path === `/v1/subscriptions/${sub.id}`)?.form).toEqual({ cancel_at_period_end: 'true' });
    expect(double.subscriptions.get(sub.id).cancel_at_period_end).toBe(true);

    // Cancelling again is harmless.
    expect((await stack.request('POST', '/accounts/me/subscription/cancel', { token: user.id_token })).status).toBe(200);

    const resumed = await stack.request('POST', '/accounts/me/subscription/resume', { token: user.id_token });
    expect(resumed.status).toBe(200);
    expect((await resumed.json()).subscription).toMatchObject({ status: 'active', scheduled_change: null, credits_remaining: 20 });
    expect(double.subscriptions.get(sub.id).cancel_at_period_end).toBe(false);
  });

  it('removes the allowance when the subscription ends; one-off credits keep working (rule 8)', async () => {
    const user = await stack.account({ plan_id: 'pending', credits_usd: 5 });
    const { sub } = await subscribe(user);
    const ended = { ...double.subscriptions.get(sub.id), status: 'canceled', ended_at: Math.floor(Date.now() / 1000) };
    expect((await deliver('customer.subscription.deleted', ended)).body.result).toBe('applied');
    expect(await billing(user)).toMatchObject({
      plan_id: 'standard',
      subscription_credits_remaining: 0,
      credits_balance: 5,
      subscription: expect.objectContaining({ status: 'canceled', active: false, credits_remaining: 0, scheduled_change: null }),
    });
    expect((await spend(user.account_id, 0.01)).bucket).toBe('credits');
    expect(double.requests.filter((r) => r.path === `/v1/subscriptions/${sub.id}` && r.method === 'POST')).toHaveLength(0);
    const change = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.business } });
    expect(change.status).toBe(409);
    expect((await change.json()).error.code).toBe('NO_ACTIVE_SUBSCRIPTION');
  });

  it('upgrades at once with proration and adds the difference to the allowance, once', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    await spend(user.account_id, 5);
    const res = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.business } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.change).toBe('upgraded');
    expect(body.subscription).toMatchObject({ name: 'Business', price_id: PRICES.business, price: 100, monthly_pdfs: 10000, credits_remaining: 95, scheduled_change: null });
    const call = double.requests.filter((r) => r.method === 'POST' && r.path === `/v1/subscriptions/${sub.id}`).at(-1)!;
    expect(call.form).toMatchObject({ 'items[0][price]': PRICES.business, proration_behavior: 'always_invoice', payment_behavior: 'error_if_incomplete' });

    // Stripe's own update event for the same change adds nothing more.
    expect((await deliver('customer.subscription.updated', double.subscriptions.get(sub.id))).body.result).toBe('applied');
    expect(await billing(user)).toMatchObject({ plan_id: 'business', subscription_credits_remaining: 95, subscription_pdfs_remaining: 9500 });
  });

  it('makes an upgrade asked for four times at once once at Stripe (one proration invoice), adding the difference once', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.business } })),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const changes = double.requests.filter((r) => r.method === 'POST' && r.path === `/v1/subscriptions/${sub.id}` && r.form['items[0][price]']);
    expect(changes.length).toBeGreaterThanOrEqual(1);
    expect(new Set(changes.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(changes.filter((r) => !r.replayed)).toHaveLength(1);
    expect(await billing(user)).toMatchObject({ plan_id: 'business', subscription_credits_remaining: 100 });
  });

  it('loses no charge that spends the allowance while an upgrade is applied', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const upgraded = { ...double.subscriptions.get(sub.id), items: { ...double.subscriptions.get(sub.id).items, data: [{ ...double.subscriptions.get(sub.id).items.data[0], price: double.price(PRICES.business) }] } };
    const [results] = await Promise.all([
      Promise.all(Array.from({ length: 30 }, (_, i) => spend(user.account_id, 0.01, `job_race_${i}`))),
      deliver('customer.subscription.updated', upgraded),
    ]);
    expect(results.every((r) => r.bucket === 'subscription')).toBe(true);
    // 20 + (100 - 20) - 30 × 0.01, to the micro-dollar.
    expect((await stack.services.accounts.get(user.account_id))!.subscription!.allowance_micros).toBe(99_700_000);
  });

  it('makes an account that never bought a pack pending again when its subscription ends (no free tier: 402)', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const ended = { ...double.subscriptions.get(sub.id), status: 'canceled', ended_at: Math.floor(Date.now() / 1000) };
    expect((await deliver('customer.subscription.deleted', ended)).body.result).toBe('applied');
    expect(await billing(user)).toMatchObject({ plan_type: 'pending', credits_balance: 0, subscription: expect.objectContaining({ status: 'canceled' }) });
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>hello</p>' } });
    expect(res.status).toBe(402);
    expect((await res.json()).error.code).toBe('UPGRADE_REQUIRED');
  });

  it('schedules a downgrade for the renewal and applies it there', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub, customer, periodEnd } = await subscribe(user, PRICES.business);
    await spend(user.account_id, 10);
    const res = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.starter } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.change).toBe('downgrade_scheduled');
    expect(body.subscription).toMatchObject({
      name: 'Business',
      price: 100,
      credits_remaining: 90,
      scheduled_change: { action: 'downgrade', effective_at: periodEnd, price_id: PRICES.starter, name: 'Starter', monthly_pdfs: 2000 },
    });
    expect(double.requests.filter((r) => r.path === `/v1/subscriptions/${sub.id}`).at(-1)!.form).toMatchObject({ proration_behavior: 'none' });

    const nextEnd = iso(Date.parse(periodEnd) + 30 * DAY);
    await deliver('customer.subscription.updated', double.renew(sub.id, periodEnd, nextEnd));
    await deliver('invoice.paid', double.invoice({ customer, subscription: sub.id, price: PRICES.starter, periodStart: periodEnd, periodEnd: nextEnd }));
    expect(await subscription(user)).toMatchObject({ name: 'Starter', price: 20, monthly_pdfs: 2000, credits_remaining: 20, scheduled_change: null });
    expect((await billing(user)).plan_id).toBe('starter');
  });

  it('undoes a scheduled downgrade by changing back to the plan in effect', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    await subscribe(user, PRICES.business);
    await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.starter } });
    const back = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.business } });
    const body = await back.json();
    expect(body.change).toBe('downgrade_cancelled');
    expect(body.subscription).toMatchObject({ name: 'Business', credits_remaining: 100, scheduled_change: null });
    const same = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.business } });
    expect((await same.json()).change).toBe('unchanged');
  });

  it('makes each change of a back-and-forth within one minute at Stripe (no replay of an earlier change)', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user, PRICES.business);
    const change = async (price_id: string) => {
      const res = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id } });
      expect(res.status).toBe(200);
      return res.json();
    };
    expect((await change(PRICES.starter)).change).toBe('downgrade_scheduled');
    expect((await change(PRICES.business)).change).toBe('downgrade_cancelled');
    const again = await change(PRICES.starter);
    expect(again.change).toBe('downgrade_scheduled');
    expect(again.subscription.scheduled_change).toMatchObject({ action: 'downgrade', price_id: PRICES.starter });
    // What the service shows is what Stripe will bill at renewal.
    expect(double.subscriptions.get(sub.id).items.data[0].price.id).toBe(PRICES.starter);

    const other = await stack.account({ plan_id: 'pending' });
    await subscribe(other);
    for (const [price_id, result] of [[PRICES.business, 'upgraded'], [PRICES.starter, 'downgrade_scheduled'], [PRICES.business, 'downgrade_cancelled']]) {
      const res = await stack.request('POST', '/accounts/me/subscription/change', { token: other.id_token, json: { price_id } });
      expect(res.status).toBe(200);
      expect((await res.json()).change).toBe(result);
    }
  });

  it('refuses an unknown price, and a change without an active subscription', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const none = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.business } });
    expect(none.status).toBe(409);
    expect((await none.json()).error.code).toBe('NO_ACTIVE_SUBSCRIPTION');
    for (const cancelOrResume of ['cancel', 'resume']) {
      const r = await stack.request('POST', `/accounts/me/subscription/${cancelOrResume}`, { token: user.id_token });
      expect(r.status).toBe(409);
    }
    await subscribe(user);
    for (const json of [{ price_id: 'price_unknown' }, {}, { price_id: 7 }, undefined]) {
      const r = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json });
      expect(r.status).toBe(400);
      expect((await r.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'price_id' } });
    }
    // The price id sent comes back quoted, escaped and cut short, never raw (a right-to-left override, a megabyte).
    const hostile = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: `price_\u202E\u0000${'x'.repeat(100_000)}` } });
    const { message } = (await hostile.json()).error;
    expect(message).toMatch(/^"price_\\u202e\\u0000x+…" is not a subscription plan on offer/);
    expect(message.length).toBeLessThan(300);
  });

  it('answers a declined upgrade with 402 PAYMENT_FAILED and changes nothing', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    await subscribe(user);
    double.failNext = { status: 402, error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } };
    const res = await stack.request('POST', '/accounts/me/subscription/change', { token: user.id_token, json: { price_id: PRICES.business } });
    expect(res.status).toBe(402);
    expect((await res.json()).error.code).toBe('PAYMENT_FAILED');
    expect(await subscription(user)).toMatchObject({ name: 'Starter', credits_remaining: 20 });
  });

  it('shows a paused collection as a scheduled pause, then paused once a period starts unpaid', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub, periodEnd } = await subscribe(user);
    // Paused in Stripe (the customer portal): the subscription as Stripe holds it, and the event, say so.
    const live = double.subscriptions.get(sub.id);
    live.pause_collection = { behavior: 'void', resumes_at: null };
    await deliver('customer.subscription.updated', { ...live });
    expect(await subscription(user)).toMatchObject({ status: 'active', active: true, scheduled_change: { action: 'pause', effective_at: periodEnd } });
    const next = double.renew(sub.id, periodEnd, iso(Date.parse(periodEnd) + 30 * DAY));
    await deliver('customer.subscription.updated', { ...next });
    expect(await subscription(user)).toMatchObject({ status: 'paused', active: false, credits_remaining: 0, scheduled_change: null });
  });

  it('follows past_due, unpaid, paused and resumed: the allowance is unusable while not live and comes back, GET /me agreeing', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub, customer, periodEnd } = await subscribe(user);
    await spend(user.account_id, 5);
    let created = Math.floor(Date.now() / 1000);
    const move = async (type: string, changes: Record<string, unknown>) => {
      const object = { ...double.subscriptions.get(sub.id), ...changes };
      double.subscriptions.set(sub.id, object);
      expect((await deliver(type, object, { created: ++created })).body.result).toBe('applied');
      const shown = await subscription(user);
      const me = await (await stack.request('GET', '/me', { key: user.api_key })).json();
      // One view of the account: GET /me carries the same billing summary as GET /accounts/me/billing.
      expect(me.billing).toEqual(await billing(user));
      expect(me.billing.subscription).toEqual(shown);
      expect(me.billing.subscription_credits_remaining).toBe(shown.credits_remaining);
      return shown;
    };
    const quick = async () => (await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>x</p>' } })).status;

    expect(await move('customer.subscription.updated', { status: 'past_due' })).toMatchObject({ status: 'past_due', active: false, credits_remaining: 0, pdfs_remaining: 0 });
    expect(await quick()).toBe(403);
    // Stripe's unpaid is shown as past_due (the five statuses of the spec).
    expect(await move('customer.subscription.updated', { status: 'unpaid' })).toMatchObject({ status: 'past_due', active: false, credits_remaining: 0 });
    // Paid again within the same period: what was left of this period's allowance is usable again, not reset.
    expect(await move('customer.subscription.updated', { status: 'active' })).toMatchObject({ status: 'active', active: true, credits_remaining: 15, pdfs_remaining: 1500 });
    expect(await quick()).toBe(200);
    expect(await move('customer.subscription.paused', { status: 'paused' })).toMatchObject({ status: 'paused', active: false, credits_remaining: 0, scheduled_change: null });
    expect(await quick()).toBe(403);
    // Resumed: Stripe starts a new period at once, which is live, so the allowance is the plan amount (no rollover).
    const start = iso(Date.now());
    const end = iso(Date.now() + 30 * DAY);
    double.renew(sub.id, start, end);
    expect(await move('customer.subscription.resumed', { status: 'active' })).toMatchObject({ status: 'active', active: true, credits_remaining: 20, period_start: start, period_end: end });
    const invoice = double.invoice({ customer, subscription: sub.id, price: PRICES.starter, periodStart: start, periodEnd: end });
    expect((await deliver('invoice.paid', invoice)).body).toMatchObject({ result: 'ignored', reason: 'allowance_already_granted' });
    expect((await billing(user)).subscription_credits_remaining).toBe(20);
    expect(periodEnd < end).toBe(true);
  });

  it('ignores an event older than the last one applied', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const now = Math.floor(Date.now() / 1000);
    const cancelling = { ...double.subscriptions.get(sub.id), cancel_at_period_end: true };
    expect((await deliver('customer.subscription.updated', cancelling, { created: now })).body.result).toBe('applied');
    const stale = { ...double.subscriptions.get(sub.id), cancel_at_period_end: false };
    expect((await deliver('customer.subscription.updated', stale, { created: now - 60 })).body).toMatchObject({ result: 'ignored', reason: 'stale_event' });
    expect((await subscription(user)).scheduled_change).toMatchObject({ action: 'cancel' });
  });

  it('keeps a paid subscription live when its creation event (incomplete) arrives late or stamped the same second as an update', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const now = Math.floor(Date.now() / 1000);
    const created = { ...double.subscriptions.get(sub.id), status: 'incomplete' };
    // After the checkout (a read of the subscription, no event time): a creation event 10 s older.
    expect((await deliver('customer.subscription.created', created, { created: now - 10 })).body).toMatchObject({ result: 'ignored', reason: 'stale_event' });
    expect(await subscription(user)).toMatchObject({ status: 'active', active: true, credits_remaining: 20 });
    // After an update stamped the same second.
    expect((await deliver('customer.subscription.updated', double.subscriptions.get(sub.id), { created: now })).body.result).toBe('applied');
    expect((await deliver('customer.subscription.created', created, { created: now })).body).toMatchObject({ result: 'ignored', reason: 'stale_event' });
    expect(await subscription(user)).toMatchObject({ status: 'active', active: true, credits_remaining: 20 });
    expect((await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>x</p>' } })).status).toBe(200);
  });

  it("applies Stripe's current view of a subscription when an update arrives stamped the same second as the last one applied", async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const now = Math.floor(Date.now() / 1000);
    const live = { ...double.subscriptions.get(sub.id) };
    // Two updates in one second: the first-made (unpaid) arrives after the later one (paid, active).
    expect((await deliver('customer.subscription.updated', live, { created: now })).body.result).toBe('applied');
    const reads = double.requests.filter((r) => r.path === `/v1/subscriptions/${sub.id}`).length;
    expect((await deliver('customer.subscription.updated', { ...live, status: 'incomplete' }, { created: now })).body.result).toBe('applied');
    expect(double.requests.filter((r) => r.path === `/v1/subscriptions/${sub.id}`).length).toBe(reads + 1);
    expect(await subscription(user)).toMatchObject({ status: 'active', active: true, credits_remaining: 20 });
    // A later second is applied as the event says.
    expect((await deliver('customer.subscription.updated', { ...live, status: 'past_due' }, { created: now + 1 })).body.result).toBe('applied');
    expect(await subscription(user)).toMatchObject({ status: 'past_due', active: false });
  });

  it('keeps a cancelled subscription cancelled when an older update arrives stamped the same second', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const now = Math.floor(Date.now() / 1000);
    const live = { ...double.subscriptions.get(sub.id) };
    expect((await deliver('customer.subscription.deleted', { ...live, status: 'canceled' }, { created: now })).body.result).toBe('applied');
    expect((await deliver('customer.subscription.updated', live, { created: now })).body).toMatchObject({ result: 'ignored', reason: 'stale_event' });
    expect(await subscription(user)).toMatchObject({ status: 'canceled', active: false });
  });

  it('gives a customer-portal link', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const without = await stack.request('POST', '/accounts/me/subscription/portal', { token: user.id_token });
    expect(without.status).toBe(409);
    expect((await without.json()).error.code).toBe('NO_BILLING_CUSTOMER');
    const { customer } = await subscribe(user);
    const res = await stack.request('POST', '/accounts/me/subscription/portal', { token: user.id_token });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: expect.stringMatching(/^https:\/\/billing\.stripe\.test\/p\/session\//) });
    expect(double.requests.filter((r) => r.path === '/v1/billing_portal/sessions').at(-1)!.form).toEqual({ customer, return_url: 'https://dashboard.example.com/billing' });
  });

  it('stops an allowance whose period ended without touching one-off credits', async () => {
    const user = await stack.account({ plan_id: 'pending', credits_usd: 2 });
    const customer = cus();
    const sub = double.subscription({ customer, price: PRICES.starter, periodStart: iso(Date.now() - 40 * DAY), periodEnd: iso(Date.now() - 10 * DAY) });
    await deliver('checkout.session.completed', double.checkoutSession({ mode: 'subscription', accountId: user.account_id, customer, subscription: sub.id }));
    expect(await billing(user)).toMatchObject({
      subscription_credits_remaining: 0,
      subscription_pdfs_remaining: 0,
      credits_balance: 2,
      subscription: expect.objectContaining({ status: 'active', active: false, credits_remaining: 0 }),
    });
    expect((await spend(user.account_id, 0.01)).bucket).toBe('credits');
    const account = await stack.services.accounts.get(user.account_id);
    expect(account!.subscription!.allowance_micros).toBe(20_000_000);
    expect(account!.credits_micros).toBe(1_990_000);
  });

  it('lists the subscription plans on offer without a credential', async () => {
    const res = await stack.request('GET', '/accounts/me/subscription/plans');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.count).toBe(2);
    expect(body.plans).toEqual([
      expect.objectContaining({ plan_id: 'starter', price_id: PRICES.starter, name: 'Starter', price: 20, monthly_pdfs: 2000 }),
      expect.objectContaining({ plan_id: 'business', price_id: PRICES.business, name: 'Business', price: 100, monthly_pdfs: 10000 }),
    ]);
  });

  it('lists the configured credit packs', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const body = await (await stack.request('GET', '/accounts/me/credits', { token: user.id_token })).json();
    expect(body.packs.map((p: { amount: number }) => p.amount)).toEqual([10, 100, 300, 700, 1000, 1500]);
    expect(body.packs[0]).toEqual({ price_id: PRICES.pack10, amount: 10, currency: 'USD', pdfs: 1000 });
  });
});

describe('subscription periods in the events', () => {
  it('reads the period from the subscription items', async () => {
    const user = await stack.account({ plan_id: 'pending' });
    const { sub } = await subscribe(user);
    const stored = (await stack.services.accounts.get(user.account_id))!.subscription!;
    expect(stored.period_start).toBe(new Date(sub.items.data[0].current_period_start * 1000).toISOString());
    expect(seconds(stored.period_end)).toBe(sub.items.data[0].current_period_end);
  });
});
