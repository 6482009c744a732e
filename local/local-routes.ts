/**
 * Routes only the local gateway mounts (never the CDK app): create a ready-to-use account and mint
 * ID tokens for it. This is the local contract tests and benchmarks rely on (see the README).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { SUBSCRIPTION_STATUSES, type Subscription, newAccount } from '../functions/core/accounts/account';
import { createApiKey } from '../functions/core/auth/manage-keys';
import { PENDING_PLAN_ID, PRICE_PER_PDF_MICROS, STANDARD_PLAN_ID } from '../functions/core/billing/plans';
import { usdToMicros } from '../functions/core/billing/money';
import { ServiceError, invalidParameter } from '../functions/core/errors';
import { type Refuser, optional, parseRequest } from '../functions/core/validation';
import type { Services } from '../functions/composition';
import type { LocalIssuer } from './issuer';

export interface LocalRouteResult {
  status: number;
  body: unknown;
}

const DAY_MS = 86_400_000;

/** Amounts are held as integer micro-USD: past a billion USD they would no longer be exact integers. */
const MAX_USD = 1_000_000_000;
const MAX_MONTHLY_PDFS = 1_000_000_000;
const usdAmount = (description: string) => optional(z.number().min(0).max(MAX_USD)).meta({ description: `${description} (USD, default 0, at most ${MAX_USD}).` });
const notUsd = (name: string): Refuser => () => invalidParameter(name, `${name} must be a number of USD from 0 to ${MAX_USD}.`);

/** The body of POST /_local/accounts (everything optional): the local contract's account set-up. */
export const localAccountBodySchema = z.object({
  plan_id: optional(z.string()).meta({ description: `A plan id, or "pending" for an account without a plan. Default ${STANDARD_PLAN_ID}.` }),
  email: z
    .string()
    .regex(/^[^@\s]+@[^@\s]+$/)
    .optional()
    .meta({ description: 'Default user-<id>@example.com.' }),
  credits_usd: usdAmount('One-off credits'),
  free_credits_usd: usdAmount('Free credits'),
  subscription: optional(
    z.object({
      name: z.string().min(1).meta({ description: 'A subscription plan name (Starter, Business).' }),
      monthly_pdfs: z.number().int().min(0).max(MAX_MONTHLY_PDFS),
      price: optional(z.number().min(0).max(MAX_USD)).meta({ description: 'USD; default monthly_pdfs at the per-PDF price (2,000 PDFs → 20 USD).' }),
      status: optional(z.enum(SUBSCRIPTION_STATUSES)).meta({ description: 'Default active.' }),
      period_end: z
        .string()
        .refine(isStorableTime)
        .optional()
        .meta({ description: 'ISO 8601 time in the years 0000 to 9999; default 30 days from now.' }),
    }),
  ),
});

/**
 * A time whose ISO form sorts with the others: periods are compared as ISO strings, and outside the years 0000 to 9999
 * `toISOString()` writes "+010000-…" or "-000001-…", which sort before every other time (a far end read as ended).
 */
function isStorableTime(text: string): boolean {
  const time = new Date(text);
  return !Number.isNaN(time.getTime()) && /^\d{4}-/.test(time.toISOString());
}

const accountRefusals: Record<string, Refuser> = {
  plan_id: () => invalidParameter('plan_id', 'plan_id must be a string.'),
  email: () => invalidParameter('email', 'email must be an email address.'),
  credits_usd: notUsd('credits_usd'),
  free_credits_usd: notUsd('free_credits_usd'),
  subscription: () => invalidParameter('subscription', 'subscription must be an object {name, monthly_pdfs, price, status?, period_end?}.'),
  'subscription.name': () => invalidParameter('subscription.name', 'subscription.name is required.'),
  'subscription.monthly_pdfs': () => invalidParameter('subscription.monthly_pdfs', `subscription.monthly_pdfs must be a whole number from 0 to ${MAX_MONTHLY_PDFS}.`),
  'subscription.price': notUsd('subscription.price'),
  'subscription.status': () => invalidParameter('subscription.status', `subscription.status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}.`),
  'subscription.period_end': () => invalidParameter('subscription.period_end', 'subscription.period_end must be an ISO 8601 time in the years 0000 to 9999.'),
};

type SubscriptionInput = NonNullable<z.output<typeof localAccountBodySchema>['subscription']>;

async function localSubscription(s: SubscriptionInput, svc: Services, now: Date): Promise<Subscription> {
  // Without a price, the allowance covers monthly_pdfs at the per-PDF price (2,000 PDFs → 20 USD).
  const price = s.price === undefined ? s.monthly_pdfs * PRICE_PER_PDF_MICROS : usdToMicros(s.price);
  const periodEnd = s.period_end === undefined ? new Date(now.getTime() + 30 * DAY_MS) : new Date(s.period_end);
  const catalogued = (await svc.plans.list()).find((p) => p.plan_type === 'subscription' && p.name.toLowerCase() === s.name.toLowerCase());
  return {
    subscription_id: `sub_local_${randomUUID().slice(0, 12)}`,
    customer_id: null,
    status: s.status ?? 'active',
    name: s.name,
    price_id: catalogued?.price_id ?? null,
    price_micros: price,
    monthly_pdfs: s.monthly_pdfs,
    // The allowance is the plan's price in USD: 20 USD buys 2,000 PDFs at 0.01.
    allowance_micros: price,
    // A period ending more than 30 days ahead began now, never in the future.
    period_start: new Date(Math.min(now.getTime(), periodEnd.getTime() - 30 * DAY_MS)).toISOString(),
    period_end: periodEnd.toISOString(),
    cancel_at_period_end: false,
    scheduled_change: null,
  };
}

/** POST /_local/accounts */
export async function createLocalAccount(svc: Services, issuer: LocalIssuer, body: unknown): Promise<LocalRouteResult> {
  const b = parseRequest(localAccountBodySchema, body === undefined ? {} : body, { refusals: accountRefusals, example: '{"credits_usd": 10}' });
  const now = svc.clock.now();
  let planId: string | null = STANDARD_PLAN_ID;
  if (b.plan_id === PENDING_PLAN_ID) planId = null;
  else if (b.plan_id !== undefined) {
    if (!(await svc.plans.get(b.plan_id))) throw invalidParameter('plan_id', `No plan ${b.plan_id}.`);
    planId = b.plan_id;
  }
  const accountId = randomUUID();
  const email = b.email ?? `user-${accountId.slice(0, 8)}@example.com`;
  const account = newAccount({
    account_id: accountId,
    email,
    plan_id: planId,
    credits_micros: usdToMicros(b.credits_usd ?? 0),
    free_credits_micros: usdToMicros(b.free_credits_usd ?? 0),
    subscription: b.subscription ? await localSubscription(b.subscription, svc, now) : null,
    now,
  });
  await svc.accounts.create(account);
  const { plaintext } = await createApiKey(svc.apiKeys, accountId, 'local', now);
  const idToken = await issuer.mintIdToken({ sub: accountId, email });
  // "pending" as /me shows it: an account without a plan is pending everywhere in the API.
  return { status: 201, body: { account_id: accountId, email, plan_id: account.plan_id ?? PENDING_PLAN_ID, api_key: plaintext, id_token: idToken } };
}

/** POST /_local/accounts/{account_id}/token */
export async function mintLocalToken(svc: Services, issuer: LocalIssuer, accountId: string): Promise<LocalRouteResult> {
  const account = await svc.accounts.get(accountId);
  if (!account) throw new ServiceError('NOT_FOUND', `No local account ${accountId}.`, { account_id: accountId });
  return { status: 200, body: { id_token: await issuer.mintIdToken({ sub: account.account_id, email: account.email }) } };
}
