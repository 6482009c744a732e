import { type Micros, microsToUsd } from '../billing/money';
import type { Plan } from '../billing/plans';

/** What a subscription plan gives: its price, the PDFs per period, and the provider price that bills it. */
export interface PlanTerms {
  plan_id: string;
  price_id: string;
  name: string;
  /** Monthly price; it is also the allowance per period (20 USD = 2,000 PDFs at 0.01). */
  price_micros: Micros;
  monthly_pdfs: number;
  price_per_pdf_micros: Micros;
  active: boolean;
}

/** The subscription plans of the plan catalogue, looked up by provider price id. */
export class SubscriptionCatalog {
  constructor(readonly terms: readonly PlanTerms[]) {}

  static fromPlans(plans: readonly Plan[]): SubscriptionCatalog {
    return new SubscriptionCatalog(
      plans
        .filter((p) => p.plan_type === 'subscription' && p.price_id && p.monthly_price_micros !== null)
        .map((p) => ({
          plan_id: p.plan_id,
          price_id: p.price_id as string,
          name: p.name,
          price_micros: p.monthly_price_micros as Micros,
          monthly_pdfs: p.monthly_quota ?? 0,
          price_per_pdf_micros: p.price_per_pdf_micros,
          active: p.active,
        })),
    );
  }

  /** Any catalogued plan (also retired ones, so existing subscriptions keep their terms). */
  forPrice(priceId: string | null | undefined): PlanTerms | null {
    return (priceId && this.terms.find((t) => t.price_id === priceId)) || null;
  }

  /** Plans a customer may subscribe or change to. */
  offered(): PlanTerms[] {
    return this.terms.filter((t) => t.active).sort((a, b) => a.price_micros - b.price_micros);
  }

  isSubscriptionPlan(planId: string | null): boolean {
    return !!planId && this.terms.some((t) => t.plan_id === planId);
  }
}

/** A row of GET /accounts/me/subscription/plans: what the dashboard checkout needs to offer a plan. */
export function presentOffer(terms: PlanTerms) {
  return {
    plan_id: terms.plan_id,
    price_id: terms.price_id,
    name: terms.name,
    price: microsToUsd(terms.price_micros),
    currency: 'USD',
    interval: 'month',
    monthly_pdfs: terms.monthly_pdfs,
    price_per_pdf: microsToUsd(terms.price_per_pdf_micros),
  };
}
