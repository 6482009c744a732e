import { jobListQuerySchema, jobPageTokens, listJobs, parseJobListQuery } from '../../core/jobs/list';
import { singleValuedQuery } from '../query';
import { json } from '../responses';
import { authedRoute } from '../route';

/** GET /jobs (ID token only): newest first, filtered, paged with an opaque next_token. */
export const handler = authedRoute('jobs.list', async (req) => {
  const { account, services } = req;
  const request = parseJobListQuery(singleValuedQuery(req, jobListQuerySchema));
  return json(200, await listJobs(services.jobs, jobPageTokens(services.paginationSecret), account.account_id, request));
});
