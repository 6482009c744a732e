import { applyPlanRateLimit, requireConversionType, requirePaidPlan } from '../../core/accounts/entitlements';
import { type QuickJobInput, type QuickJobResult, runQuickJob, textDocument } from '../../core/conversion/quickjob';
import { parseJsonConversion } from '../../core/conversion/request';
import { checkImages, imageDocument, urlDocument } from '../../core/conversion/sources';
import { validateUrl } from '../../core/conversion/url-input';
import { isMultipart } from '../multipart';
import { json, pdf } from '../responses';
import { type AuthedRequest, authedRoute } from '../route';
import { parseImageForm } from './image-form';

type Mode = 'html' | 'markdown' | 'url' | 'image';

/**
 * Reads the request into what the job will print; validation refusals happen here, before any job exists. The costly
 * part (decoding every image) is `check`, which runQuickJob calls once the account is known to be able to pay.
 */
function readRequest(req: AuthedRequest): { mode: Mode; store: boolean; check: QuickJobInput['check'] } {
  if (isMultipart(req.headers['content-type'])) {
    const form = parseImageForm(req.body, req.headers['content-type']);
    return { mode: 'image', store: form.store, check: async () => imageDocument(await checkImages(form.images), form.options) };
  }
  const request = parseJsonConversion(req.json());
  if (request.input_type === 'url') {
    const url = validateUrl(request.url, req.services.guard);
    return { mode: 'url', store: request.store, check: async () => urlDocument(req.services.http, url, request.rawOptions) };
  }
  return { mode: request.input_type, store: request.store, check: async () => textDocument(request.input_type, request.content, request.options) };
}

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

/** POST /quickjob: synchronous conversion of HTML, Markdown, a URL or images; the PDF in the response (or a link with store). */
export const handler = authedRoute('quickjob.create', async (req) => {
  const { services, account } = req;
  const plan = await requirePaidPlan(services.plans, account);
  const { mode, store, check } = readRequest(req);
  requireConversionType(plan, mode);
  await applyPlanRateLimit(services.rateLimiter, plan, account, services.clock.now(), (m, e) => services.log.warn(m, e));
  const result = await runQuickJob(
    {
      jobs: services.jobs,
      blobs: services.blobs,
      billing: services.billing,
      renderer: services.renderer,
      clock: services.clock,
      timeoutSeconds: services.config.quickjobTimeoutSeconds,
      // Every problem logged here ends in a 500 (or a stored output left behind): errors, so they are noticed.
      log: (m, e) => services.log.error(m, e),
    },
    { account, plan, mode, store, check, spentMs: req.sinceReceivedMs() },
  );
  return respond(result);
});
