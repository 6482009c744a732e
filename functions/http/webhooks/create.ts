import { createWebhook } from '../../core/webhooks/manage';
import { json } from '../responses';
import { authedRoute } from '../route';
import { webhookDeps } from './deps';

/** POST /accounts/me/webhooks: 201 `{ webhook }` with its signing `secret`, shown this once (and on rotation). */
export const handler = authedRoute('webhooks.create', async (req) => {
  const deps = { ...webhookDeps(req.services), secrets: req.services.webhookSecrets };
  return json(201, { webhook: await createWebhook(deps, req.account, req.json()) });
});
