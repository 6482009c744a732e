import { listHistory, loadOwnWebhook } from '../../core/webhooks/manage';
import { historyQuerySchema, parseHistoryQuery } from '../../core/webhooks/requests';
import { singleValuedQuery } from '../query';
import { json } from '../responses';
import { authedRoute } from '../route';
import { pageTokens } from './deps';

/** GET /accounts/me/webhooks/{webhook_id}/history: one record per attempt series, newest first. */
export const handler = authedRoute('webhooks.history', async (req) => {
  const { services, account, params } = req;
  const webhook = await loadOwnWebhook(services.webhooks, account.account_id, params.webhook_id);
  const request = parseHistoryQuery(singleValuedQuery(req, historyQuerySchema));
  const page = await listHistory(services.webhookDeliveries, pageTokens(services, 'webhook-history.v1'), account.account_id, { webhookId: webhook.webhook_id }, request);
  return json(200, { webhook_id: webhook.webhook_id, ...page });
});
