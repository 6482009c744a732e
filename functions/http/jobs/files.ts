import { loadOwnJob } from '../../core/jobs/access';
import { listJobFiles } from '../../core/jobs/file-access';
import { json } from '../responses';
import { authedRoute } from '../route';

/** GET /jobs/{job_id}/files: per-file results of a bulk or merge/split job (empty until it finishes). */
export const handler = authedRoute('jobs.files', async ({ services, account, params }) => {
  const job = await loadOwnJob(services.jobs, account.account_id, params.job_id);
  return json(200, await listJobFiles({ files: services.jobFiles }, job));
});
