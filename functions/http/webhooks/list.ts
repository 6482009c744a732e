import { listWebhooks } from '../../core/webhooks/manage';
import { parseWebhookListQuery, webhookListQuerySchema } from '../../core/webhooks/requests';
import { singleValuedQuery } from '../query';
import { json } from '../responses';
import { authedRoute } from '../route';
import { pageTokens, webhookDeps } from './deps';

/** GET /accounts/me/webhooks: `webhooks`, `count`, `next_token`; filters `is_active`, `event`; no secrets. */
export const handler = authedRoute('webhooks.list', async (req) => {
  const { services, account } = req;
  const request = parseWebhookListQuery(singleValuedQuery(req, webhookListQuerySchema));
  return json(200, await listWebhooks(webhookDeps(services), pageTokens(services, 'webhooks.v1'), account.account_id, request));
});
