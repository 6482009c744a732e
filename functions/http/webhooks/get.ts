import { loadOwnWebhook } from '../../core/webhooks/manage';
import { presentWebhook } from '../../core/webhooks/webhook';
import { json } from '../responses';
import { authedRoute } from '../route';

/** GET /accounts/me/webhooks/{webhook_id}: `{ webhook }` without its secret. */
export const handler = authedRoute('webhooks.get', async ({ services, account, params }) => {
  const webhook = await loadOwnWebhook(services.webhooks, account.account_id, params.webhook_id);
  return json(200, { webhook: presentWebhook(webhook, services.clock.now()) });
});
