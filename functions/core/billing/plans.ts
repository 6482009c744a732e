import { type Micros, microsToUsd, usdToMicros } from './money';

export const CONVERSION_TYPES = ['html', 'markdown', 'url', 'image'] as const;
export type ConversionType = (typeof CONVERSION_TYPES)[number];

export type PlanType = 'pay_as_you_go' | 'subscription';

/** A plan as stored. Prices are micro-USD; `presentPlan` turns them into USD for the API. */
export interface Plan {
  plan_id: string;
  name: string;
  plan_type: PlanType;
  active: boolean;
  price_per_pdf_micros: Micros;
  /** Merge/split/editor price; null means a quarter of price_per_pdf. */
  price_per_pdf_operation_micros: Micros | null;
  /** Subscription plans: monthly price and PDFs per period. */
  monthly_price_micros: Micros | null;
  monthly_quota: number | null;
  /** Payment-provider price id (Stripe), from configuration. */
  price_id: string | null;
  enabled_conversion_types: ConversionType[];
  bulk_enabled: boolean;
  max_bulk_pages_per_job: number;
  max_bulk_zip_mb: number;
  pdf_tools_enabled: boolean;
  pdf_editor_enabled: boolean;
  mailmerge_enabled: boolean;
  rate_limit_per_minute: number | null;
  max_webhooks: number;
}

export const STANDARD_PLAN_ID = 'standard';
/** The plan_id the API shows for an account without a plan (stored as null). */
export const PENDING_PLAN_ID = 'pending';
export const DEFAULT_MAX_WEBHOOKS = 5;
export const PRICE_PER_PDF_MICROS = usdToMicros(0.01);

const paidFeatures = {
  enabled_conversion_types: [...CONVERSION_TYPES],
  bulk_enabled: true,
  max_bulk_pages_per_job: 200,
  max_bulk_zip_mb: 50,
  pdf_tools_enabled: true,
  pdf_editor_enabled: true,
  mailmerge_enabled: true,
  rate_limit_per_minute: null,
  max_webhooks: DEFAULT_MAX_WEBHOOKS,
} satisfies Partial<Plan>;

/** Price ids come from configuration so each deployment can point at its own Stripe prices. */
export interface PlanPriceIds {
  starter?: string;
  business?: string;
}

/** The plans every deployment starts with: the standard paid plan and the two subscription plans. */
export function planCatalogue(priceIds: PlanPriceIds = {}): Plan[] {
  return [
    {
      plan_id: STANDARD_PLAN_ID,
      name: 'Standard',
      plan_type: 'pay_as_you_go',
      active: true,
      price_per_pdf_micros: PRICE_PER_PDF_MICROS,
      price_per_pdf_operation_micros: null,
      monthly_price_micros: null,
      monthly_quota: null,
      price_id: null,
      ...paidFeatures,
    },
    {
      plan_id: 'starter',
      name: 'Starter',
      plan_type: 'subscription',
      active: true,
      price_per_pdf_micros: PRICE_PER_PDF_MICROS,
      price_per_pdf_operation_micros: null,
      monthly_price_micros: usdToMicros(20),
      monthly_quota: 2_000,
      price_id: priceIds.starter ?? 'price_starter_monthly',
      ...paidFeatures,
    },
    {
      plan_id: 'business',
      name: 'Business',
      plan_type: 'subscription',
      active: true,
      price_per_pdf_micros: PRICE_PER_PDF_MICROS,
      price_per_pdf_operation_micros: null,
      monthly_price_micros: usdToMicros(100),
      monthly_quota: 10_000,
      price_id: priceIds.business ?? 'price_business_monthly',
      ...paidFeatures,
    },
  ];
}

export function operationPriceMicros(plan: Plan): Micros {
  return plan.price_per_pdf_operation_micros ?? Math.round(plan.price_per_pdf_micros / 4);
}

/** Plan as the API shows it (GET /plans, GET /plans/{plan_id}). */
export function presentPlan(plan: Plan) {
  return {
    plan_id: plan.plan_id,
    name: plan.name,
    plan_type: plan.plan_type,
    active: plan.active,
    price_per_pdf: microsToUsd(plan.price_per_pdf_micros),
    price_per_pdf_operation: microsToUsd(operationPriceMicros(plan)),
    monthly_price: plan.monthly_price_micros === null ? null : microsToUsd(plan.monthly_price_micros),
    monthly_quota: plan.monthly_quota,
    monthly_pdfs: plan.monthly_quota,
    price_id: plan.price_id,
    enabled_conversion_types: plan.enabled_conversion_types,
    bulk_enabled: plan.bulk_enabled,
    max_bulk_pages_per_job: plan.max_bulk_pages_per_job,
    max_bulk_zip_mb: plan.max_bulk_zip_mb,
    pdf_tools_enabled: plan.pdf_tools_enabled,
    pdf_editor_enabled: plan.pdf_editor_enabled,
    mailmerge_enabled: plan.mailmerge_enabled,
    rate_limit_per_minute: plan.rate_limit_per_minute,
    max_webhooks: plan.max_webhooks,
  };
}
