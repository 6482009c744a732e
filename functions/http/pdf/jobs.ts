import { requirePdfTools } from '../../core/pdfops/access';
import { submitPdfJob } from '../../core/pdfops/background';
import { parsePdfJobRequest } from '../../core/pdfops/requests';
import { json } from '../responses';
import { authedRoute } from '../route';
import { pdfJobDeps } from '../../job-deps';

/** POST /pdf/jobs: a background merge (2–100 uploads) or split (1 upload), run by the `pdfop` workflow. */
export const handler = authedRoute('pdf.jobs', async (req) => {
  const { services, account } = req;
  const plan = await requirePdfTools(services.plans, account);
  const request = parsePdfJobRequest(req.json());
  return json(202, await submitPdfJob(pdfJobDeps(services), { account, plan, request }));
});
