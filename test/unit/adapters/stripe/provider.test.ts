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
