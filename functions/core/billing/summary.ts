import { type Account, type Subscription, subscriptionIsUsable, usableAllowanceMicros } from '../accounts/account';
import { microsToUsd } from './money';
import type { Plan } from './plans';

/** The subscription object of the spec: stored state plus what is usable right now. */
export function presentSubscription(sub: Subscription, pricePerPdfMicros: number, now: Date) {
  const active = subscriptionIsUsable(sub, now);
  const remaining = active ? sub.allowance_micros : 0;
  return {
    subscription_id: sub.subscription_id,
    status: sub.status,
    name: sub.name,
    price_id: sub.price_id,
    price: microsToUsd(sub.price_micros),
    monthly_pdfs: sub.monthly_pdfs,
    credits_remaining: microsToUsd(remaining),
    pdfs_remaining: pricePerPdfMicros > 0 ? Math.floor(remaining / pricePerPdfMicros) : 0,
    period_start: sub.period_start,
    period_end: sub.period_end,
    active,
    scheduled_change: sub.scheduled_change,
  };
}

/** The billing summary object (GET /accounts/me/billing), exact to the cent. */
export function billingSummary(account: Account, plan: Plan | null, now: Date) {
  const pricePerPdf = plan?.price_per_pdf_micros ?? 10_000;
  const allowance = usableAllowanceMicros(account, now);
  return {
    plan_id: account.plan_id,
    plan_type: plan?.plan_type ?? 'pending',
    monthly_quota: account.subscription?.monthly_pdfs ?? plan?.monthly_quota ?? null,
    credits_balance: microsToUsd(account.credits_micros),
    free_credits_remaining: microsToUsd(account.free_credits_micros),
    subscription_credits_remaining: microsToUsd(allowance),
    subscription_pdfs_remaining: Math.floor(allowance / pricePerPdf),
    subscription: account.subscription ? presentSubscription(account.subscription, pricePerPdf, now) : null,
    total_pdf_count: account.total_pdf_count,
    total_amount: microsToUsd(account.total_amount_micros),
    price_per_pdf: microsToUsd(pricePerPdf),
  };
}
