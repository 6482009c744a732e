import { type Account, type Subscription, subscriptionIsUsable, usableAllowanceMicros } from '../accounts/account';
import { microsToUsd, pdfsCovered } from './money';
import { PENDING_PLAN_ID, type Plan, PRICE_PER_PDF_MICROS } from './plans';
import { type CreditPack, presentPack } from './packs';

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
    pdfs_remaining: pdfsCovered(remaining, pricePerPdfMicros),
    period_start: sub.period_start,
    period_end: sub.period_end,
    active,
    scheduled_change: sub.scheduled_change,
  };
}

/** The price of one PDF for this account: its plan's, or the standard price while pending. */
export function pricePerPdfOf(plan: Plan | null): number {
  return plan?.price_per_pdf_micros ?? PRICE_PER_PDF_MICROS;
}

/** The billing summary object (GET /accounts/me/billing), exact to the micro-dollar. */
export function billingSummary(account: Account, plan: Plan | null, now: Date) {
  const pricePerPdf = pricePerPdfOf(plan);
  const allowance = usableAllowanceMicros(account, now);
  const liveSubscription = account.subscription && account.subscription.status !== 'canceled' ? account.subscription : null;
  return {
    // The spec types plan_id as a string: a pending account (no pack, no subscription) shows "pending", like plan_type.
    plan_id: account.plan_id ?? PENDING_PLAN_ID,
    plan_type: plan?.plan_type ?? 'pending',
    monthly_quota: liveSubscription?.monthly_pdfs ?? plan?.monthly_quota ?? null,
    credits_balance: microsToUsd(account.credits_micros),
    free_credits_remaining: microsToUsd(account.free_credits_micros),
    subscription_credits_remaining: microsToUsd(allowance),
    subscription_pdfs_remaining: pdfsCovered(allowance, pricePerPdf),
    subscription: account.subscription ? presentSubscription(account.subscription, pricePerPdf, now) : null,
    total_pdf_count: account.total_pdf_count,
    total_amount: microsToUsd(account.total_amount_micros),
    price_per_pdf: microsToUsd(pricePerPdf),
  };
}

/**
 * GET /accounts/me/credits: every balance a charge can draw on, in the order charges use them, what they
 * buy at the account's price, the packs on offer and the latest purchases.
 */
export function creditsSummary(
  account: Account,
  plan: Plan | null,
  now: Date,
  packs: readonly CreditPack[],
  purchases: readonly { purchase_id: string; amount_micros: number; source: string; reference: string; created_at: string; reversal?: { revoked_micros: number } }[],
) {
  const pricePerPdf = pricePerPdfOf(plan);
  const allowance = usableAllowanceMicros(account, now);
  const total = allowance + account.free_credits_micros + account.credits_micros;
  // One bucket covers a whole charge, so PDFs are counted per bucket.
  const pdfs = (micros: number) => pdfsCovered(micros, pricePerPdf);
  return {
    credits: {
      credits_balance: microsToUsd(account.credits_micros),
      free_credits_remaining: microsToUsd(account.free_credits_micros),
      subscription_credits_remaining: microsToUsd(allowance),
      subscription_pdfs_remaining: pdfs(allowance),
      total_available: microsToUsd(total),
      pdfs_available: pdfs(allowance) + pdfs(account.free_credits_micros) + pdfs(account.credits_micros),
      price_per_pdf: microsToUsd(pricePerPdf),
      currency: 'USD',
      bucket_order: ['subscription', 'free_credits', 'credits'],
    },
    packs: packs.map((p) => presentPack(p, pricePerPdf)),
    purchases: purchases.map((p) => ({
      purchase_id: p.purchase_id,
      amount: microsToUsd(p.amount_micros),
      source: p.source,
      reference: p.reference,
      created_at: p.created_at,
      // Credits taken back by refunds and lost disputes of the payment (0 when none).
      revoked: microsToUsd(p.reversal?.revoked_micros ?? 0),
    })),
  };
}
