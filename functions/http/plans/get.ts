import { planById } from '../../core/accounts/entitlements';
import { presentPlan } from '../../core/billing/plans';
import { json } from '../responses';
import { authedRoute } from '../route';

/** GET /plans/{plan_id}: one plan with the properties the interface names. */
export const handler = authedRoute('plans.get', async (req) => json(200, { plan: presentPlan(await planById(req.services.plans, req.params.plan_id)) }));
