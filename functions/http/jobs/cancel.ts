import { cancelJob } from '../../core/bulk/cancel';
import { loadOwnJob } from '../../core/jobs/access';
import { bulkDeps } from '../../job-deps';
import { json } from '../responses';
import { authedRoute } from '../route';

/** POST /jobs/{job_id}/cancel: 200 for a queued bulk job, 202 for a running one, 409 for finished jobs and other job types. */
export const handler = authedRoute('jobs.cancel', async ({ services, account, params }) => {
  const job = await loadOwnJob(services.jobs, account.account_id, params.job_id);
  const outcome = await cancelJob(bulkDeps(services), job);
  // 202: the cancel is accepted and under way (the job stops before its next file).
  return json(outcome.status === 'cancelled' ? 200 : 202, outcome);
});
