import { applyPlanRateLimit, requireConversionType, requirePaidPlan } from '../../core/accounts/entitlements';
import { type QuickJobResult, runQuickJob } from '../../core/conversion/quickjob';
import { parseJsonConversion } from '../../core/conversion/request';
import { ServiceError } from '../../core/errors';
import { json, pdf } from '../responses';
import { authedRoute } from '../route';

function respond(result: QuickJobResult) {
  const { job } = result;
  if (result.stored) {
    return json(200, {
      job_id: job.job_id,
      pages: job.pages,
      truncated: job.truncated,
      download_url: result.stored.download_url,
      download_url_expires_at: result.stored.download_url_expires_at,
    });
  }
  return pdf(result.pdf, {
    'Content-Disposition': `inline; filename=${job.job_id}.pdf`,
    'X-PDF-Pages': String(job.pages),
    'X-PDF-Truncated': String(job.truncated),
    'X-Job-Id': job.job_id,
  });
}

/** POST /quickjob: synchronous conversion, the PDF in the response (or a link with store: true). */
export const handler = authedRoute('quickjob.create', async (req) => {
  const { services, account } = req;
  const plan = await requirePaidPlan(services.plans, account);
  const request = parseJsonConversion(req.json());
  requireConversionType(plan, request.input_type);
  await applyPlanRateLimit(services.rateLimiter, plan, account, services.clock.now());
  if (request.input_type === 'url') {
    throw new ServiceError('NOT_IMPLEMENTED', 'URL input is not available in this release yet.', { input_type: 'url' });
  }
  const result = await runQuickJob(
    {
      jobs: services.jobs,
      blobs: services.blobs,
      billing: services.billing,
      renderer: services.renderer,
      clock: services.clock,
      timeoutSeconds: services.config.quickjobTimeoutSeconds,
      log: (m, e) => services.log.warn(m, e),
    },
    { account, plan, mode: request.input_type, source: request.content, options: request.options, store: request.store },
  );
  return respond(result);
});
