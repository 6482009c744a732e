import { presentPlan } from '../../core/billing/plans';
import { json } from '../responses';
import { authedRoute } from '../route';

export const handler = authedRoute('plans.list', async (req) => {
  const plans = (await req.services.plans.list()).filter((p) => p.active).map(presentPlan);
  return json(200, { plans, count: plans.length });
});
