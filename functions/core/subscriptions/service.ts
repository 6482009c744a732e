import { z } from 'zod';
import type { Account, Subscription } from '../accounts/account';
import type { AccountRepository, PlanRepository } from '../accounts/ports';
import { MICROS_PER_USD, type Micros } from '../billing/money';
import { STANDARD_PLAN_ID } from '../billing/plans';
import type { CreditPack } from '../billing/packs';
import type { Clock } from '../clock';
import { ServiceError, invalidParameter } from '../errors';
import { isJsonObject, parseRequest } from '../validation';
import { shownValue } from '../validation/shown';
import { SubscriptionCatalog } from './catalog';
import type { BillingStateStore, BillingStateWrite, CheckoutSession, PaidInvoice, PaymentEvent, PaymentProvider, PaymentReversal, ProviderSubscription, Purchase } from './ports';
import { accountPlanAfter, deriveSubscription, grantPeriodAllowance, mapProviderStatus, mergeProviderSubscription } from './reconcile';
import { type SizedReversal, reversePurchase } from './reversals';

export interface SubscriptionServiceDeps {
  accounts: AccountRepository;
  plans: PlanRepository;
  store: BillingStateStore;
  /** null when no payment provider is configured (no STRIPE_SECRET_KEY). */
  provider: PaymentProvider | null;
  packs: readonly CreditPack[];
  clock: Clock;
  portalReturnUrl?: string;
  log?: { warn(message: string, extra?: unknown): void; error(message: string, extra?: unknown): void };
}

/** What a provider event did: applied, already applied before, or ignored (with the reason). */
export interface EventOutcome {
  result: 'applied' | 'duplicate' | 'ignored';
  reason?: string;
  account_id?: string;
}

export type ChangeResult = 'upgraded' | 'downgrade_scheduled' | 'downgrade_cancelled' | 'unchanged';

type Decision = { ignore: string } | Omit<BillingStateWrite, 'seen' | 'eventId'>;

const MAX_ATTEMPTS = 25;
/**
 * A jittered pause before deciding again after a write lost to a concurrent one (another event, a purchase, a charge
 * spending the allowance): writers of one account spread out instead of retrying in lockstep until the attempts run out.
 */
const afterConflict = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(250, 5 * 2 ** attempt)));
/** How far our clock and the payment provider's may differ, for telling which of its events our own calls' answers are newer than. */
const PROVIDER_CLOCK_MARGIN_MS = 60_000;
/** The most one checkout may credit (1,000,000 USD). A larger total is refused, never credited or clipped. */
export const MAX_PURCHASE_MICROS: Micros = 1_000_000 * MICROS_PER_USD;
/** Invoices that start a period's allowance (not proration invoices of an upgrade, which adds the difference itself). */
const ALLOWANCE_INVOICES = new Set(['subscription_create', 'subscription_cycle', 'subscription']);

export function paymentsNotConfigured(setting = 'STRIPE_SECRET_KEY'): ServiceError {
  return new ServiceError(
    'PAYMENTS_NOT_CONFIGURED',
    `Payments are not available on this deployment: Stripe is not configured (${setting} is not set). Ask the operator to configure Stripe.`,
    { setting },
  );
}

export function noActiveSubscription(account: Account): ServiceError {
  return new ServiceError(
    'NO_ACTIVE_SUBSCRIPTION',
    'This account has no active subscription. Start one through the dashboard checkout; GET /accounts/me/subscription/plans lists the plans.',
    { subscription_status: account.subscription?.status ?? null },
  );
}

/** Body of POST /accounts/me/subscription/change. */
export const changeSubscriptionBodySchema = z.object({
  price_id: z.string().min(1).meta({
    description: 'The price id of the plan to move to, one of those GET /accounts/me/subscription/plans lists. A higher-priced plan applies at once (prorated); a lower-priced one from the next renewal; the plan in effect cancels a scheduled downgrade.',
  }),
});

/**
 * Subscriptions and purchases: what a payment-provider event does to an account, and the subscription
 * routes. No provider SDK here; the adapter hands over plain data (./ports.ts).
 *
 * Every change is one conditional write of the account's billing state (see BillingStateStore): the event
 * id is recorded in the same write, so an event is applied once, and a concurrent change (another event,
 * or a charge spending the allowance) makes the write fail and the decision is made again on a fresh read.
 */
export class SubscriptionService {
  constructor(private readonly deps: SubscriptionServiceDeps) {}

  async catalog(): Promise<SubscriptionCatalog> {
    return SubscriptionCatalog.fromPlans(await this.deps.plans.list());
  }

  private provider(): PaymentProvider {
    if (!this.deps.provider) throw paymentsNotConfigured();
    return this.deps.provider;
  }

  // ── provider events ────────────────────────────────────────────────────────────────────────────────

  async handleEvent(event: PaymentEvent): Promise<EventOutcome> {
    // The event id is the applied-once marker written with the effect: without one, a redelivery would apply it again.
    if (typeof event.id !== 'string' || event.id === '') {
      this.deps.log?.error('payment event without an id ignored (it could not be applied exactly once)', { type: event.type, kind: event.kind });
      return { result: 'ignored', reason: 'malformed_event' };
    }
    if (event.kind === 'other') return { result: 'ignored', reason: 'event_type_not_handled' };
    if (await this.deps.store.eventApplied(event.id)) return { result: 'duplicate' };
    switch (event.kind) {
      case 'checkout_completed':
        return this.checkoutCompleted(event.id, event.session, event.created);
      case 'subscription_changed': {
        const p = event.subscription;
        const accountId = p.account_ref ?? (await this.deps.store.accountForCustomer(p.customer_id));
        if (!accountId) return { result: 'ignored', reason: 'unknown_customer' };
        const creation = event.type === 'customer.subscription.created';
        const view = await this.untied(accountId, p, event.created, creation);
        return this.applySubscription(accountId, view, { eventId: event.id, eventAt: event.created, creation });
      }
      case 'invoice_paid':
        return this.invoicePaid(event.id, event.invoice);
      case 'payment_reversed':
        return this.paymentReversed(event.id, event.reversal);
      case 'dispute_settled':
        return { result: 'ignored', reason: 'dispute_not_lost' };
    }
  }

  /**
   * Event times have a resolution of one second, and events arrive in any order: of two updates of one subscription
   * stamped the same second, the one arriving later may show the older state. On such a tie the provider's current
   * view of the subscription is applied instead of the event's.
   */
  private async untied(accountId: string, p: ProviderSubscription, eventAt: string, creation: boolean): Promise<ProviderSubscription> {
    const stored = (await this.deps.accounts.get(accountId))?.subscription;
    // Without the provider's API (no secret key configured) the event is all there is.
    if (!this.deps.provider || !stored) return p;
    // An event of another subscription than the stored one may replace it, and nothing stored tells how old it is (a
    // late update of a subscription cancelled since would revive it over the one subscribed after): the current view decides.
    const other = stored.subscription_id !== p.id;
    if (!other && (creation || stored.provider?.event_at !== eventAt)) return p;
    const live = await this.deps.provider.getSubscription(p.id);
    return { ...live, account_ref: live.account_ref ?? p.account_ref };
  }

  /**
   * A refund or a lost dispute of a credit-pack payment takes back the purchase's credits in the share given back
   * (./reversals.ts), from the one-off balance and never below zero; a refund that failed gives back what it took.
   * Refund events are read as "the charge's refunds changed": the refunded total is asked of the provider each time,
   * because the events come late and out of order and a failed refund is reported on the refund, not the charge.
   * Refunds of other payments (subscription invoices) change nothing here: the subscription's own events say what it
   * is worth. Without the provider nothing can be decided (503, so the event is delivered again once it is set up).
   */
  private async paymentReversed(eventId: string, r: PaymentReversal): Promise<EventOutcome> {
    const provider = this.provider();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = r.payment_ref ? await this.purchasePaidWith(provider, r.payment_ref, eventId) : null;
      if (!found) return { result: 'ignored', reason: 'not_a_credit_purchase' };
      const sized: SizedReversal = r.kind === 'refund' ? { ...r, refunded_minor: await provider.refundedTotal(r.reference) } : r;
      const accountId = found.account_id;
      const account = await this.deps.accounts.get(accountId);
      if (!account) {
        this.deps.log?.error('refund or dispute of a purchase whose account does not exist', { account_id: accountId, event: eventId });
        return { result: 'ignored', reason: 'unknown_account' };
      }
      const at = this.deps.clock.now();
      const decision = reversePurchase(found.purchase, sized, account.credits_micros, at.toISOString());
      if ('ignore' in decision) {
        if (decision.ignore === 'payment_amount_unknown') this.deps.log?.error('refund or dispute of a purchase whose paid amount is unknown; nothing taken back', { account_id: accountId, event: eventId, purchase: found.purchase.purchase_id });
        return { result: 'ignored', reason: decision.ignore, account_id: accountId };
      }
      const { reversal, debit_micros, restore_micros } = decision;
      const wholeBalance = decision.unrecovered_micros > 0 ? { whole_balance_micros: account.credits_micros } : {};
      const outcome = await this.deps.store.reverse({ account_id: accountId, seen: found.purchase, reversal, debit_micros, restore_micros, eventId, ...wholeBalance }, at);
      if (outcome === 'duplicate') return { result: 'duplicate', account_id: accountId };
      if (outcome === 'committed') {
        if (decision.unrecovered_micros > 0) {
          this.deps.log?.warn('refunded or disputed credits had already been spent; the balance is left at what remained', {
            account_id: accountId,
            purchase: found.purchase.purchase_id,
            event: eventId,
            unrecovered_micros: decision.unrecovered_micros,
          });
        }
        if (restore_micros > 0) {
          this.deps.log?.warn('a refund failed or was cancelled; the credits taken for it were given back', { account_id: accountId, purchase: found.purchase.purchase_id, event: eventId, restore_micros });
        }
        return { result: 'applied', account_id: accountId };
      }
      await afterConflict(attempt);
    }
    throw new Error(`purchase paid with ${r.payment_ref} kept changing after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * The purchase a payment paid for. A refund or dispute can arrive before the checkout it reverses was applied (that
   * event's delivery failed, or is still being retried): the provider is asked which checkout the payment paid, and
   * that checkout is applied first, exactly as its own event would (one purchase per session, so the event changes
   * nothing when it comes). Otherwise the refund would find nothing and the credits would stay.
   */
  private async purchasePaidWith(provider: PaymentProvider, paymentRef: string, eventId: string): Promise<{ account_id: string; purchase: Purchase } | null> {
    const found = await this.deps.store.purchaseForPayment(paymentRef);
    if (found) return found;
    const session = await provider.checkoutForPayment(paymentRef);
    if (!session || session.mode !== 'payment' || session.payment_ref !== paymentRef) return null;
    const applied = await this.checkoutCompleted(undefined, session);
    // Ignored checkouts say why themselves; a duplicate is a purchase recorded before payments were (nothing to find).
    if (applied.result === 'applied') {
      this.deps.log?.warn('a refund or dispute came before its checkout was applied; the checkout was applied first', { event: eventId, session: session.id, account_id: applied.account_id });
    }
    return this.deps.store.purchaseForPayment(paymentRef);
  }

  /** `eventAt`: when the checkout's event was created; the subscription read now is at least that recent. */
  private async checkoutCompleted(eventId: string | undefined, s: CheckoutSession, eventAt?: string): Promise<EventOutcome> {
    const accountId = s.account_ref ?? (s.customer_id ? await this.deps.store.accountForCustomer(s.customer_id) : null);
    if (!accountId) {
      this.deps.log?.error('paid checkout without a known account (client_reference_id must be the account id)', { session: s.id });
      return { result: 'ignored', reason: 'unknown_account' };
    }
    // Asynchronous payment methods complete the checkout unpaid; checkout.session.async_payment_succeeded follows.
    if (s.payment_status !== 'paid' && s.payment_status !== 'no_payment_required') return { result: 'ignored', reason: 'payment_pending', account_id: accountId };

    if (s.mode === 'payment') {
      const items = await this.provider().checkoutLineItems(s.id);
      // A quantity is a whole number of packs: 0 buys nothing; anything else (negative, fractional, missing) is not a purchase we can read.
      if (items.some((i) => !Number.isSafeInteger(i.quantity) || i.quantity < 0)) {
        this.deps.log?.error('checkout with a line item quantity that is not a whole number of packs; nothing credited', { session: s.id, account_id: accountId, items });
        return { result: 'ignored', reason: 'invalid_quantity', account_id: accountId };
      }
      let micros = 0;
      for (const item of items) {
        const pack = this.deps.packs.find((p) => p.price_id === item.price_id);
        if (pack) micros += pack.amount_micros * item.quantity;
      }
      if (micros > MAX_PURCHASE_MICROS) {
        this.deps.log?.error(`checkout total out of range (over ${MAX_PURCHASE_MICROS / MICROS_PER_USD} USD); nothing credited`, { session: s.id, account_id: accountId, micros, items });
        return { result: 'ignored', reason: 'amount_out_of_range', account_id: accountId };
      }
      if (micros === 0) {
        // Paid for prices that are not packs: an operator must act (a STRIPE_PRICE_PACK_* setting is missing or wrong).
        // Packs bought zero times are nothing to act on.
        const unknownBought = items.some((i) => i.quantity > 0 && !this.deps.packs.some((p) => p.price_id === i.price_id));
        const level = unknownBought && s.payment_status === 'paid' ? 'error' : 'warn';
        this.deps.log?.[level]('checkout without a configured credit pack price; nothing credited (check the STRIPE_PRICE_PACK_* settings)', {
          session: s.id,
          account_id: accountId,
          prices: items.map((i) => i.price_id),
        });
        return { result: 'ignored', reason: 'no_credit_pack', account_id: accountId };
      }
      const at = this.deps.clock.now().toISOString();
      return this.mutate(accountId, eventId, (account) => ({
        next: {
          plan_id: account.plan_id ?? STANDARD_PLAN_ID,
          status: 'active',
          subscription: account.subscription,
          stripe_customer_id: account.stripe_customer_id ?? s.customer_id,
        },
        // One purchase per checkout session, whichever of its events (completed, async_payment_succeeded) lands first.
        purchase: {
          purchase_id: `checkout_${s.id}`,
          amount_micros: micros,
          source: 'stripe_checkout',
          reference: s.id,
          created_at: at,
          payment_ref: s.payment_ref,
          paid_minor: s.amount_paid_minor,
        },
        linkCustomer: s.customer_id,
      }));
    }
    if (s.mode === 'subscription' && s.subscription_id) {
      // The session carries only the id; the subscription itself is read from the provider. Its first invoice is paid.
      const p = await this.provider().getSubscription(s.subscription_id);
      // Read after the checkout's event was created. Stripe stamps events in whole seconds: those of the checkout's own
      // second are applied as they come (as before; mostly the subscription turning active as its payment went
      // through), those of the second before tie with this time and are decided by a read of the subscription
      // (untied), and older ones are stale.
      const viewAt = eventAt ? new Date(Date.parse(eventAt) - 1000).toISOString() : undefined;
      return this.applySubscription(accountId, p, { eventId, eventAt: null, paid: true, viewAt });
    }
    return { result: 'ignored', reason: 'checkout_mode_not_handled', account_id: accountId };
  }

  private async invoicePaid(eventId: string, inv: PaidInvoice): Promise<EventOutcome> {
    if (!inv.subscription_id || !inv.period_start) return { result: 'ignored', reason: 'not_a_subscription_invoice' };
    if (!ALLOWANCE_INVOICES.has(inv.billing_reason ?? '')) return { result: 'ignored', reason: 'no_allowance_change' };
    const accountId = inv.customer_id ? await this.deps.store.accountForCustomer(inv.customer_id) : null;
    if (!accountId) return { result: 'ignored', reason: 'unknown_customer' };
    const catalog = await this.catalog();
    const periodStart = inv.period_start;
    const history = { boughtPack: await this.boughtPack(accountId) };
    return this.mutate(accountId, eventId, (account) => {
      const sub = account.subscription;
      if (!sub || sub.subscription_id !== inv.subscription_id) return { ignore: 'unknown_subscription' };
      const granted = grantPeriodAllowance(sub, { period_start: periodStart, period_end: inv.period_end, price_id: inv.price_id }, catalog);
      if (!granted) return { ignore: 'allowance_already_granted' };
      const next = deriveSubscription(granted, catalog);
      return { next: { ...accountPlanAfter(account, next, catalog, history), subscription: next, stripe_customer_id: account.stripe_customer_id } };
    });
  }

  /**
   * Applies the provider's view of a subscription to an account: from an event (`eventAt` set), from a
   * completed checkout (`paid`: its first invoice is paid), or from the answer to one of our own API calls. `viewAt`:
   * a time the view is known to be newer than (events created before it then count as stale).
   */
  async applySubscription(
    accountId: string,
    p: ProviderSubscription,
    opts: { eventId?: string; eventAt?: string | null; paid?: boolean; creation?: boolean; viewAt?: string },
  ): Promise<EventOutcome> {
    const catalog = await this.catalog();
    const plan = catalog.forPrice(p.price_id);
    if (!plan) {
      this.deps.log?.warn('subscription with a price outside the plan catalogue', { subscription: p.id, price: p.price_id });
      return { result: 'ignored', reason: 'unknown_price', account_id: accountId };
    }
    await this.settleReplaced(accountId, p);
    // Only an ended subscription needs the purchase history (does the account fall back to pay-as-you-go?).
    const history = { boughtPack: mapProviderStatus(p.status) === 'canceled' && (await this.boughtPack(accountId)) };
    return this.mutate(accountId, opts.eventId, (account) => {
      const current = account.subscription;
      if (current && current.subscription_id !== p.id) {
        // Another subscription of the same customer: it replaces the stored one only if that one has ended
        // or the new one is live while the stored one is not.
        const incomingLive = ['active', 'trialing'].includes(mapProviderStatus(p.status));
        const currentLive = current.status === 'active' || current.status === 'trialing';
        // An ended one replaces only an ended one of an earlier period: a live or past-due subscription stays the account's.
        if (mapProviderStatus(p.status) === 'canceled' && (current.status !== 'canceled' || p.period_start <= current.period_start)) return { ignore: 'other_subscription' };
        if (current.status !== 'canceled' && (currentLive || !incomingLive)) {
          // A second live subscription is being paid for and grants nothing here: someone has to cancel and refund one.
          if (incomingLive) {
            this.deps.log?.error('a second live subscription for an account that has one was ignored; cancel and refund one of them with the provider', {
              account_id: accountId,
              kept: current.subscription_id,
              ignored: p.id,
              event: opts.eventId,
            });
          }
          return { ignore: 'other_subscription' };
        }
      }
      const same = current?.subscription_id === p.id ? current : null;
      // A cancelled subscription never comes back (the provider makes a new one): a live view of it is an older event,
      // also one stamped the same second as the cancellation (event times have a resolution of one second).
      if (same?.status === 'canceled' && mapProviderStatus(p.status) !== 'canceled') return { ignore: 'stale_event' };
      // A creation event shows the subscription as it was made (for a checkout: `incomplete`, before its first payment).
      // Anything stored about the same subscription came from a later event or from a read of it after its checkout
      // (which carries no event time to compare with), so a late or same-second `created` is older than what is stored.
      if (same && opts.creation) return { ignore: 'stale_event' };
      if (same && p.period_start < same.period_start) return { ignore: 'stale_event' };
      if (same && opts.eventAt && same.provider?.event_at && opts.eventAt < same.provider.event_at) return { ignore: 'stale_event' };

      let next: Subscription = mergeProviderSubscription(same, p, plan, opts.eventAt ?? null);
      // A view read from the provider after `viewAt` is newer than the events created before it: recorded as the last
      // event time, they are stale when they arrive late (a retried delivery of an update made while the first payment
      // was under way would otherwise turn the paid subscription past_due; one made before our cancel would undo the
      // scheduled cancel). Events stamped `viewAt` itself may be newer than the view and are applied as before.
      if (opts.viewAt && next.provider && (!next.provider.event_at || next.provider.event_at < opts.viewAt)) {
        next = { ...next, provider: { ...next.provider, event_at: opts.viewAt } };
      }
      // A live subscription that takes over from another one (ended, or not live) has paid for its period, as a live
      // renewal has: its checkout and invoice were ignored while the other one was stored, and are not sent again.
      const takesOver = !!current && current.subscription_id !== p.id && !p.pause_collection;
      if ((opts.paid || takesOver) && ['active', 'trialing'].includes(mapProviderStatus(p.status))) {
        next = grantPeriodAllowance(next, { period_start: p.period_start, period_end: p.period_end, price_id: p.price_id }, catalog) ?? next;
      }
      next = deriveSubscription(next, catalog);
      return {
        next: { ...accountPlanAfter(account, next, catalog, history), subscription: next, stripe_customer_id: account.stripe_customer_id ?? p.customer_id },
        linkCustomer: p.customer_id,
      };
    });
  }

  /**
   * A live subscription other than the stored live one is a second one only while the stored one still runs: a customer
   * who cancelled and subscribed again sends the new one's events, which may all arrive before the old one's
   * `customer.subscription.deleted`, and would be ignored for good. The provider's current view of the stored one
   * says; when it has ended, that is applied first (cancelled is final), so the new one takes over.
   */
  private async settleReplaced(accountId: string, p: ProviderSubscription): Promise<void> {
    if (!this.deps.provider || !['active', 'trialing'].includes(mapProviderStatus(p.status))) return;
    const stored = (await this.deps.accounts.get(accountId))?.subscription;
    if (!stored || stored.subscription_id === p.id || stored.status === 'canceled') return;
    const now = await this.deps.provider.getSubscription(stored.subscription_id);
    if (mapProviderStatus(now.status) === 'canceled') await this.applySubscription(accountId, now, { viewAt: this.answerViewAt() });
  }

  /** Whether the account ever bought a credit pack. */
  private async boughtPack(accountId: string): Promise<boolean> {
    return (await this.deps.store.purchases(accountId, 1)).length > 0;
  }

  /** Read, decide, write conditionally; on a concurrent change, read and decide again. */
  private async mutate(accountId: string, eventId: string | undefined, decide: (account: Account) => Decision): Promise<EventOutcome> {
    let linkCustomer = true;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const account = await this.deps.accounts.get(accountId);
      if (!account) {
        this.deps.log?.error('payment event for an account that does not exist', { account_id: accountId, event: eventId });
        return { result: 'ignored', reason: 'unknown_account' };
      }
      const decision = decide(account);
      if ('ignore' in decision) return { result: 'ignored', reason: decision.ignore, account_id: accountId };
      const unlinked = { linkCustomer: null, next: { ...decision.next, stripe_customer_id: account.stripe_customer_id } };
      const write = { ...decision, ...(linkCustomer ? {} : unlinked), seen: account, eventId };
      const outcome = await this.deps.store.commit(write, this.deps.clock.now());
      if (outcome === 'committed') return { result: 'applied', account_id: accountId };
      if (outcome === 'duplicate') return { result: 'duplicate', account_id: accountId };
      if (outcome === 'conflict') await afterConflict(attempt);
      if (outcome === 'customer_conflict') {
        this.deps.log?.error('provider customer already belongs to another account', { account_id: accountId, event: eventId });
        // A paid purchase is still credited to the account it was bought for; only the mapping is left alone.
        if (!decision.purchase) return { result: 'ignored', reason: 'customer_belongs_to_another_account', account_id: accountId };
        linkCustomer = false;
      }
    }
    throw new Error(`billing state of ${accountId} kept changing after ${MAX_ATTEMPTS} attempts`);
  }

  // ── subscription routes ────────────────────────────────────────────────────────────────────────────

  /**
   * What the answer to one of our own calls to the provider is newer than: events it created over a minute before the
   * call by our clock (a margin for the two clocks' difference), so that such an event delivered late cannot undo it.
   */
  private answerViewAt(): string {
    return new Date(this.deps.clock.now().getTime() - PROVIDER_CLOCK_MARGIN_MS).toISOString();
  }

  private async reload(account: Account): Promise<Account> {
    return (await this.deps.accounts.get(account.account_id)) ?? account;
  }

  /** A subscription the customer can still act on (anything but cancelled). */
  private liveSubscription(account: Account): Subscription {
    const sub = account.subscription;
    if (!sub || sub.status === 'canceled') throw noActiveSubscription(account);
    return sub;
  }

  /** POST /accounts/me/subscription/cancel: at the end of the current period. Cancelling twice is harmless. */
  async cancel(account: Account): Promise<Account> {
    // The account's own state answers first (409 without a subscription); only a real change needs the provider.
    const sub = this.liveSubscription(account);
    if (sub.scheduled_change?.action === 'cancel') return account;
    const p = await this.provider().cancelAtPeriodEnd(sub.subscription_id);
    await this.applySubscription(account.account_id, p, { viewAt: this.answerViewAt() });
    return this.reload(account);
  }

  /** POST /accounts/me/subscription/resume: undoes a scheduled cancel (and a collection pause). Harmless when nothing is pending. */
  async resume(account: Account): Promise<Account> {
    const sub = this.liveSubscription(account);
    const pending = {
      cancel_at_period_end: sub.cancel_at_period_end,
      cancel_at: sub.provider?.cancel_at ?? null,
      pause_collection: sub.provider?.pause_collection ?? false,
    };
    if (!pending.cancel_at_period_end && !pending.cancel_at && !pending.pause_collection) return account;
    const p = await this.provider().resume(sub.subscription_id, pending);
    await this.applySubscription(account.account_id, p, { viewAt: this.answerViewAt() });
    return this.reload(account);
  }

  /**
   * POST /accounts/me/subscription/change: an upgrade is billed now with proration and adds the difference
   * to the allowance; a downgrade is billed from the next renewal and shows as a scheduled change. Changing
   * back to the plan in effect undoes a scheduled downgrade.
   */
  async change(account: Account, body: unknown): Promise<{ account: Account; result: ChangeResult }> {
    const catalog = await this.catalog();
    const offered = catalog.offered();
    // A body that is not an object is read as one without price_id: the refusal names price_id and lists the plans.
    const { price_id: priceId } = parseRequest(changeSubscriptionBodySchema, isJsonObject(body) ? body : {}, {
      refusals: {
        price_id: () => invalidParameter('price_id', 'Send {"price_id": "<price id>"}; GET /accounts/me/subscription/plans lists them.', { allowed: offered.map((t) => t.price_id) }),
      },
    });
    const target = offered.find((t) => t.price_id === priceId);
    if (!target) {
      throw invalidParameter('price_id', `${shownValue(priceId)} is not a subscription plan on offer. Use one of: ${offered.map((t) => t.price_id).join(', ')}.`, {
        allowed: offered.map((t) => t.price_id),
      });
    }
    const sub = account.subscription;
    if (!sub || (sub.status !== 'active' && sub.status !== 'trialing')) throw noActiveSubscription(account);
    const billed = sub.provider?.price_id ?? sub.price_id;
    if (target.price_id === billed) return { account, result: 'unchanged' };

    const provider = this.provider();
    const itemId = sub.provider?.item_id ?? (await provider.getSubscription(sub.subscription_id)).item_id;
    if (!itemId) throw new Error(`subscription ${sub.subscription_id} has no item to change`);
    const upgrade = target.price_micros > sub.price_micros;
    // The same change asked for twice at once (a double click, a retried request) reaches the provider as one: an
    // upgrade invoices its proration once. The minute in the key lets a change refused for payment be asked again
    // (the provider keeps a key's first answer, a decline included, for a day). The billing version moves with every
    // change applied to the account, so going back and forth (down, back up, down again) within one minute is a new
    // request each time, never the replay of an earlier one (which the provider answers without doing anything).
    const minute = Math.floor(this.deps.clock.now().getTime() / 60_000);
    const idempotencyKey = `plan-change:${sub.subscription_id}:${billed}:${target.price_id}:v${account.billing_version ?? 0}:${minute}`;
    const p = await provider.changePrice(sub.subscription_id, itemId, target.price_id, upgrade, idempotencyKey);
    await this.applySubscription(account.account_id, p, { viewAt: this.answerViewAt() });
    const result: ChangeResult = upgrade ? 'upgraded' : target.price_id === sub.price_id ? 'downgrade_cancelled' : 'downgrade_scheduled';
    return { account: await this.reload(account), result };
  }

  /** POST /accounts/me/subscription/portal: a customer-portal link (payment method, invoices, cancel). */
  async portalUrl(account: Account): Promise<string> {
    const customer = account.subscription?.customer_id ?? account.stripe_customer_id;
    if (!customer) {
      throw new ServiceError(
        'NO_BILLING_CUSTOMER',
        'This account has no billing profile yet. Buy a credit pack or start a subscription through the dashboard checkout first.',
      );
    }
    return this.provider().portalUrl(customer, this.deps.portalReturnUrl);
  }
}
