/** Stripe objects → the plain data of functions/core/subscriptions/ports.ts. */
import type Stripe from 'stripe';
import type { CheckoutSession, PaidInvoice, PaymentEvent, ProviderSubscription } from '../../core/subscriptions/ports';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const idOf = (value: string | { id: string } | null | undefined): string | null => (typeof value === 'string' ? value : (value?.id ?? null));

export function toProviderSubscription(s: Stripe.Subscription): ProviderSubscription {
  const item = s.items?.data?.[0];
  // Since API version 2025-03-31 the billing period lives on the subscription items.
  const legacy = s as unknown as { current_period_start?: number; current_period_end?: number };
  const start = item?.current_period_start ?? legacy.current_period_start ?? s.start_date;
  const end = item?.current_period_end ?? legacy.current_period_end ?? start;
  return {
    id: s.id,
    customer_id: idOf(s.customer) ?? '',
    status: s.status,
    price_id: item?.price?.id ?? null,
    item_id: item?.id ?? null,
    period_start: iso(start),
    period_end: iso(end),
    cancel_at_period_end: !!s.cancel_at_period_end,
    cancel_at: s.cancel_at ? iso(s.cancel_at) : null,
    pause_collection: !!s.pause_collection,
    account_ref: s.metadata?.account_id || null,
  };
}

export function toCheckoutSession(s: Stripe.Checkout.Session): CheckoutSession {
  return {
    id: s.id,
    mode: s.mode,
    payment_status: s.payment_status,
    account_ref: s.client_reference_id || s.metadata?.account_id || null,
    customer_id: idOf(s.customer as string | { id: string } | null),
    subscription_id: idOf(s.subscription),
  };
}

export function toPaidInvoice(inv: Stripe.Invoice): PaidInvoice {
  const lines = inv.lines?.data ?? [];
  // The subscription line (not a proration) carries the service period the invoice pays for.
  const line = lines.find((l) => l.parent?.subscription_item_details && !l.parent.subscription_item_details.proration) ?? lines[0];
  const legacy = inv as unknown as { subscription?: string | { id: string } | null };
  const linePrice = line?.pricing?.price_details?.price as string | { id: string } | undefined;
  return {
    id: inv.id ?? '',
    customer_id: idOf(inv.customer as string | { id: string } | null),
    subscription_id:
      idOf(inv.parent?.subscription_details?.subscription as string | { id: string } | null | undefined) ??
      line?.parent?.subscription_item_details?.subscription ??
      idOf(legacy.subscription),
    billing_reason: inv.billing_reason ?? null,
    period_start: line?.period ? iso(line.period.start) : null,
    period_end: line?.period ? iso(line.period.end) : null,
    price_id: idOf(linePrice),
  };
}

/** A verified Stripe event reduced to what the billing rules act on; other types are `other`. */
export function toPaymentEvent(event: Stripe.Event): PaymentEvent {
  const base = { id: event.id, type: event.type, created: iso(event.created) };
  const object = (event.data as { object: unknown }).object;
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return { ...base, kind: 'checkout_completed', session: toCheckoutSession(object as Stripe.Checkout.Session) };
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
    case 'customer.subscription.paused':
    case 'customer.subscription.resumed':
      return { ...base, kind: 'subscription_changed', subscription: toProviderSubscription(object as Stripe.Subscription) };
    case 'invoice.paid':
      return { ...base, kind: 'invoice_paid', invoice: toPaidInvoice(object as Stripe.Invoice) };
    default:
      return { ...base, kind: 'other' };
  }
}
