import type { Micros } from '../billing/money';
import { type Plan, operationPriceMicros } from '../billing/plans';

/** Page bands for merge/split charges (document 2, Billing for PDF tools): pages processed → multiplier. */
export const PAGE_BANDS: readonly { upTo: number; multiplier: number }[] = [
  { upTo: 50, multiplier: 1 },
  { upTo: 250, multiplier: 2 },
  { upTo: 1000, multiplier: 4 },
  { upTo: Number.POSITIVE_INFINITY, multiplier: 8 },
];

export const TOP_BAND_MULTIPLIER = 8;

export function bandMultiplier(pagesProcessed: number): number {
  for (const band of PAGE_BANDS) if (pagesProcessed <= band.upTo) return band.multiplier;
  return TOP_BAND_MULTIPLIER;
}

/** One merge or split: the plan's operation price (a quarter of price_per_pdf when unset) × the band multiplier. */
export function operationCharge(plan: Plan, pagesProcessed: number): Micros {
  return operationPriceMicros(plan) * bandMultiplier(pagesProcessed);
}

/** What a background job must be able to pay at submission: the top band. */
export function maxOperationCharge(plan: Plan): Micros {
  return operationPriceMicros(plan) * TOP_BAND_MULTIPLIER;
}
