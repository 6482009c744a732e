import { type Micros, microsToUsd, pdfsCovered, usdToMicros } from './money';

/** One-off credit packs (charging rule 6): bought through checkout, added to `credits_balance`, never expire. */
export const CREDIT_PACK_USD = [10, 100, 300, 700, 1000, 1500] as const;
export type CreditPackUsd = (typeof CREDIT_PACK_USD)[number];

export interface CreditPack {
  amount_usd: CreditPackUsd;
  amount_micros: Micros;
  /** Payment-provider price id (Stripe), from configuration (`STRIPE_PRICE_PACK_<USD>`). */
  price_id: string;
}

export type PackPriceIds = Partial<Record<CreditPackUsd, string>>;

/** The packs on offer; an unconfigured price id falls back to `price_pack_<usd>_usd` (local and test setups). */
export function creditPacks(priceIds: PackPriceIds = {}): CreditPack[] {
  return CREDIT_PACK_USD.map((usd) => ({ amount_usd: usd, amount_micros: usdToMicros(usd), price_id: priceIds[usd] ?? `price_pack_${usd}_usd` }));
}

export function presentPack(pack: CreditPack, pricePerPdfMicros: Micros) {
  return {
    price_id: pack.price_id,
    amount: microsToUsd(pack.amount_micros),
    currency: 'USD',
    pdfs: pdfsCovered(pack.amount_micros, pricePerPdfMicros),
  };
}
