import { json } from '../responses';
import { authedRoute } from '../route';
import { subscriptionBody } from './present';

/** POST /accounts/me/subscription/cancel: at the end of the period (scheduled_change: cancel). */
export const handler = authedRoute('subscription.cancel', async ({ account, services }) => {
  const updated = await services.subscriptions.cancel(account);
  return json(200, await subscriptionBody(services, updated));
});
