import { jobDownloadLink, loadOwnJob } from '../../core/jobs/access';
import { json } from '../responses';
import { authedRoute } from '../route';

export const handler = authedRoute('jobs.download', async ({ services, account, params }) => {
  const job = await loadOwnJob(services.jobs, account.account_id, params.job_id);
  return json(200, await jobDownloadLink(services, job));
});
