/**
 * Routes only the local gateway mounts (never the CDK app): create a ready-to-use account and mint
 * ID tokens for it. This is the local contract tests and benchmarks rely on (see the README).
 */
import { randomUUID } from 'node:crypto';
import { type Subscription, type SubscriptionStatus, newAccount } from '../functions/core/accounts/account';
import { createApiKey } from '../functions/core/auth/manage-keys';
import { PRICE_PER_PDF_MICROS, STANDARD_PLAN_ID } from '../functions/core/billing/plans';
import { usdToMicros } from '../functions/core/billing/money';
import { ServiceError, invalidParameter } from '../functions/core/errors';
import type { Services } from '../functions/composition';
import type { LocalIssuer } from './issuer';

export interface LocalRouteResult {
  status: number;
  body: unknown;
}

const SUBSCRIPTION_STATUSES: SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'paused', 'canceled'];
const DAY_MS = 86_400_000;

function usd(value: unknown, name: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw invalidParameter(name, `${name} must be a non-negative number of USD.`);
  return usdToMicros(value);
}

async function parseSubscription(raw: unknown, svc: Services, now: Date): Promise<Subscription | null> {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidParameter('subscription', 'subscription must be an object {name, monthly_pdfs, price, status?, period_end?}.');
  const s = raw as Record<string, unknown>;
  if (typeof s.name !== 'string' || !s.name) throw invalidParameter('subscription.name', 'subscription.name is required.');
  if (!Number.isInteger(s.monthly_pdfs) || (s.monthly_pdfs as number) < 0) throw invalidParameter('subscription.monthly_pdfs', 'subscription.monthly_pdfs must be a whole number.');
  // Without a price, the allowance covers monthly_pdfs at the per-PDF price (2,000 PDFs → 20 USD).
  const price = s.price === undefined || s.price === null ? (s.monthly_pdfs as number) * PRICE_PER_PDF_MICROS : usd(s.price, 'subscription.price');
  const status = (s.status ?? 'active') as SubscriptionStatus;
  if (!SUBSCRIPTION_STATUSES.includes(status)) throw invalidParameter('subscription.status', `subscription.status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}.`);
  let periodEnd = new Date(now.getTime() + 30 * DAY_MS);
  if (s.period_end !== undefined) {
    periodEnd = new Date(String(s.period_end));
    if (Number.isNaN(periodEnd.getTime())) throw invalidParameter('subscription.period_end', 'subscription.period_end must be an ISO 8601 time.');
  }
  const catalogued = (await svc.plans.list()).find((p) => p.plan_type === 'subscription' && p.name.toLowerCase() === (s.name as string).toLowerCase());
  return {
    subscription_id: `sub_local_${randomUUID().slice(0, 12)}`,
    customer_id: null,
    status,
    name: s.name,
    price_id: catalogued?.price_id ?? null,
    price_micros: price,
    monthly_pdfs: s.monthly_pdfs as number,
    // The allowance is the plan's price in USD: 20 USD buys 2,000 PDFs at 0.01.
    allowance_micros: price,
    period_start: new Date(periodEnd.getTime() - 30 * DAY_MS).toISOString(),
    period_end: periodEnd.toISOString(),
    cancel_at_period_end: false,
    scheduled_change: null,
  };
}

/** POST /_local/accounts */
export async function createLocalAccount(svc: Services, issuer: LocalIssuer, body: unknown): Promise<LocalRouteResult> {
  if (body === undefined) body = {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidParameter('body', 'Send a JSON object (it may be empty).');
  const b = body as Record<string, unknown>;
  const now = svc.clock.now();
  let planId: string | null = STANDARD_PLAN_ID;
  if (b.plan_id !== undefined && b.plan_id !== null) {
    if (typeof b.plan_id !== 'string') throw invalidParameter('plan_id', 'plan_id must be a string.');
    if (b.plan_id === 'pending') planId = null;
    else if (!(await svc.plans.get(b.plan_id))) throw invalidParameter('plan_id', `No plan ${b.plan_id}.`);
    else planId = b.plan_id;
  }
  if (b.email !== undefined && (typeof b.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(b.email))) throw invalidParameter('email', 'email must be an email address.');
  const accountId = randomUUID();
  const email = (b.email as string | undefined) ?? `user-${accountId.slice(0, 8)}@example.com`;
  const account = newAccount({
    account_id: accountId,
    email,
    plan_id: planId,
    credits_micros: usd(b.credits_usd, 'credits_usd'),
    free_credits_micros: usd(b.free_credits_usd, 'free_credits_usd'),
    subscription: await parseSubscription(b.subscription, svc, now),
    now,
  });
  await svc.accounts.create(account);
  const { plaintext } = await createApiKey(svc.apiKeys, accountId, 'local', now);
  const idToken = await issuer.mintIdToken({ sub: accountId, email });
  return { status: 201, body: { account_id: accountId, email, plan_id: account.plan_id, api_key: plaintext, id_token: idToken } };
}

/** POST /_local/accounts/{account_id}/token */
export async function mintLocalToken(svc: Services, issuer: LocalIssuer, accountId: string): Promise<LocalRouteResult> {
  const account = await svc.accounts.get(accountId);
  if (!account) throw new ServiceError('NOT_FOUND', `No local account ${accountId}.`, { account_id: accountId });
  return { status: 200, body: { id_token: await issuer.mintIdToken({ sub: account.account_id, email: account.email }) } };
}
