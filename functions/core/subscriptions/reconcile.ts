/**
 * What the payment provider's view of a subscription does to the stored one. Pure functions: the provider's
 * state goes in, the account's subscription comes out. The rules (document 1, "Subscription status values
 * and moves", charging rules 6 and 8):
 *
 * - the allowance is set to the plan amount (no rollover) once per period: when a renewal starts a new period
 *   while the subscription is live, or when that period's invoice is paid (the first period: its checkout);
 * - an upgrade takes effect at once and adds the difference between the plans to the allowance;
 * - a downgrade is billed from the next renewal on: until then the current plan stays in effect and the
 *   subscription shows `scheduled_change: downgrade`;
 * - a cancel at period end shows `scheduled_change: cancel`; the allowance stays usable until the period
 *   ends and is removed when the subscription is cancelled;
 * - paused collection shows `scheduled_change: pause` until a new period starts unpaid, then `paused`.
 */
import { STANDARD_PLAN_ID } from '../billing/plans';
import type { Account, ProviderSnapshot, ScheduledChange, Subscription, SubscriptionStatus } from '../accounts/account';
import type { PlanTerms, SubscriptionCatalog } from './catalog';
import type { ProviderSubscription } from './ports';

const STATUS_MAP: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'trialing',
  past_due: 'past_due',
  unpaid: 'past_due',
  incomplete: 'past_due',
  paused: 'paused',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
};

/** The provider's status as one of the five spec statuses; an unknown one is treated as not usable. */
export function mapProviderStatus(status: string): SubscriptionStatus {
  return STATUS_MAP[status] ?? 'past_due';
}

/** The period whose allowance the subscription holds. */
export function allowancePeriod(sub: Subscription): string | null {
  return sub.allowance_period_start === undefined ? sub.period_start : sub.allowance_period_start;
}

function withTerms(sub: Subscription, plan: PlanTerms): Subscription {
  return { ...sub, name: plan.name, price_id: plan.price_id, price_micros: plan.price_micros, monthly_pdfs: plan.monthly_pdfs };
}

/**
 * Merges the provider's subscription into the stored one. `plan` is the catalogued plan of the provider's
 * price. The caller has already discarded events about an earlier period than the stored one.
 */
export function mergeProviderSubscription(current: Subscription | null, p: ProviderSubscription, plan: PlanTerms, eventAt: string | null): Subscription {
  const provider: ProviderSnapshot = {
    status: p.status,
    price_id: p.price_id,
    item_id: p.item_id,
    cancel_at: p.cancel_at,
    pause_collection: p.pause_collection,
    event_at: eventAt ?? (current?.subscription_id === p.id ? current.provider?.event_at ?? null : null),
  };
  if (!current || current.subscription_id !== p.id) {
    // A new subscription: no allowance until its first invoice is paid.
    return {
      subscription_id: p.id,
      customer_id: p.customer_id,
      status: mapProviderStatus(p.status),
      name: plan.name,
      price_id: plan.price_id,
      price_micros: plan.price_micros,
      monthly_pdfs: plan.monthly_pdfs,
      allowance_micros: 0,
      allowance_period_start: null,
      period_start: p.period_start,
      period_end: p.period_end,
      cancel_at_period_end: p.cancel_at_period_end,
      scheduled_change: null,
      provider,
    };
  }
  let next: Subscription = {
    ...current,
    customer_id: p.customer_id,
    cancel_at_period_end: p.cancel_at_period_end,
    allowance_period_start: allowancePeriod(current),
    provider,
  };
  if (p.period_start > current.period_start) {
    // A new period: the plan billed from now on is the plan in effect (a scheduled downgrade lands here),
    // and the old period's allowance ends with it (no rollover). The renewal resets the allowance to the plan
    // amount (charging rule 6) while the provider still calls the subscription live: its invoice is paid about an
    // hour later, and a failed payment turns it past_due, which makes the allowance unusable. Paused collection
    // bills nothing, so nothing is granted; an invoice paid later (grantPeriodAllowance) grants it once.
    next = { ...withTerms(next, plan), period_start: p.period_start, period_end: p.period_end };
    const live = ['active', 'trialing'].includes(mapProviderStatus(p.status)) && !p.pause_collection;
    if (next.allowance_period_start !== p.period_start) {
      next = live ? { ...next, allowance_micros: plan.price_micros, allowance_period_start: p.period_start } : { ...next, allowance_micros: 0 };
    }
  } else {
    next.period_end = p.period_end;
    if (plan.price_id !== current.price_id && plan.price_micros >= current.price_micros) {
      // Upgrade: effective now, and the allowance grows by the difference between the plans.
      next = { ...withTerms(next, plan), allowance_micros: current.allowance_micros + (plan.price_micros - current.price_micros) };
    }
    // A cheaper price at the provider is a downgrade from the next renewal on (see deriveSubscription).
  }
  return next;
}

/**
 * A paid invoice for a period: the allowance becomes the plan amount for that period, once. Returns null
 * when there is nothing to do (already granted, or an invoice of an earlier period).
 */
export function grantPeriodAllowance(
  sub: Subscription,
  paid: { period_start: string; period_end: string | null; price_id: string | null },
  catalog: SubscriptionCatalog,
): Subscription | null {
  if (paid.period_start < sub.period_start) return null;
  if (allowancePeriod(sub) === paid.period_start) return null;
  let next: Subscription = sub;
  if (paid.period_start > sub.period_start) {
    // The invoice of a renewal the subscription events have not reported yet.
    const plan = catalog.forPrice(paid.price_id ?? sub.provider?.price_id ?? sub.price_id);
    next = { ...(plan ? withTerms(sub, plan) : sub), period_start: paid.period_start, period_end: paid.period_end ?? sub.period_end };
  }
  return { ...next, allowance_micros: next.price_micros, allowance_period_start: next.period_start };
}

/** Status and scheduled_change as the spec shows them, from the provider's view and the plan in effect. */
export function deriveSubscription(sub: Subscription, catalog: SubscriptionCatalog): Subscription {
  const pv = sub.provider;
  if (!pv) return sub;
  const paidForPeriod = allowancePeriod(sub) === sub.period_start;
  let status = mapProviderStatus(pv.status);
  if (status === 'active' && pv.pause_collection && !paidForPeriod) status = 'paused';
  let scheduled: ScheduledChange | null = null;
  if (status !== 'canceled') {
    if (sub.cancel_at_period_end || pv.cancel_at) {
      scheduled = { action: 'cancel', effective_at: pv.cancel_at ?? sub.period_end };
    } else if (pv.pause_collection && status !== 'paused') {
      scheduled = { action: 'pause', effective_at: sub.period_end };
    } else {
      const billed = catalog.forPrice(pv.price_id);
      if (billed && billed.price_id !== sub.price_id && billed.price_micros < sub.price_micros) {
        scheduled = { action: 'downgrade', effective_at: sub.period_end, price_id: billed.price_id, name: billed.name, monthly_pdfs: billed.monthly_pdfs };
      }
    }
  }
  // Cancelled: the allowance is removed (one-off credits are untouched, rule 8).
  return { ...sub, status, allowance_micros: status === 'canceled' ? 0 : sub.allowance_micros, scheduled_change: scheduled };
}

/**
 * The account's plan once the subscription is in this state: a usable subscription makes the account
 * active on the subscription's plan. When it ends, an account that has bought a pack (or holds credits) falls
 * back to the standard pay-as-you-go plan so its one-off credits keep working (rule 8); one that never had a
 * pack is pending again, as it was before subscribing (rule 7: no pack and no subscription is pending, 402).
 */
export function accountPlanAfter(account: Account, sub: Subscription, catalog: SubscriptionCatalog, history: { boughtPack: boolean }): Pick<Account, 'plan_id' | 'status'> {
  if (sub.status === 'active' || sub.status === 'trialing') {
    return { plan_id: catalog.forPrice(sub.price_id)?.plan_id ?? account.plan_id ?? STANDARD_PLAN_ID, status: 'active' };
  }
  if (sub.status === 'canceled' && catalog.isSubscriptionPlan(account.plan_id)) {
    const hasPack = history.boughtPack || account.credits_micros > 0 || account.free_credits_micros > 0;
    return hasPack ? { plan_id: STANDARD_PLAN_ID, status: 'active' } : { plan_id: null, status: 'pending' };
  }
  return { plan_id: account.plan_id, status: account.status };
}
