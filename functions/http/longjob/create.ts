import { applyPlanRateLimit, requireConversionType, requirePaidPlan } from '../../core/accounts/entitlements';
import { ESTIMATED_COMPLETION_MS, parseLongJobRequest, submitLongJob } from '../../core/conversion/longjob';
import { invalidParameter } from '../../core/errors';
import { isMultipart } from '../multipart';
import { json } from '../responses';
import { authedRoute } from '../route';

/** POST /longjob: accepted after a page-counting render; the render worker produces the PDF. */
export const handler = authedRoute('longjob.create', async (req) => {
  const { services, account } = req;
  const plan = await requirePaidPlan(services.plans, account);
  if (isMultipart(req.headers['content-type'])) {
    throw invalidParameter('content-type', 'Long jobs take a JSON body with html or markdown; images are only converted by /quickjob.');
  }
  const request = parseLongJobRequest(req.json());
  requireConversionType(plan, request.input_type);
  await applyPlanRateLimit(services.rateLimiter, plan, account, services.clock.now(), (m, e) => services.log.warn(m, e));
  const job = await submitLongJob(
    {
      jobs: services.jobs,
      blobs: services.blobs,
      renderer: services.renderer,
      queue: services.renderQueue,
      clock: services.clock,
      submissionSeconds: services.config.longjobSubmissionSeconds,
      // Every problem logged here ends in a 500 (or a stored output left behind): errors, so they are noticed.
      log: (m, e) => services.log.error(m, e),
    },
    { account, plan, request, spentMs: req.sinceReceivedMs() },
  );
  return json(202, {
    job_id: job.job_id,
    status: 'queued',
    message: 'The job is queued. Follow it with GET /jobs/{job_id}; the PDF is available from GET /jobs/{job_id}/download once it has completed.',
    estimated_completion: new Date(Date.parse(job.created_at) + ESTIMATED_COMPLETION_MS).toISOString(),
  });
});
