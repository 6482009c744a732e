import { json } from '../responses';
import { authedRoute } from '../route';
import { subscriptionBody } from './present';

/** POST /accounts/me/subscription/resume: undoes a scheduled cancel. */
export const handler = authedRoute('subscription.resume', async ({ account, services }) => {
  const updated = await services.subscriptions.resume(account);
  return json(200, await subscriptionBody(services, updated));
});
