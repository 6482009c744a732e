import { presentOffer } from '../../core/subscriptions/catalog';
import { json } from '../responses';
import { publicRoute } from '../route';

/** GET /accounts/me/subscription/plans (no credential): the subscription plans on offer, cheapest first. */
export const handler = publicRoute('subscription.plans', async ({ services }) => {
  const plans = (await services.subscriptions.catalog()).offered().map(presentOffer);
  return json(200, { plans, count: plans.length });
});
