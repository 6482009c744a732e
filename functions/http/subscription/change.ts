import { json } from '../responses';
import { authedRoute } from '../route';
import { subscriptionBody } from './present';

/** POST /accounts/me/subscription/change { price_id }: upgrade now (prorated), downgrade at renewal. */
export const handler = authedRoute('subscription.change', async (req) => {
  const { account, result } = await req.services.subscriptions.change(req.account, req.json());
  return json(200, { ...(await subscriptionBody(req.services, account)), change: result });
});
