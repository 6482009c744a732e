import { ServiceError } from '../errors';
import type { ConversionType, Plan } from '../billing/plans';
import type { Account } from './account';
import type { PlanRepository, RateLimiter } from './ports';

/** 402 for an account with no plan (neither pack nor subscription), else its plan. */
export async function requirePaidPlan(plans: PlanRepository, account: Account): Promise<Plan> {
  const plan = account.status === 'active' && account.plan_id ? await plans.get(account.plan_id) : null;
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

/** Only plans that define `rate_limit_per_minute` are limited; the refusal is a 403, not a 429. */
export async function applyPlanRateLimit(limiter: RateLimiter, plan: Plan, account: Account, now: Date): Promise<void> {
  if (plan.rate_limit_per_minute === null || plan.rate_limit_per_minute === undefined) return;
  const verdict = await limiter.consume(account.account_id, plan.rate_limit_per_minute, now);
  if (!verdict.allowed) {
    throw new ServiceError(
      'RATE_LIMIT_EXCEEDED',
      `The ${plan.name} plan allows ${plan.rate_limit_per_minute} conversion requests per minute. Retry after ${verdict.retryAfterSeconds} s.`,
      { retry_after: verdict.retryAfterSeconds, limit_per_minute: plan.rate_limit_per_minute },
    );
  }
}
