import { rotateWebhookSecret } from '../../core/webhooks/manage';
import { json } from '../responses';
import { authedRoute } from '../route';
import { webhookDeps } from './deps';

/** POST /accounts/me/webhooks/{webhook_id}/rotate-secret: `{ webhook }` with the new `secret` and `previous_secret_expires_at`. */
export const handler = authedRoute('webhooks.rotateSecret', async (req) => {
  const deps = { ...webhookDeps(req.services), secrets: req.services.webhookSecrets };
  const webhook = await rotateWebhookSecret(deps, req.account, req.params.webhook_id, req.json());
  return json(200, { webhook });
});
