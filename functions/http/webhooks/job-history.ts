import { loadOwnJob } from '../../core/jobs/access';
import { listHistory } from '../../core/webhooks/manage';
import { historyQuerySchema, parseHistoryQuery } from '../../core/webhooks/requests';
import { singleValuedQuery } from '../query';
import { json } from '../responses';
import { authedRoute } from '../route';
import { pageTokens } from './deps';

/** GET /jobs/{job_id}/webhooks/history: deliveries of the job's events to every webhook (also deleted ones). */
export const handler = authedRoute('jobs.webhookHistory', async (req) => {
  const { services, account, params } = req;
  const job = await loadOwnJob(services.jobs, account.account_id, params.job_id);
  const request = parseHistoryQuery(singleValuedQuery(req, historyQuerySchema));
  const page = await listHistory(services.webhookDeliveries, pageTokens(services, 'webhook-history.v1'), account.account_id, { jobId: job.job_id }, request);
  return json(200, { job_id: job.job_id, ...page });
});
