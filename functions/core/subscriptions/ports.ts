import type { Account } from '../accounts/account';
import type { Micros } from '../billing/money';

/**
 * A subscription as the payment provider reports it, already translated into plain data by the adapter
 * (functions/adapters/stripe). Times are ISO 8601.
 */
export interface ProviderSubscription {
  id: string;
  customer_id: string;
  /** The provider's status: active, trialing, past_due, unpaid, paused, canceled, incomplete, incomplete_expired. */
  status: string;
  price_id: string | null;
  item_id: string | null;
  period_start: string;
  period_end: string;
  cancel_at_period_end: boolean;
  cancel_at: string | null;
  /** Collection paused (Stripe's `pause_collection`): no invoices are collected from the next one on. */
  pause_collection: boolean;
  /** `metadata.account_id`, when the checkout that created it set one. */
  account_ref: string | null;
}

export interface CheckoutSession {
  id: string;
  /** `payment` (one-off pack) or `subscription`. */
  mode: string;
  /** `paid`, `unpaid` (asynchronous payment methods; settled later) or `no_payment_required`. */
  payment_status: string;
  /** The account the dashboard started the checkout for (`client_reference_id`, else `metadata.account_id`). */
  account_ref: string | null;
  customer_id: string | null;
  subscription_id: string | null;
  /** The payment (Stripe's payment intent) a `payment` checkout was paid with: what a later refund or dispute names. */
  payment_ref: string | null;
  /** What the customer paid, in the currency's smallest unit (cents); null when the provider did not say. */
  amount_paid_minor: number | null;
}

/**
 * Money taken back from a payment. A refund names the charge whose refunds changed: what they add up to now is asked
 * of the provider (its events come late and out of order, and a failed refund is reported on the refund itself). A
 * dispute the merchant lost carries the disputed amount, taken once per dispute.
 */
export type PaymentReversal = RefundChange | LostDispute;

interface ReversalBase {
  /** The payment (payment intent) the money was paid with; null when the provider did not name one. */
  payment_ref: string | null;
}

export interface RefundChange extends ReversalBase {
  kind: 'refund';
  /** The charge refunded. */
  reference: string;
  /** What the payment was, in the smallest currency unit, when the event says (a charge does; a refund does not). */
  payment_amount_minor: number | null;
}

export interface LostDispute extends ReversalBase {
  kind: 'dispute_lost';
  /** The dispute: one dispute takes its amount once. */
  reference: string;
  amount_minor: number;
  payment_amount_minor: null;
}

export interface PaidInvoice {
  id: string;
  customer_id: string | null;
  subscription_id: string | null;
  /** `subscription_create`, `subscription_cycle` (renewal), `subscription_update` (proration), `manual`, … */
  billing_reason: string | null;
  /** The service period the subscription line of the invoice pays for. */
  period_start: string | null;
  period_end: string | null;
  price_id: string | null;
}

interface EventBase {
  id: string;
  type: string;
  /** When the provider created the event (ISO 8601). */
  created: string;
}

/** A verified provider event, reduced to what the billing rules act on. */
export type PaymentEvent = EventBase &
  (
    | { kind: 'checkout_completed'; session: CheckoutSession }
    | { kind: 'subscription_changed'; subscription: ProviderSubscription }
    | { kind: 'invoice_paid'; invoice: PaidInvoice }
    | { kind: 'payment_reversed'; reversal: PaymentReversal }
    /** A dispute that closed without being lost (won, or the inquiry closed): nothing changes. */
    | { kind: 'dispute_settled'; status: string }
    | { kind: 'other' }
  );

/**
 * Thrown by a verifier when the signature is missing, wrong or too old. `message` may be shown to the caller;
 * `detail` (the provider library's own words, which can describe the configured secret) is for the logs only.
 */
export class InvalidEventSignatureError extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'InvalidEventSignatureError';
  }
}

/**
 * Thrown by a verifier for a validly signed event whose content is not what the provider documents (not an
 * object, no id, a time that is not a time, a field of the wrong type, …). A redelivery would be the same,
 * so the webhook settles it (200 `ignored`, `malformed_event`) instead of failing it into endless retries.
 */
export class MalformedPaymentEventError extends Error {
  constructor(
    readonly problem: string,
    /** The event's id and type when they could be read, else null. */
    readonly eventId: string | null,
    readonly eventType: string | null,
  ) {
    super(`malformed payment event ${eventId ?? '(no id)'} of type ${eventType ?? '(no type)'}: ${problem}`);
    this.name = 'MalformedPaymentEventError';
  }
}

/** Verifies a provider webhook delivery (raw body + signature header) and returns the event. */
export interface PaymentEventVerifier {
  verify(rawBody: Uint8Array, signatureHeader: string | undefined): Promise<PaymentEvent>;
}

/** The payment provider's API, as far as the service uses it. */
export interface PaymentProvider {
  /** Price ids and quantities bought in a checkout session. */
  checkoutLineItems(sessionId: string): Promise<{ price_id: string | null; quantity: number }[]>;
  /** The checkout session paid with this payment (payment intent), or null when no checkout was. */
  checkoutForPayment(paymentRef: string): Promise<CheckoutSession | null>;
  /**
   * A charge's refunded total now, in the smallest currency unit: its refunds that are done or under way, not those
   * that failed or were cancelled. Events arrive late and out of order; this is the one current answer.
   */
  refundedTotal(chargeRef: string): Promise<number>;
  getSubscription(subscriptionId: string): Promise<ProviderSubscription>;
  /** Cancel at the end of the current period. */
  cancelAtPeriodEnd(subscriptionId: string): Promise<ProviderSubscription>;
  /** Undo a scheduled cancel (period-end or dated) and a collection pause, whichever are set. */
  resume(subscriptionId: string, pending: { cancel_at_period_end: boolean; cancel_at: string | null; pause_collection: boolean }): Promise<ProviderSubscription>;
  /**
   * Switch the subscription's price: `prorate` charges the difference now (upgrade), otherwise from the next renewal
   * on. Requests with the same `idempotencyKey` make the change once; the repeats get the first answer.
   */
  changePrice(subscriptionId: string, itemId: string, priceId: string, prorate: boolean, idempotencyKey: string): Promise<ProviderSubscription>;
  /** A customer-portal session URL (payment methods, invoices, cancel). */
  portalUrl(customerId: string, returnUrl: string | undefined): Promise<string>;
}

/** A purchase of one-off credits, recorded once per provider reference (e.g. a checkout session). */
export interface Purchase {
  purchase_id: string;
  amount_micros: Micros;
  source: string;
  reference: string;
  created_at: string;
  /** The payment it was paid with (refunds and disputes name it) and what was paid, in the smallest currency unit. */
  payment_ref?: string | null;
  paid_minor?: number | null;
  /** Taken back so far (see ./reversals.ts); absent until the first refund or lost dispute. */
  reversal?: PurchaseReversal;
}

/** What refunds and lost disputes have taken back from a purchase. */
export interface PurchaseReversal {
  /** The payment's refunded total as the provider last answered it (it falls when a refund fails). */
  refunded_minor: number;
  /** Lost disputes, by dispute id: each takes its amount once. */
  disputes_lost: Record<string, number>;
  /** Credits the reversals take back: the purchase's share of what was paid and given back. */
  revoked_micros: Micros;
  /** Of those, what the balance still held and was debited; the rest had been spent. */
  recovered_micros: Micros;
  /** Each reversal write moves it on; a write happens only over the one read. */
  version: number;
  updated_at: string;
}

/** One reversal of a purchase: the purchase's new reversal state and the debit of one-off credits, in one write. */
export interface ReversalWrite {
  account_id: string;
  /** The purchase as read: the write happens only if its reversal is still this one. */
  seen: Purchase;
  reversal: PurchaseReversal;
  /** Taken off `credits_micros`; the write happens only if the balance still covers it (never negative). */
  debit_micros: Micros;
  /**
   * Set when the debit took the whole balance as read (the rest had been spent): the write happens only if the balance
   * is still exactly this, since a balance raised meanwhile (a job refund) owes more and a lowered one cannot pay it.
   */
  whole_balance_micros?: Micros;
  /** Given back to `credits_micros`: credits taken for a refund that then failed. Never together with a debit. */
  restore_micros: Micros;
  /** The provider event this write applies; an event id is applied once. */
  eventId: string;
}

/** One write of an account's billing state, together with what makes it happen exactly once. */
export interface BillingStateWrite {
  /** The account as read. The write happens only if its billing state and allowance are still those of this copy. */
  seen: Account;
  next: Pick<Account, 'plan_id' | 'status' | 'subscription' | 'stripe_customer_id'>;
  /** One-off credits bought; the purchase id must not have been recorded before. */
  purchase?: Purchase;
  /** The provider event this write applies; an event id is applied once. */
  eventId?: string;
  /** A provider customer to map to this account. */
  linkCustomer?: string | null;
}

/**
 * `duplicate`: the event (or the purchase) was already applied. `conflict`: the account changed since it was
 * read (re-read and decide again). `customer_conflict`: the customer belongs to another account.
 */
export type BillingCommitOutcome = 'committed' | 'duplicate' | 'conflict' | 'customer_conflict';

export interface BillingStateStore {
  commit(write: BillingStateWrite, at: Date): Promise<BillingCommitOutcome>;
  /** `conflict`: the purchase or the balance changed since they were read (re-read and decide again). */
  reverse(write: ReversalWrite, at: Date): Promise<'committed' | 'duplicate' | 'conflict'>;
  /** The purchase paid with this payment, read consistently, or null when no purchase names it. */
  purchaseForPayment(paymentRef: string): Promise<{ account_id: string; purchase: Purchase } | null>;
  eventApplied(eventId: string): Promise<boolean>;
  accountForCustomer(customerId: string): Promise<string | null>;
  /** Newest first. */
  purchases(accountId: string, limit: number): Promise<Purchase[]>;
}
