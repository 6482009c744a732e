import { updateWebhook } from '../../core/webhooks/manage';
import { json } from '../responses';
import { authedRoute } from '../route';
import { webhookDeps } from './deps';

/** PUT /accounts/me/webhooks/{webhook_id}: any of name, url, events, is_active → `{ webhook }`. */
export const handler = authedRoute('webhooks.update', async (req) => {
  const webhook = await updateWebhook(webhookDeps(req.services), req.account, req.params.webhook_id, req.json());
  return json(200, { webhook });
});
