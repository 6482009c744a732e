import type { Micros } from '../billing/money';

/** The five subscription statuses of document 1 (the provider's others are mapped onto them). */
export const SUBSCRIPTION_STATUSES = ['active', 'trialing', 'past_due', 'paused', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface ScheduledChange {
  action: 'cancel' | 'pause' | 'downgrade';
  effective_at: string;
  price_id?: string;
  name?: string;
  monthly_pdfs?: number;
}

/** A subscription as stored on the account. The allowance is USD (micro) left in the current period. */
export interface Subscription {
  subscription_id: string;
  customer_id: string | null;
  status: SubscriptionStatus;
  name: string;
  price_id: string | null;
  price_micros: Micros;
  monthly_pdfs: number;
  allowance_micros: Micros;
  period_start: string;
  period_end: string;
  cancel_at_period_end: boolean;
  scheduled_change: ScheduledChange | null;
  /**
   * The period whose allowance `allowance_micros` holds: granted once per period, at a live renewal or when the
   * period's invoice is paid (no rollover). Absent (local accounts): the allowance belongs to `period_start`.
   */
  allowance_period_start?: string | null;
  /** The payment provider's own view of the subscription, from which status and scheduled_change are derived. */
  provider?: ProviderSnapshot;
}

/** What the payment provider last said about a subscription (see functions/core/subscriptions). */
export interface ProviderSnapshot {
  /** The provider's raw status (e.g. Stripe's `unpaid`, `incomplete`), mapped to the five spec statuses for display. */
  status: string;
  /** The price the provider bills from the next invoice on; differs from `price_id` while a downgrade is scheduled. */
  price_id: string | null;
  item_id: string | null;
  cancel_at: string | null;
  pause_collection: boolean;
  /** Creation time of the last provider event applied; older events are stale. */
  event_at: string | null;
}

export type AccountStatus = 'active' | 'pending';

export interface Account {
  account_id: string;
  email: string;
  /** null while pending: the account has neither a pack nor a subscription (402 on conversions). */
  plan_id: string | null;
  status: AccountStatus;
  credits_micros: Micros;
  free_credits_micros: Micros;
  subscription: Subscription | null;
  total_pdf_count: number;
  total_amount_micros: Micros;
  email_notifications: boolean;
  mailmerge_max_rows: number;
  stripe_customer_id: string | null;
  created_at: string;
  updated_at: string;
  /** Bumped by every billing-state write (subscription, plan, purchases): optimistic concurrency for them. */
  billing_version?: number;
  /** What running bulk and merge/split jobs will charge, by job id (see functions/core/billing/commitments.ts). */
  commitments?: Record<string, JobCommitment>;
  /** Bumped by every change of `commitments`. */
  commitments_version?: number;
}

/** A running job's pledge: `charges` charges of `amount_micros` each, recorded at `at`. */
export interface JobCommitment {
  charges: number;
  amount_micros: Micros;
  at: string;
}

export const DEFAULT_MAILMERGE_MAX_ROWS = 100;

export interface NewAccount {
  account_id: string;
  email: string;
  plan_id: string | null;
  credits_micros?: Micros;
  free_credits_micros?: Micros;
  subscription?: Subscription | null;
  now: Date;
}

export function newAccount(input: NewAccount): Account {
  const at = input.now.toISOString();
  return {
    account_id: input.account_id,
    email: input.email,
    plan_id: input.plan_id,
    status: input.plan_id ? 'active' : 'pending',
    credits_micros: input.credits_micros ?? 0,
    free_credits_micros: input.free_credits_micros ?? 0,
    subscription: input.subscription ?? null,
    total_pdf_count: 0,
    total_amount_micros: 0,
    email_notifications: true,
    mailmerge_max_rows: DEFAULT_MAILMERGE_MAX_ROWS,
    stripe_customer_id: null,
    created_at: at,
    updated_at: at,
  };
}

/** Allowance is usable only while the subscription is active (or trialing) and its period has not ended. */
export function subscriptionIsUsable(sub: Subscription | null, now: Date): sub is Subscription {
  return !!sub && (sub.status === 'active' || sub.status === 'trialing') && now.toISOString() < sub.period_end;
}

/**
 * Whether an allowance charge made at `chargedAt` can go back into the allowance: only while the subscription is
 * usable, its allowance is the current period's, and the charge drew from it. A cancelled subscription's allowance can never be
 * spent, and after a renewal the new period's allowance is the plan amount (no rollover): the refund goes to one-off
 * credits instead. Mirrored by the DynamoDB refund's condition.
 */
export function allowanceTakesRefund(sub: Subscription | null, chargedAt: string, now: Date): boolean {
  if (!subscriptionIsUsable(sub, now)) return false;
  // Absent: a local account's allowance belongs to period_start; null: no allowance granted for this period.
  const allowancePeriod = sub.allowance_period_start === undefined ? sub.period_start : sub.allowance_period_start;
  // An allowance left from an earlier period (a renewal that started past due or paused, not yet paid) is not this
  // period's: a refund into it would roll over, and the period's invoice then sets it to the plan amount, losing it.
  return allowancePeriod === sub.period_start && allowancePeriod <= chargedAt;
}

export function usableAllowanceMicros(account: Account, now: Date): Micros {
  return subscriptionIsUsable(account.subscription, now) ? account.subscription.allowance_micros : 0;
}
