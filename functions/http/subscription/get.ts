import { json } from '../responses';
import { authedRoute } from '../route';
import { subscriptionBody } from './present';

/** GET /accounts/me/subscription: from the stored state, so it answers without the payment provider too. */
export const handler = authedRoute('subscription.get', async ({ account, services }) => json(200, await subscriptionBody(services, account)));
