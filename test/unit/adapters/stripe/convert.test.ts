import { toPaymentEvent } from '../../../../functions/adapters/stripe/convert';
import { MalformedPaymentEventError } from '../../../../functions/core/subscriptions/ports';
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

  it('finds the subscription an invoice pays on its line when the invoice does not say, and at the top of an invoice of API versions before 2025-03-31', () => {
    const sub = double.subscription({ customer: 'cus_1', price: 'price_s', periodStart: '2026-11-01T00:00:00Z', periodEnd: '2026-12-01T00:00:00Z' });
    const inv = double.invoice({ customer: 'cus_1', subscription: sub.id, price: 'price_s', periodStart: '2026-12-01T00:00:00Z', periodEnd: '2027-01-01T00:00:00Z' });
    expect(toPaymentEvent(event('invoice.paid', { ...inv, parent: null }))).toMatchObject({ invoice: { subscription_id: sub.id } });
    const legacy = { ...inv, parent: null, subscription: sub.id, lines: { ...inv.lines, data: inv.lines.data.map((l: object) => ({ ...l, parent: null })) } };
    expect(toPaymentEvent(event('invoice.paid', legacy))).toMatchObject({ invoice: { subscription_id: sub.id } });
    expect(toPaymentEvent(event('invoice.paid', { ...legacy, subscription: null }))).toMatchObject({ invoice: { subscription_id: null } });
  });

  it('reads a checkout session, taking the account from client_reference_id or metadata', () => {
    const s = double.checkoutSession({ mode: 'payment', accountId: 'acc_1', customer: 'cus_1' });
    expect(toPaymentEvent(event('checkout.session.completed', s))).toMatchObject({ kind: 'checkout_completed', session: { id: s.id, mode: 'payment', payment_status: 'paid', account_ref: 'acc_1', customer_id: 'cus_1' } });
    const viaMetadata = { ...s, client_reference_id: null, metadata: { account_id: 'acc_2' } };
    expect(toPaymentEvent(event('checkout.session.async_payment_succeeded', viaMetadata))).toMatchObject({ session: { account_ref: 'acc_2' } });
  });

  it('reads the payment a pack checkout was paid with, and what was paid', () => {
    const s = double.checkoutSession({ mode: 'payment', accountId: 'acc_1', items: [{ price: 'price_test_pack_100', quantity: 2 }] });
    expect(toPaymentEvent(event('checkout.session.completed', s))).toMatchObject({ session: { payment_ref: s.payment_intent, amount_paid_minor: 20_000 } });
    // Expanded, the payment intent is an object with its id.
    expect(toPaymentEvent(event('checkout.session.completed', { ...s, payment_intent: { id: 'pi_x', object: 'payment_intent' } }))).toMatchObject({ session: { payment_ref: 'pi_x' } });
  });

  it('reads a refunded charge as a change to its refunds (the total is asked of Stripe), and a closed dispute by its outcome', () => {
    const s = double.checkoutSession({ mode: 'payment', items: [{ price: 'price_test_pack_100' }] });
    const charge = double.refundedCharge(s, 2_500);
    expect(toPaymentEvent(event('charge.refunded', charge))).toMatchObject({
      kind: 'payment_reversed',
      reversal: { kind: 'refund', payment_ref: s.payment_intent, reference: charge.id, payment_amount_minor: 10_000 },
    });
    expect(toPaymentEvent(event('charge.refunded', charge))).not.toHaveProperty('reversal.amount_minor');
    const lost = double.dispute(s, 'lost');
    expect(toPaymentEvent(event('charge.dispute.closed', lost))).toMatchObject({
      kind: 'payment_reversed',
      reversal: { kind: 'dispute_lost', payment_ref: s.payment_intent, reference: lost.id, amount_minor: 10_000, payment_amount_minor: null },
    });
    expect(toPaymentEvent(event('charge.dispute.closed', double.dispute(s, 'won')))).toMatchObject({ kind: 'dispute_settled', status: 'won' });
  });

  it.each(['refund.failed', 'refund.updated', 'refund.created', 'charge.refund.updated'])('reads %s (a failed refund) as a change to its charge\'s refunds', (type) => {
    const s = double.checkoutSession({ mode: 'payment', items: [{ price: 'price_test_pack_100' }] });
    const charge = double.refundedCharge(s, 2_500);
    expect(toPaymentEvent(event(type, double.failRefund(s)))).toMatchObject({
      kind: 'payment_reversed',
      reversal: { kind: 'refund', payment_ref: s.payment_intent, reference: charge.id, payment_amount_minor: null },
    });
    // The charge expanded to an object reads the same; a refund without its charge is malformed.
    expect(toPaymentEvent(event(type, { ...double.failRefund(s), charge: { id: charge.id, object: 'charge' } }))).toMatchObject({ reversal: { reference: charge.id } });
    expect(() => toPaymentEvent(event(type, { ...double.failRefund(s), charge: null }))).toThrow(/charge/);
  });

  it('takes the period from the item over a stale one still on the subscription (API 2025-03-31 and later keep both)', () => {
    const s = double.subscription({ customer: 'cus_1', price: 'price_s', periodStart: '2026-12-01T00:00:00Z', periodEnd: '2027-01-01T00:00:00Z' });
    const both = { ...s, current_period_start: seconds('2026-11-01T00:00:00Z'), current_period_end: seconds('2026-12-01T00:00:00Z') };
    expect(toPaymentEvent(event('customer.subscription.updated', both))).toMatchObject({ subscription: { period_start: '2026-12-01T00:00:00.000Z', period_end: '2027-01-01T00:00:00.000Z' } });
  });

  it('reads the paid period and price from the subscription line, not a proration line listed before it', () => {
    const s = double.subscription({ customer: 'cus_1', price: 'price_s', periodStart: '2026-11-01T00:00:00Z', periodEnd: '2026-12-01T00:00:00Z' });
    const inv = double.invoice({ customer: 'cus_1', subscription: s.id, price: 'price_b', periodStart: '2026-12-01T00:00:00Z', periodEnd: '2027-01-01T00:00:00Z' });
    const line = inv.lines.data[0];
    const proration = {
      ...line,
      period: { start: seconds('2026-11-15T00:00:00Z'), end: seconds('2026-12-01T00:00:00Z') },
      pricing: { ...line.pricing, price_details: { ...line.pricing.price_details, price: 'price_s' } },
      parent: { ...line.parent, subscription_item_details: { ...line.parent.subscription_item_details, proration: true } },
    };
    inv.lines.data = [proration, line];
    expect(toPaymentEvent(event('invoice.paid', inv))).toMatchObject({ invoice: { period_start: '2026-12-01T00:00:00.000Z', period_end: '2027-01-01T00:00:00.000Z', price_id: 'price_b' } });
  });

  it('reads only a lost dispute as money taken back; any other closing status settles it', () => {
    const s = double.checkoutSession({ mode: 'payment', items: [{ price: 'price_test_pack_100' }] });
    expect(toPaymentEvent(event('charge.dispute.closed', double.dispute(s, 'warning_closed' as never)))).toMatchObject({ kind: 'dispute_settled', status: 'warning_closed' });
  });

  it('takes the account of a checkout from client_reference_id when metadata names another', () => {
    const s = double.checkoutSession({ mode: 'payment', accountId: 'acc_1', customer: 'cus_1' });
    expect(toPaymentEvent(event('checkout.session.completed', { ...s, metadata: { account_id: 'acc_2' } }))).toMatchObject({ session: { account_ref: 'acc_1' } });
  });
  it('leaves other event types alone', () => {
    expect(toPaymentEvent(event('invoice.payment_failed', { id: 'in_1', object: 'invoice' }))).toMatchObject({ kind: 'other', type: 'invoice.payment_failed' });
  });
});

describe('malformed Stripe events (signed, but not what Stripe documents)', () => {
  const sub = () => double.subscription({ customer: 'cus_1', price: 'price_s', periodStart: '2026-11-01T00:00:00Z', periodEnd: '2026-12-01T00:00:00Z' });
  const created = 1795330000;
  const cases: [string, unknown, string | null, string | null][] = [
    ['the body is null', null, null, null],
    ['the body is an array', [{ id: 'evt_a', type: 'invoice.paid' }], null, null],
    ['the body is an empty object', {}, null, null],
    ['the event has no id', { type: 'invoice.paid', created, data: { object: {} } }, null, 'invoice.paid'],
    ['the event id is not a string', { id: 42, type: 'customer.created', created, data: { object: {} } }, null, 'customer.created'],
    ['the event has no created', { id: 'evt_r2', type: 'invoice.paid', data: { object: {} } }, 'evt_r2', 'invoice.paid'],
    ['created is a string', { id: 'evt_c', type: 'customer.created', created: '1795330000', data: { object: {} } }, 'evt_c', 'customer.created'],
    ['created is past any date', { id: 'evt_c2', type: 'customer.created', created: 1e20, data: { object: {} } }, 'evt_c2', 'customer.created'],
    ['the event has no data', { id: 'evt_d', type: 'customer.subscription.updated', created }, 'evt_d', 'customer.subscription.updated'],
    ['a checkout event whose object is null', { id: 'evt_r1', type: 'checkout.session.completed', created, data: { object: null } }, 'evt_r1', 'checkout.session.completed'],
    ['an invoice event whose object is empty', { id: 'evt_i', type: 'invoice.paid', created, data: { object: {} } }, 'evt_i', 'invoice.paid'],
    ['a subscription without any period field', { id: 'evt_r3', type: 'customer.subscription.updated', created, data: { object: { id: 'sub_r', customer: 'cus_r', status: 'active' } } }, 'evt_r3', 'customer.subscription.updated'],
    ['a refunded charge whose amount is not a whole amount', { id: 'evt_f1', type: 'charge.refunded', created, data: { object: { id: 'ch_1', amount: 10.5, amount_refunded: 0, payment_intent: 'pi_1' } } }, 'evt_f1', 'charge.refunded'],
    ['a refunded charge without its id', { id: 'evt_f2', type: 'charge.refunded', created, data: { object: { amount: 1000, amount_refunded: 1000, payment_intent: 'pi_1' } } }, 'evt_f2', 'charge.refunded'],
    ['a refund with a negative amount', { id: 'evt_f3', type: 'charge.refunded', created, data: { object: { id: 'ch_1', amount: -1000, amount_refunded: 0, payment_intent: 'pi_1' } } }, 'evt_f3', 'charge.refunded'],
    ['a dispute without a status', { id: 'evt_f4', type: 'charge.dispute.closed', created, data: { object: { id: 'dp_1', amount: 1000, payment_intent: 'pi_1' } } }, 'evt_f4', 'charge.dispute.closed'],
    ['a checkout whose amount_total is a string', { id: 'evt_f5', type: 'checkout.session.completed', created, data: { object: { id: 'cs_1', mode: 'payment', payment_status: 'paid', amount_total: '1000' } } }, 'evt_f5', 'checkout.session.completed'],
    ['a subscription without a customer', { id: 'evt_s2', type: 'customer.subscription.updated', created, data: { object: { ...sub(), customer: null } } }, 'evt_s2', 'customer.subscription.updated'],
    ['a subscription with account metadata that is not a string', { id: 'evt_s3', type: 'customer.subscription.created', created, data: { object: { ...sub(), metadata: { account_id: 7 } } } }, 'evt_s3', 'customer.subscription.created'],
    ['created is before 1970', { id: 'evt_c4', type: 'customer.created', created: -1, data: { object: {} } }, 'evt_c4', 'customer.created'],
    ['created is a fraction of a second', { id: 'evt_c5', type: 'customer.created', created: 1795330000.5, data: { object: {} } }, 'evt_c5', 'customer.created'],
    ['created is the year 10000 (it would print as +010000-…)', { id: 'evt_c6', type: 'customer.created', created: 253_402_300_800, data: { object: {} } }, 'evt_c6', 'customer.created'],
    ['a lost dispute without an amount', { id: 'evt_f6', type: 'charge.dispute.closed', created, data: { object: { id: 'dp_1', status: 'lost', payment_intent: 'pi_1' } } }, 'evt_f6', 'charge.dispute.closed'],
    ['a refunded charge without its amount', { id: 'evt_f7', type: 'charge.refunded', created, data: { object: { id: 'ch_1', amount_refunded: 1000, payment_intent: 'pi_1' } } }, 'evt_f7', 'charge.refunded'],
    ['a refunded charge whose id is empty', { id: 'evt_f8', type: 'charge.refunded', created, data: { object: { id: '', amount: 1000, payment_intent: 'pi_1' } } }, 'evt_f8', 'charge.refunded'],
    ['a subscription whose cancel_at_period_end is a string', { id: 'evt_s4', type: 'customer.subscription.updated', created, data: { object: { ...sub(), cancel_at_period_end: 'false' } } }, 'evt_s4', 'customer.subscription.updated'],
    ['a checkout whose expanded customer has no id', { id: 'evt_c7', type: 'checkout.session.completed', created, data: { object: { ...double.checkoutSession({ mode: 'payment' }), customer: { object: 'customer' } } } }, 'evt_c7', 'checkout.session.completed'],
    ['an invoice whose lines are not a list', { id: 'evt_i2', type: 'invoice.paid', created, data: { object: { id: 'in_1', customer: 'cus_1', lines: { data: {} } } } }, 'evt_i2', 'invoice.paid'],
    ['a checkout whose client_reference_id is a number', { id: 'evt_c3', type: 'checkout.session.completed', created, data: { object: { ...double.checkoutSession({ mode: 'payment' }), client_reference_id: 123 } } }, 'evt_c3', 'checkout.session.completed'],
  ];
  it.each(cases)('refuses an event when %s, keeping the id and type it could read', (_what, body, id, type) => {
    let thrown: unknown;
    try {
      toPaymentEvent(body as never);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(MalformedPaymentEventError);
    expect(thrown).toMatchObject({ eventId: id, eventType: type });
  });

  it('refuses an invoice whose paid period is not a date (lines.period.start = 1e20), naming the field', () => {
    const s = sub();
    const inv = double.invoice({ customer: 'cus_1', subscription: s.id, price: 'price_s', periodStart: '2026-12-01T00:00:00Z', periodEnd: '2027-01-01T00:00:00Z' });
    inv.lines.data[0].period.start = 1e20;
    expect(() => toPaymentEvent(event('invoice.paid', inv))).toThrow(/data\.object\.lines\.data\[0\]\.period\.start/);
  });

  it('reads a checkout that does not say what was paid as null, never as 0 paid', () => {
    const s = { ...double.checkoutSession({ mode: 'payment', accountId: 'acc_1' }), amount_total: null };
    expect(toPaymentEvent(event('checkout.session.completed', s))).toMatchObject({ session: { amount_paid_minor: null } });
  });

  it('reads a subscription that has only a start date as a period that ends where it starts', () => {
    const s = sub();
    const bare = { ...s, start_date: seconds('2026-11-05T00:00:00Z'), items: { ...s.items, data: [{ ...s.items.data[0], current_period_start: undefined, current_period_end: undefined }] } };
    expect(toPaymentEvent(event('customer.subscription.created', bare))).toMatchObject({ subscription: { period_start: '2026-11-05T00:00:00.000Z', period_end: '2026-11-05T00:00:00.000Z' } });
  });

  it('still reads a subscription whose period is only on the subscription (API versions before 2025-03-31)', () => {
    const s = sub();
    const legacy = { ...s, current_period_start: seconds('2026-11-01T00:00:00Z'), current_period_end: seconds('2026-12-01T00:00:00Z'), items: { ...s.items, data: [{ ...s.items.data[0], current_period_start: undefined, current_period_end: undefined }] } };
    expect(toPaymentEvent(event('customer.subscription.updated', legacy))).toMatchObject({ subscription: { period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z' } });
  });
});
