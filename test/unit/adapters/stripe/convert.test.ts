import { toPaymentEvent } from '../../../../functions/adapters/stripe/convert';
import { StripeDouble, seconds } from '../../../support/stripe-double';

const double = new StripeDouble();
const event = (type: string, object: unknown) => double.signedEvent(type, object).event as never;

describe('Stripe events → payment events', () => {
  it('reads a subscription with its period from the items (API 2025-03-31 and later)', () => {
    const sub = double.subscription({ customer: 'cus_1', price: 'price_s', periodStart: '2026-11-01T00:00:00Z', periodEnd: '2026-12-01T00:00:00Z', accountId: 'acc_1' });
    const e = toPaymentEvent(event('customer.subscription.updated', { ...sub, cancel_at_period_end: true, cancel_at: seconds('2026-12-01T00:00:00Z'), pause_collection: { behavior: 'void' } }));
    expect(e).toMatchObject({
      kind: 'subscription_changed',
      type: 'customer.subscription.updated',
      subscription: {
        id: sub.id, customer_id: 'cus_1', status: 'active', price_id: 'price_s', item_id: sub.items.data[0].id,
        period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z',
        cancel_at_period_end: true, cancel_at: '2026-12-01T00:00:00.000Z', pause_collection: true, account_ref: 'acc_1',
      },
    });
  });

  it('reads the paid period and price from the subscription line of an invoice', () => {
    const sub = double.subscription({ customer: 'cus_1', price: 'price_s', periodStart: '2026-11-01T00:00:00Z', periodEnd: '2026-12-01T00:00:00Z' });
    const inv = double.invoice({ customer: 'cus_1', subscription: sub.id, price: 'price_b', periodStart: '2026-12-01T00:00:00Z', periodEnd: '2027-01-01T00:00:00Z' });
    expect(toPaymentEvent(event('invoice.paid', inv))).toMatchObject({
      kind: 'invoice_paid',
      invoice: { customer_id: 'cus_1', subscription_id: sub.id, billing_reason: 'subscription_cycle', period_start: '2026-12-01T00:00:00.000Z', period_end: '2027-01-01T00:00:00.000Z', price_id: 'price_b' },
    });
  });

  it('reads a checkout session, taking the account from client_reference_id or metadata', () => {
    const s = double.checkoutSession({ mode: 'payment', accountId: 'acc_1', customer: 'cus_1' });
    expect(toPaymentEvent(event('checkout.session.completed', s))).toMatchObject({ kind: 'checkout_completed', session: { id: s.id, mode: 'payment', payment_status: 'paid', account_ref: 'acc_1', customer_id: 'cus_1' } });
    const viaMetadata = { ...s, client_reference_id: null, metadata: { account_id: 'acc_2' } };
    expect(toPaymentEvent(event('checkout.session.async_payment_succeeded', viaMetadata))).toMatchObject({ session: { account_ref: 'acc_2' } });
  });

  it('leaves other event types alone', () => {
    expect(toPaymentEvent(event('invoice.payment_failed', { id: 'in_1', object: 'invoice' }))).toMatchObject({ kind: 'other', type: 'invoice.payment_failed' });
  });
});
