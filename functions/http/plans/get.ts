import { presentPlan } from '../../core/billing/plans';
import { ServiceError } from '../../core/errors';
import { json } from '../responses';
import { authedRoute } from '../route';

export const handler = authedRoute('plans.get', async (req) => {
  const plan = await req.services.plans.get(req.params.plan_id);
  if (!plan) throw new ServiceError('PLAN_NOT_FOUND', `No plan ${req.params.plan_id}. GET /plans lists them.`, { plan_id: req.params.plan_id });
  return json(200, { plan: presentPlan(plan) });
});
