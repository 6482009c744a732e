import { ServiceError } from '../errors';
import type { ConversionType, Plan } from '../billing/plans';
import type { Account } from './account';
import type { PlanRepository, RateLimiter } from './ports';

/** The account's plan; null while it has none (pending) or when its plan id is not in the catalogue. */
export async function planOf(plans: Pick<PlanRepository, 'get'>, account: Pick<Account, 'plan_id'>): Promise<Plan | null> {
  return account.plan_id ? plans.get(account.plan_id) : null;
}

/** GET /plans/{plan_id}: the plan, or 404 PLAN_NOT_FOUND pointing at the list. */
export async function planById(plans: Pick<PlanRepository, 'get'>, planId: string): Promise<Plan> {
  const plan = await plans.get(planId);
  if (!plan) throw new ServiceError('PLAN_NOT_FOUND', `No plan ${planId}. GET /plans lists them.`, { plan_id: planId });
  return plan;
}

/** 402 for an account with no plan (neither pack nor subscription), else its plan. */
export async function requirePaidPlan(plans: PlanRepository, account: Account): Promise<Plan> {
  const plan = account.status === 'active' ? await planOf(plans, account) : null;
  if (!plan) {
    throw new ServiceError(
      'UPGRADE_REQUIRED',
      'This account has no paid plan yet. Buy a credit pack or start a subscription from the dashboard, then retry.',
      { account_id: account.account_id },
    );
  }
  return plan;
}

export function requireConversionType(plan: Plan, type: ConversionType): void {
  if (!plan.enabled_conversion_types.includes(type)) {
    throw new ServiceError(
      'CONVERSION_TYPE_NOT_ENABLED',
      `Input type "${type}" is not enabled on the ${plan.name} plan. Use one of: ${plan.enabled_conversion_types.join(', ')}.`,
      { input_type: type, enabled_types: plan.enabled_conversion_types, plan_id: plan.plan_id },
    );
  }
}

/**
 * Only plans that define `rate_limit_per_minute` are limited; the refusal is a 403, not a 429. A counter that cannot
 * be read or written lets the request through (logged): its write may have gone through with the reply lost, and a
 * limit is a guard against bursts, not a reason to fail a request the account may make.
 */
export async function applyPlanRateLimit(limiter: RateLimiter, plan: Plan, account: Account, now: Date, log: (message: string, err: unknown) => void): Promise<void> {
  if (plan.rate_limit_per_minute === null || plan.rate_limit_per_minute === undefined) return;
  let verdict: Awaited<ReturnType<RateLimiter['consume']>>;
  try {
    verdict = await limiter.consume(account.account_id, plan.rate_limit_per_minute, now);
  } catch (err) {
    log(`rate-limit counter of ${account.account_id} unavailable; request let through`, err);
    return;
  }
  if (!verdict.allowed) {
    throw new ServiceError(
      'RATE_LIMIT_EXCEEDED',
      `The ${plan.name} plan allows ${plan.rate_limit_per_minute} conversion requests per minute. Retry after ${verdict.retryAfterSeconds} s.`,
      { retry_after: verdict.retryAfterSeconds, limit_per_minute: plan.rate_limit_per_minute },
    );
  }
}

/**
 * For a worker about to run a job accepted earlier: the account, which must still exist, and its current plan.
 * Otherwise the one 402 UPGRADE_REQUIRED refusal, recorded as the job's failure; workers check before charging,
 * so the message can promise that nothing was charged.
 */
export async function requireCurrentPlan(plans: Pick<PlanRepository, 'get'>, account: Account | null): Promise<{ account: Account; plan: Plan }> {
  const plan = account ? await planOf(plans, account) : null;
  if (!account || !plan) {
    throw new ServiceError(
      'UPGRADE_REQUIRED',
      'The account no longer has a paid plan, so the job was stopped and nothing was charged. Buy a credit pack or start a subscription from the dashboard, then submit the job again.',
    );
  }
  return { account, plan };
}
