/** StripePaymentProvider through the real `stripe` client against the loopback double. */
import { StripePaymentProvider } from '../../../../functions/adapters/stripe/provider';
import { PRICES, type StripeDouble, TEST_SECRET_KEY, startStripeDouble } from '../../../support/stripe-double';

let double: StripeDouble;
let provider: StripePaymentProvider;

beforeAll(async () => {
  double = await startStripeDouble();
  provider = new StripePaymentProvider({ secretKey: TEST_SECRET_KEY, host: '127.0.0.1', port: double.port, protocol: 'http' });
});
afterAll(() => double.stop());

describe('StripePaymentProvider.checkoutLineItems', () => {
  it('passes quantities on as Stripe reports them', async () => {
    const s = double.checkoutSession({ mode: 'payment', items: [{ price: PRICES.pack10, quantity: 3 }, { price: PRICES.pack100, quantity: 0 }] });
    expect(await provider.checkoutLineItems(s.id)).toEqual([
      { price_id: PRICES.pack10, quantity: 3 },
      { price_id: PRICES.pack100, quantity: 0 },
    ]);
  });

  it('never reads a missing quantity as one pack (Stripe always sets it on line items)', async () => {
    const s = double.checkoutSession({ mode: 'payment', items: [{ price: PRICES.pack1500 }] });
    double.lineItems.set(s.id, [{ price: PRICES.pack1500, quantity: null as unknown as number }]);
    const [item] = await provider.checkoutLineItems(s.id);
    expect(item.price_id).toBe(PRICES.pack1500);
    expect(Number.isInteger(item.quantity)).toBe(false);
  });
});

describe('StripePaymentProvider.checkoutForPayment', () => {
  it('finds the checkout session a payment intent paid, and null for a payment no checkout made', async () => {
    const account = `acc_${Date.now()}`;
    const s = double.checkoutSession({ mode: 'payment', accountId: account, customer: 'cus_x', items: [{ price: PRICES.pack100 }] });
    double.checkoutSession({ mode: 'payment', items: [{ price: PRICES.pack10 }] });
    expect(await provider.checkoutForPayment(s.payment_intent)).toEqual({
      id: s.id,
      mode: 'payment',
      payment_status: 'paid',
      account_ref: account,
      customer_id: 'cus_x',
      subscription_id: null,
      payment_ref: s.payment_intent,
      amount_paid_minor: s.amount_total,
    });
    expect(double.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/checkout/sessions', form: { payment_intent: s.payment_intent, limit: '1' } });
    expect(await provider.checkoutForPayment('pi_from_an_invoice')).toBeNull();
  });
});

describe('StripePaymentProvider.refundedTotal', () => {
  it('adds up the charge\'s refunds that are done or under way, not those that failed or were cancelled', async () => {
    const s = double.checkoutSession({ mode: 'payment', items: [{ price: PRICES.pack100 }] });
    const charge = double.refundedCharge(s, 3_000);
    double.refundedCharge(s, 7_000);
    expect(await provider.refundedTotal(charge.id)).toBe(7_000);
    double.failRefund(s);
    expect(await provider.refundedTotal(charge.id)).toBe(3_000);
    double.refunds.get(charge.id)!.push({ id: 're_pending', object: 'refund', amount: 500, charge: charge.id, status: 'pending' }, { id: 're_canceled', object: 'refund', amount: 900, charge: charge.id, status: 'canceled' });
    expect(await provider.refundedTotal(charge.id)).toBe(3_500);
    expect(await provider.refundedTotal('ch_never_refunded')).toBe(0);
  });

  it('reads every page of a charge with more refunds than one page holds', async () => {
    const s = double.checkoutSession({ mode: 'payment', items: [{ price: PRICES.pack1500 }] });
    const charge = double.refundedCharge(s, 1);
    const refunds = double.refunds.get(charge.id)!;
    for (let i = 0; i < 130; i++) refunds.push({ id: `re_many_${i}`, object: 'refund', amount: 10, charge: charge.id, status: i % 10 === 0 ? 'failed' : 'succeeded' });
    // 1 + 117 refunds of 10 that went through; the 13 failed ones are not money returned.
    expect(await provider.refundedTotal(charge.id)).toBe(1 + 117 * 10);
    expect(double.requests.filter((r) => r.path === '/v1/refunds' && r.form.charge === charge.id)).toHaveLength(2);
  });
});

describe('StripePaymentProvider.portalUrl', () => {
  it('asks for a portal session of the customer that returns to the given page, and to Stripe\'s default without one', async () => {
    expect(await provider.portalUrl('cus_portal', 'https://app.example/billing')).toEqual(expect.any(String));
    expect(double.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/billing_portal/sessions', form: { customer: 'cus_portal', return_url: 'https://app.example/billing' } });
    await provider.portalUrl('cus_other', undefined);
    expect(double.requests.at(-1)?.form).toEqual({ customer: 'cus_other' });
  });
});

describe('StripePaymentProvider refusals', () => {
  it("logs a refusal that is the operator's to fix (the caller's 502 says nothing of why), never with a whole key", async () => {
    const logged: [string, Record<string, unknown>][] = [];
    const logging = new StripePaymentProvider({ secretKey: TEST_SECRET_KEY, host: '127.0.0.1', port: double.port, protocol: 'http' }, (m, f) => logged.push([m, f]));
    double.failNext = { status: 401, error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_live_51Habcdefghijklmnop9876' } };
    await expect(logging.portalUrl('cus_x', undefined)).rejects.toMatchObject({ code: 'PAYMENT_PROVIDER_ERROR', details: { provider_status: 401 } });
    expect(logged).toEqual([
      [expect.stringContaining('Stripe refused'), expect.objectContaining({ type: 'StripeAuthenticationError', status: 401, message: 'Invalid API Key provided: sk_live_****9876' })],
    ]);
    expect(JSON.stringify(logged)).not.toContain('51Habcdefghijklmnop');
  });

  it('leaves a declined card (the customer’s to fix) out of the log', async () => {
    const logged: unknown[] = [];
    const logging = new StripePaymentProvider({ secretKey: TEST_SECRET_KEY, host: '127.0.0.1', port: double.port, protocol: 'http' }, (m) => logged.push(m));
    double.failNext = { status: 402, error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } };
    await expect(logging.portalUrl('cus_x', undefined)).rejects.toMatchObject({ code: 'PAYMENT_FAILED' });
    expect(logged).toEqual([]);
  });
});

describe('StripePaymentProvider: what a subscription update sends', () => {
  const periodStart = '2026-11-01T00:00:00.000Z';
  const periodEnd = '2026-12-01T00:00:00.000Z';
  const sent = (subId: string) => double.requests.filter((r) => r.method === 'POST' && r.path === `/v1/subscriptions/${subId}`);

  it('cancels at period end with that one field', async () => {
    const sub = double.subscription({ customer: 'cus_x', price: PRICES.starter, periodStart, periodEnd });
    expect(await provider.cancelAtPeriodEnd(sub.id)).toMatchObject({ id: sub.id, cancel_at_period_end: true });
    expect(sent(sub.id).map((r) => r.form)).toEqual([{ cancel_at_period_end: 'true' }]);
  });

  // Stripe refuses cancel_at and cancel_at_period_end in one request: only the field the cancel was made with is cleared
  // (a period-end cancel also shows a cancel_at), and a collection pause is cleared in the same request.
  it.each([
    ['a period-end cancel', { cancel_at_period_end: true, cancel_at: periodEnd, pause_collection: false }, { cancel_at_period_end: 'false' }],
    ['a dated cancel', { cancel_at_period_end: false, cancel_at: '2026-11-20T00:00:00.000Z', pause_collection: false }, { cancel_at: '' }],
    ['a collection pause', { cancel_at_period_end: false, cancel_at: null, pause_collection: true }, { pause_collection: '' }],
    ['a period-end cancel and a pause', { cancel_at_period_end: true, cancel_at: periodEnd, pause_collection: true }, { cancel_at_period_end: 'false', pause_collection: '' }],
    ['a dated cancel and a pause', { cancel_at_period_end: false, cancel_at: '2026-11-20T00:00:00.000Z', pause_collection: true }, { cancel_at: '', pause_collection: '' }],
  ])('resumes %s by clearing exactly what is pending', async (_, pending, form) => {
    const sub = double.subscription({ customer: 'cus_x', price: PRICES.starter, periodStart, periodEnd, cancelAtPeriodEnd: pending.cancel_at_period_end });
    if (pending.cancel_at) sub.cancel_at = Math.floor(Date.parse(pending.cancel_at) / 1000);
    if (pending.pause_collection) sub.pause_collection = { behavior: 'void', resumes_at: null };
    expect(await provider.resume(sub.id, pending)).toMatchObject({ cancel_at_period_end: false, cancel_at: null, pause_collection: false });
    expect(sent(sub.id).map((r) => r.form)).toEqual([form]);
  });

  it('upgrades with the prorated difference invoiced now, refused when it cannot be paid, under the idempotency key', async () => {
    const sub = double.subscription({ customer: 'cus_x', price: PRICES.starter, periodStart, periodEnd });
    const item = sub.items.data[0].id;
    expect(await provider.changePrice(sub.id, item, PRICES.business, true, 'key-up')).toMatchObject({ price_id: PRICES.business });
    const [call] = sent(sub.id);
    // error_if_incomplete: a declined proration is a 402 and no change; Stripe's default would apply the plan unpaid (past_due).
    expect(call.form).toEqual({ 'items[0][id]': item, 'items[0][price]': PRICES.business, proration_behavior: 'always_invoice', payment_behavior: 'error_if_incomplete' });
    expect(call.idempotencyKey).toBe('key-up');
  });

  it('sends a change whose replies were lost again under the same idempotency key, and Stripe replays its answer', async () => {
    const sub = double.subscription({ customer: 'cus_x', price: PRICES.starter, periodStart, periodEnd });
    // Two lost: the SDK retries a closed connection once whatever its settings; the second retry is the configured ones'.
    double.dropReplies = 2;
    expect(await provider.changePrice(sub.id, sub.items.data[0].id, PRICES.business, true, 'key-lost')).toMatchObject({ price_id: PRICES.business });
    expect(sent(sub.id).map((r) => [r.idempotencyKey, r.replayed])).toEqual([['key-lost', false], ['key-lost', true], ['key-lost', true]]);
    // A call the service gives no key to gets one from the SDK, the same on each try.
    const other = double.subscription({ customer: 'cus_x', price: PRICES.starter, periodStart, periodEnd });
    double.dropReplies = 2;
    expect(await provider.cancelAtPeriodEnd(other.id)).toMatchObject({ cancel_at_period_end: true });
    const [first, ...again] = sent(other.id);
    expect(first.idempotencyKey).toEqual(expect.any(String));
    expect(again).toEqual([expect.objectContaining({ idempotencyKey: first.idempotencyKey, replayed: true }), expect.objectContaining({ idempotencyKey: first.idempotencyKey, replayed: true })]);
  });

  it('downgrades from the next renewal: nothing invoiced now, so nothing said about paying it', async () => {
    const sub = double.subscription({ customer: 'cus_x', price: PRICES.business, periodStart, periodEnd });
    const item = sub.items.data[0].id;
    expect(await provider.changePrice(sub.id, item, PRICES.starter, false, 'key-down')).toMatchObject({ price_id: PRICES.starter });
    const [call] = sent(sub.id);
    expect(call.form).toEqual({ 'items[0][id]': item, 'items[0][price]': PRICES.starter, proration_behavior: 'none' });
    expect(call.idempotencyKey).toBe('key-down');
  });
});
