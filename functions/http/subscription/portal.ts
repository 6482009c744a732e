import { json } from '../responses';
import { authedRoute } from '../route';

/** POST /accounts/me/subscription/portal → { url } of a customer-portal session. */
export const handler = authedRoute('subscription.portal', async ({ account, services }) => {
  return json(200, { url: await services.subscriptions.portalUrl(account) });
});
