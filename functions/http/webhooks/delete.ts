import { deleteWebhook } from '../../core/webhooks/manage';
import { json } from '../responses';
import { authedRoute } from '../route';

/** DELETE /accounts/me/webhooks/{webhook_id}: the webhook is never called again. */
export const handler = authedRoute('webhooks.delete', async ({ services, account, params }) => {
  return json(200, await deleteWebhook({ webhooks: services.webhooks }, account, params.webhook_id));
});
