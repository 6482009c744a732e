import { loadOwnJob } from '../../core/jobs/access';
import { jobFileDownloadLink } from '../../core/jobs/file-access';
import { json } from '../responses';
import { authedRoute } from '../route';

/** GET /jobs/{job_id}/files/{file_index}/download: a fresh one-hour link to one merge/split output. */
export const handler = authedRoute('jobs.fileDownload', async ({ services, account, params }) => {
  const job = await loadOwnJob(services.jobs, account.account_id, params.job_id);
  return json(200, await jobFileDownloadLink({ files: services.jobFiles, blobs: services.blobs, clock: services.clock }, job, params.file_index));
});
