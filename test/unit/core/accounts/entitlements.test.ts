import { newAccount } from '../../../../functions/core/accounts/account';
import { applyPlanRateLimit, planById, planOf, requireConversionType, requireCurrentPlan, requirePaidPlan } from '../../../../functions/core/accounts/entitlements';
import { rejection } from '../../../support/errors';
import { MemoryPlans } from '../../../support/memory';

const now = new Date('2026-11-21T12:00:00Z');
const plans = new MemoryPlans();
const standard = plans.plans.get('standard')!;
const active = newAccount({ account_id: 'acc', email: 'a@example.com', plan_id: 'standard', now });
const pending = newAccount({ account_id: 'acc', email: 'a@example.com', plan_id: null, now });
const retired = { ...active, plan_id: 'no-such-plan' };

describe('planOf', () => {
  it("is the account's plan, or null without one or for a plan id not in the catalogue", async () => {
    expect(await planOf(plans, active)).toEqual(standard);
    expect(await planOf(plans, pending)).toBeNull();
    expect(await planOf(plans, retired)).toBeNull();
  });

  it('does not look anything up for an account without a plan id', async () => {
    const get = jest.fn();
    expect(await planOf({ get }, pending)).toBeNull();
    expect(get).not.toHaveBeenCalled();
  });
});

describe('requirePaidPlan', () => {
  it('gives the plan of an active account and 402 UPGRADE_REQUIRED otherwise', async () => {
    expect(await requirePaidPlan(plans, active)).toEqual(standard);
    for (const account of [pending, { ...active, status: 'pending' as const }, retired]) {
      expect(await rejection(requirePaidPlan(plans, account))).toMatchObject({ code: 'UPGRADE_REQUIRED', details: { account_id: 'acc' } });
    }
  });
});

describe('requireConversionType', () => {
  it("lets through a type the plan enables and refuses another with 403 CONVERSION_TYPE_NOT_ENABLED listing the plan's types", () => {
    const htmlOnly = { ...standard, enabled_conversion_types: ['html' as const] };
    expect(() => requireConversionType(htmlOnly, 'html')).not.toThrow();
    let err: unknown;
    try {
      requireConversionType(htmlOnly, 'markdown');
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'CONVERSION_TYPE_NOT_ENABLED', details: { input_type: 'markdown', enabled_types: ['html'], plan_id: standard.plan_id } });
  });
});

describe('requireCurrentPlan (workers)', () => {
  it('gives the account and its plan', async () => {
    expect(await requireCurrentPlan(plans, active)).toEqual({ account: active, plan: standard });
  });

  it('refuses a missing account, one without a plan, or with a plan no longer offered, with one 402 that says what to do', async () => {
    const refusals = await Promise.all([null, pending, retired].map((account) => rejection(requireCurrentPlan(plans, account))));
    for (const err of refusals) {
      expect(err.code).toBe('UPGRADE_REQUIRED');
      expect(err.message).toBe(refusals[0].message);
    }
    expect(refusals[0].message).toMatch(/nothing was charged/);
    expect(refusals[0].message).toMatch(/credit pack or start a subscription from the dashboard/);
  });
});

describe('planById', () => {
  it('finds a plan of the catalogue, and answers 404 PLAN_NOT_FOUND naming the id otherwise', async () => {
    expect(await planById(plans, 'standard')).toEqual(standard);
    expect(await rejection(planById(plans, 'gold'))).toMatchObject({ code: 'PLAN_NOT_FOUND', details: { plan_id: 'gold' } });
  });
});

describe('applyPlanRateLimit', () => {
  const limited = { ...standard, rate_limit_per_minute: 2 };
  const logged: string[] = [];
  const log = (message: string) => void logged.push(message);

  it('counts only on plans with a limit, and refuses past it with 403 RATE_LIMIT_EXCEEDED and retry_after', async () => {
    const calls: number[] = [];
    const limiter = { consume: async (_a: string, limit: number) => (calls.push(limit), { allowed: false as const, retryAfterSeconds: 17 }) };
    await applyPlanRateLimit(limiter, standard, active, now, log);
    expect(calls).toEqual([]);
    expect(await rejection(applyPlanRateLimit(limiter, limited, active, now, log))).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: 17, limit_per_minute: 2 } });
  });

  it('treats a limit of 0 as a limit (every request refused), not as no limit', async () => {
    const calls: number[] = [];
    const limiter = { consume: async (_a: string, limit: number) => (calls.push(limit), { allowed: false as const, retryAfterSeconds: 60 }) };
    expect(await rejection(applyPlanRateLimit(limiter, { ...standard, rate_limit_per_minute: 0 }, active, now, log))).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(calls).toEqual([0]);
  });

  it('lets a request through when its counter cannot be written or read back (a lost reply may have counted it), and logs it', async () => {
    const limiter = {
      consume: async () => {
        throw new Error('socket hang up');
      },
    };
    await expect(applyPlanRateLimit(limiter, limited, active, now, log)).resolves.toBeUndefined();
    expect(logged).toEqual(['rate-limit counter of acc unavailable; request let through']);
  });
});
