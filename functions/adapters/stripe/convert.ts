/**
 * Stripe objects → the plain data of functions/core/subscriptions/ports.ts. Everything is checked on the way
 * in: a signed event is still data from outside, and a field that is not what Stripe documents (a null object,
 * a time that is not a time, an id that is not a string) must not reach the billing rules.
 */
import type Stripe from 'stripe';
import { type CheckoutSession, type LostDispute, MalformedPaymentEventError, type PaidInvoice, type PaymentEvent, type ProviderSubscription, type RefundChange } from '../../core/subscriptions/ports';

/** A Stripe object (from an event or an API answer) with a field that is not what Stripe documents. */
export class MalformedStripeObjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedStripeObjectError';
  }
}

type Fields = Record<string, unknown>;

const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const shown = (v: unknown) =>
  v === undefined ? 'missing' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'number' ? String(v) : typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : `a ${typeof v}`;
const malformed = (path: string, expected: string, got: unknown): never => {
  throw new MalformedStripeObjectError(`${path} should be ${expected}, got ${shown(got)}`);
};

function object(v: unknown, path: string): Fields {
  return isFields(v) ? v : malformed(path, 'an object', v);
}

function optionalObject(v: unknown, path: string): Fields | null {
  return v === undefined || v === null ? null : object(v, path);
}

function text(v: unknown, path: string): string {
  return typeof v === 'string' && v !== '' ? v : malformed(path, 'a non-empty string', v);
}

/** A string, or null when absent or empty. */
function optionalText(v: unknown, path: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  return typeof v === 'string' ? v : malformed(path, 'a string or null', v);
}

/** A reference to another Stripe object: its id, or the object itself when expanded. */
function optionalRef(v: unknown, path: string): string | null {
  if (isFields(v)) return text(v.id, `${path}.id`);
  return optionalText(v, path);
}

/** 10000-01-01T00:00:00Z: later times print as "+010000-…", which no longer sorts with the other ISO times. */
const END_OF_TIMES = 253_402_300_800;

/** Unix seconds → ISO 8601; anything else (a string, NaN, 1e20, a fraction) is malformed, never `Invalid Date`. */
function time(v: unknown, path: string): string {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v >= END_OF_TIMES) return malformed(path, 'a Unix time in seconds', v);
  return new Date(v * 1000).toISOString();
}

function optionalTime(v: unknown, path: string): string | null {
  return v === undefined || v === null ? null : time(v, path);
}

/** An amount in the currency's smallest unit (cents): a whole number ≥ 0. */
function minorAmount(v: unknown, path: string): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : malformed(path, 'a whole amount in the smallest currency unit', v);
}

function optionalMinorAmount(v: unknown, path: string): number | null {
  return v === undefined || v === null ? null : minorAmount(v, path);
}

function flag(v: unknown, path: string): boolean {
  if (v === undefined || v === null) return false;
  return typeof v === 'boolean' ? v : malformed(path, 'true or false', v);
}

function readSubscription(v: unknown, at: string): ProviderSubscription {
  const s = object(v, at);
  const items = optionalObject(s.items, `${at}.items`);
  const data = items?.data;
  if (data !== undefined && data !== null && !Array.isArray(data)) malformed(`${at}.items.data`, 'a list', data);
  const item = Array.isArray(data) && data.length > 0 ? object(data[0], `${at}.items.data[0]`) : null;
  // Since API version 2025-03-31 the billing period lives on the subscription items.
  const start = item?.current_period_start ?? s.current_period_start ?? s.start_date;
  const end = item?.current_period_end ?? s.current_period_end ?? start;
  const metadata = optionalObject(s.metadata, `${at}.metadata`);
  return {
    id: text(s.id, `${at}.id`),
    customer_id: optionalRef(s.customer, `${at}.customer`) ?? malformed(`${at}.customer`, 'a customer id', s.customer),
    status: text(s.status, `${at}.status`),
    price_id: item ? optionalRef(item.price, `${at}.items.data[0].price`) : null,
    item_id: item ? optionalText(item.id, `${at}.items.data[0].id`) : null,
    period_start: time(start, `${at} period start (items.data[0].current_period_start, current_period_start or start_date)`),
    period_end: time(end, `${at} period end (items.data[0].current_period_end or current_period_end)`),
    cancel_at_period_end: flag(s.cancel_at_period_end, `${at}.cancel_at_period_end`),
    cancel_at: optionalTime(s.cancel_at, `${at}.cancel_at`),
    pause_collection: !!optionalObject(s.pause_collection, `${at}.pause_collection`),
    account_ref: optionalText(metadata?.account_id, `${at}.metadata.account_id`),
  };
}

function readCheckoutSession(v: unknown, at: string): CheckoutSession {
  const s = object(v, at);
  const metadata = optionalObject(s.metadata, `${at}.metadata`);
  return {
    id: text(s.id, `${at}.id`),
    mode: text(s.mode, `${at}.mode`),
    payment_status: text(s.payment_status, `${at}.payment_status`),
    account_ref: optionalText(s.client_reference_id, `${at}.client_reference_id`) ?? optionalText(metadata?.account_id, `${at}.metadata.account_id`),
    customer_id: optionalRef(s.customer, `${at}.customer`),
    subscription_id: optionalRef(s.subscription, `${at}.subscription`),
    payment_ref: optionalRef(s.payment_intent, `${at}.payment_intent`),
    amount_paid_minor: optionalMinorAmount(s.amount_total, `${at}.amount_total`),
  };
}

/**
 * `charge.refunded`: the charge, refunded in part or whole. Its `amount_refunded` is not read: the total is asked of
 * Stripe when the event is applied, since an event can be older than another already applied.
 */
function readRefundedCharge(v: unknown, at: string): RefundChange {
  const c = object(v, at);
  return { kind: 'refund', payment_ref: optionalRef(c.payment_intent, `${at}.payment_intent`), reference: text(c.id, `${at}.id`), payment_amount_minor: minorAmount(c.amount, `${at}.amount`) };
}

/**
 * `refund.created/updated/failed` and `charge.refund.updated` (the last only for some payment methods): a refund of
 * the charge changed, typically to `failed` (the money could not go back). The event names the charge and the payment.
 */
function readChangedRefund(v: unknown, at: string): RefundChange {
  const r = object(v, at);
  const charge = optionalRef(r.charge, `${at}.charge`) ?? malformed(`${at}.charge`, 'the charge refunded', r.charge);
  return { kind: 'refund', payment_ref: optionalRef(r.payment_intent, `${at}.payment_intent`), reference: charge, payment_amount_minor: null };
}

/** `charge.dispute.closed`: only a lost dispute keeps the money from the merchant. */
function readClosedDispute(base: { id: string; type: string; created: string }, v: unknown, at: string): PaymentEvent {
  const d = object(v, at);
  const status = text(d.status, `${at}.status`);
  const reversal: LostDispute = {
    kind: 'dispute_lost',
    payment_ref: optionalRef(d.payment_intent, `${at}.payment_intent`),
    reference: text(d.id, `${at}.id`),
    amount_minor: minorAmount(d.amount, `${at}.amount`),
    payment_amount_minor: null,
  };
  return status === 'lost' ? { ...base, kind: 'payment_reversed', reversal } : { ...base, kind: 'dispute_settled', status };
}

function readPaidInvoice(v: unknown, at: string): PaidInvoice {
  const inv = object(v, at);
  const data = optionalObject(inv.lines, `${at}.lines`)?.data ?? [];
  if (!Array.isArray(data)) return malformed(`${at}.lines.data`, 'a list', data);
  const lines = data.map((l, i) => {
    const lineAt = `${at}.lines.data[${i}]`;
    const line = object(l, lineAt);
    const parent = optionalObject(line.parent, `${lineAt}.parent`);
    return { at: lineAt, line, item: optionalObject(parent?.subscription_item_details, `${lineAt}.parent.subscription_item_details`) };
  });
  // The subscription line (not a proration) carries the service period the invoice pays for.
  const chosen = lines.find((l) => l.item && !l.item.proration) ?? lines[0];
  const lineAt = chosen?.at ?? `${at}.lines.data[0]`;
  const period = optionalObject(chosen?.line.period, `${lineAt}.period`);
  const priceDetails = optionalObject(optionalObject(chosen?.line.pricing, `${lineAt}.pricing`)?.price_details, `${lineAt}.pricing.price_details`);
  const subscriptionDetails = optionalObject(optionalObject(inv.parent, `${at}.parent`)?.subscription_details, `${at}.parent.subscription_details`);
  return {
    id: text(inv.id, `${at}.id`),
    customer_id: optionalRef(inv.customer, `${at}.customer`),
    subscription_id:
      optionalRef(subscriptionDetails?.subscription, `${at}.parent.subscription_details.subscription`) ??
      optionalRef(chosen?.item?.subscription, `${lineAt}.parent.subscription_item_details.subscription`) ??
      optionalRef(inv.subscription, `${at}.subscription`), // API versions before 2025-03-31
    billing_reason: optionalText(inv.billing_reason, `${at}.billing_reason`),
    period_start: period ? time(period.start, `${lineAt}.period.start`) : null,
    period_end: period ? time(period.end, `${lineAt}.period.end`) : null,
    price_id: optionalRef(priceDetails?.price, `${lineAt}.pricing.price_details.price`),
  };
}

/** A checkout session from Stripe's API; a malformed one throws MalformedStripeObjectError. */
export function toCheckoutSession(s: Stripe.Checkout.Session): CheckoutSession {
  return readCheckoutSession(s, 'checkout.session');
}

/** A subscription from Stripe's API; a malformed one throws MalformedStripeObjectError. */
export function toProviderSubscription(s: Stripe.Subscription): ProviderSubscription {
  return readSubscription(s, 'subscription');
}

/**
 * A verified Stripe event (the parsed body, whatever its shape) reduced to what the billing rules act on;
 * other types are `other`. A body that is not a Stripe event — no string id, no valid `created`, no `data`,
 * or an object of a handled type that is not what Stripe documents — throws MalformedPaymentEventError.
 */
export function toPaymentEvent(event: unknown): PaymentEvent {
  const readable = isFields(event) ? event : {};
  const id = typeof readable.id === 'string' && readable.id ? readable.id : null;
  const type = typeof readable.type === 'string' && readable.type ? readable.type : null;
  try {
    const e = object(event, 'event');
    const base = { id: text(e.id, 'id'), type: text(e.type, 'type'), created: time(e.created, 'created') };
    const data = object(e.data, 'data');
    switch (base.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return { ...base, kind: 'checkout_completed', session: readCheckoutSession(data.object, 'data.object') };
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted':
      case 'customer.subscription.paused':
      case 'customer.subscription.resumed':
        return { ...base, kind: 'subscription_changed', subscription: readSubscription(data.object, 'data.object') };
      case 'invoice.paid':
        return { ...base, kind: 'invoice_paid', invoice: readPaidInvoice(data.object, 'data.object') };
      case 'charge.refunded':
        return { ...base, kind: 'payment_reversed', reversal: readRefundedCharge(data.object, 'data.object') };
      case 'refund.created':
      case 'refund.updated':
      case 'refund.failed':
      case 'charge.refund.updated':
        return { ...base, kind: 'payment_reversed', reversal: readChangedRefund(data.object, 'data.object') };
      case 'charge.dispute.closed':
        return readClosedDispute(base, data.object, 'data.object');
      default:
        return { ...base, kind: 'other' };
    }
  } catch (err) {
    if (err instanceof MalformedStripeObjectError) throw new MalformedPaymentEventError(err.message, id, type);
    throw err;
  }
}
