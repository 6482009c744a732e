import type { Account } from '../accounts/account';
import { assertCanCover, type Billing, chargeCompletion } from '../billing/charging';
import type { Plan } from '../billing/plans';
import type { Clock } from '../clock';
import { ServiceError, isServiceError } from '../errors';
import { newId } from '../ids';
import { signedLink } from '../jobs/access';
import { type Job, completed, failed, newJob, timedOut } from '../jobs/job';
import type { BlobStore, JobRepository } from '../jobs/ports';
import { objectKey, retentionEnd } from '../jobs/storage-layout';
import { MAX_INLINE_PDF_BYTES } from '../pdf/limits';
import { markdownToHtml } from '../render/markdown';
import type { PdfOptions } from '../render/options';
import { pageCountFacts } from '../render/page-window';
import { RenderTimeoutError, type Renderer, TooManyPagesError } from '../render/ports';
import { LONGJOB_MAX_PAGES } from './longjob';
import { namingInputField } from './request';

export const QUICKJOB_MAX_PAGES = 25;
export const QUICKJOB_TIMEOUT_SECONDS = 30;
/**
 * A PDF finished later than this past the time limit is not charged or returned: the caller's gateway answers at most
 * a few seconds after the limit (in AWS the limit is set 2 s below API Gateway's), so it has most likely given up.
 */
export const QUICKJOB_ANSWER_MARGIN_MS = 1_000;

export interface QuickJobDeps {
  jobs: JobRepository;
  blobs: BlobStore;
  billing: Billing;
  renderer: Renderer;
  clock: Clock;
  /** Overrides the 30 s limit (tests); the error details report the limit in force. */
  timeoutSeconds?: number;
  log?: (message: string, err: unknown) => void;
}

/** The HTML to print and how; for URL input this is where the page is fetched. */
export interface PreparedDocument {
  html: string;
  options: PdfOptions;
  /** The address a URL input was fetched from: what a header or footer's `url` class shows. */
  documentUrl?: string;
}

export interface QuickJobInput {
  account: Account;
  plan: Plan;
  mode: 'html' | 'markdown' | 'url' | 'image';
  /**
   * Checks the input once the account is known to be able to pay (decoding images is the costly part): its refusals
   * come before any job exists. Returns the step that runs inside the job, whose refusals are recorded on the job and
   * whose time counts against the limit.
   */
  check: () => Promise<() => Promise<PreparedDocument>>;
  store: boolean;
  /** Time the request spent before the job began (gateway, authorizer, cold start, reads); it counts against the limit. */
  spentMs?: number;
}

/** HTML or Markdown text as a prepared document. */
export function textDocument(mode: 'html' | 'markdown', source: string, options: PdfOptions): () => Promise<PreparedDocument> {
  return async () => ({ html: mode === 'markdown' ? markdownToHtml(source) : source, options });
}

export interface QuickJobResult {
  job: Job;
  pdf: Uint8Array;
  /** Set when the PDF was stored: the caller asked for it, or it is too large to return inline. */
  stored: { download_url: string | null; download_url_expires_at: string | null } | null;
}

/**
 * One synchronous conversion as a job: pre-check credits, check the input, render within the time limit, enforce the
 * page limit, optionally store, then charge and complete the job in one atomic write. Failures are
 * recorded as failed/timeout jobs and never charged; a stored file whose charge fails is deleted; a charge whose reply
 * was lost but which committed is answered as done; a PDF that was to be stored but could not be is answered with null
 * links and not charged.
 */
export async function runQuickJob(deps: QuickJobDeps, input: QuickJobInput): Promise<QuickJobResult> {
  const { account, plan } = input;
  const started = deps.clock.now();
  const timeoutSeconds = deps.timeoutSeconds ?? QUICKJOB_TIMEOUT_SECONDS;
  // The limit runs from when the request arrived, not from when this function got to it.
  const limitEnds = started.getTime() - Math.min(Math.max(0, input.spentMs ?? 0), timeoutSeconds * 1000) + timeoutSeconds * 1000;
  const price = plan.price_per_pdf_micros;
  assertCanCover(account, price, started);
  const prepare = await input.check();

  const job = { ...newJob({ job_id: newId('job'), account_id: account.account_id, job_type: 'quick', status: 'processing', mode: input.mode, now: started }), started_at: started.toISOString() };
  const recordFailure = async (code: string, message: string, asTimeout = false, changes: Partial<Job> = {}) => {
    const at = deps.clock.now();
    const final = asTimeout ? timedOut(job, at, code, message) : failed(job, at, code, message, changes);
    await deps.jobs.put(final).catch((err) => deps.log?.(`could not record failed job ${job.job_id}`, err));
  };
  /** The job recorded as timed out, and the refusal that says so. */
  const limitExceeded = async () => {
    await recordFailure('QUICKJOB_TIMEOUT', `Rendering took longer than ${timeoutSeconds} seconds.`, true);
    // The spec's details always suggest /longjob; the message says what works for images, which /longjob does not take.
    const advice = input.mode === 'image' ? 'Send fewer or smaller images per request (/longjob does not take images).' : 'Submit it to /longjob instead.';
    return new ServiceError('QUICKJOB_TIMEOUT', `The document did not render within ${timeoutSeconds} seconds. ${advice}`, {
      job_id: job.job_id,
      timeout_seconds: timeoutSeconds,
      suggestion: 'use_longjob_endpoint',
    });
  };

  /** The job recorded as failed for its page count, and the refusal that says so. */
  const pageLimitExceeded = async (result: { pages: number; morePages?: boolean }) => {
    const count = pageCountFacts(result, LONGJOB_MAX_PAGES);
    const longjobFits = !result.morePages && result.pages <= LONGJOB_MAX_PAGES;
    // The job keeps the page count when it is exact (past the long-job limit printing stopped early).
    await recordFailure('PAGE_LIMIT_EXCEEDED', `The PDF has ${count.text}; quick jobs allow ${QUICKJOB_MAX_PAGES}.`, false, result.morePages ? {} : { pages: result.pages });
    const advice = longjobFits ? `Use /longjob (up to ${LONGJOB_MAX_PAGES} pages) or options.pageRanges.` : 'Split the document, or choose pages with options.pageRanges.';
    return new ServiceError('PAGE_LIMIT_EXCEEDED', `The PDF has ${count.text}; /quickjob allows ${QUICKJOB_MAX_PAGES}. ${advice}`, {
      job_id: job.job_id,
      ...count.details,
      max_pages: QUICKJOB_MAX_PAGES,
      // /longjob would refuse it too: no suggestion to send it there.
      ...(longjobFits ? { suggestion: 'use_longjob_endpoint' } : {}),
    });
  };

  let pdf: Uint8Array;
  let pages: number;
  let morePages: boolean | undefined;
  try {
    const document = await prepare();
    const remainingMs = limitEnds - deps.clock.now().getTime();
    if (remainingMs <= 0) throw new RenderTimeoutError(0);
    // Counted up to the long-job limit, so a refusal says whether /longjob would take the document.
    ({ pdf, pages, morePages } = await deps.renderer.render({ html: document.html, options: document.options, timeoutMs: remainingMs, maxPages: LONGJOB_MAX_PAGES, tenant: account.account_id, documentUrl: document.documentUrl }));
  } catch (err) {
    if (err instanceof RenderTimeoutError) throw await limitExceeded();
    if (err instanceof TooManyPagesError) throw await pageLimitExceeded(err);
    if (isServiceError(err)) {
      await recordFailure(err.code, err.message);
      throw new ServiceError(err.code, err.message, { ...namingInputField(err, input.mode).details, job_id: job.job_id });
    }
    deps.log?.(`render failed for job ${job.job_id}`, err);
    await recordFailure('PDF_GENERATION_FAILED', 'The renderer failed to produce a PDF.');
    throw new ServiceError('PDF_GENERATION_FAILED', 'The renderer failed to produce a PDF. Retry; if it keeps failing, simplify the document or use /longjob.', { job_id: job.job_id });
  }

  if (morePages || pages > QUICKJOB_MAX_PAGES) throw await pageLimitExceeded({ pages, morePages });

  // Document 2's line for merge results (4.4 binary MB; its base64 fits a 6 MB Lambda response), applied here too.
  const mustStore = input.store || pdf.byteLength > MAX_INLINE_PDF_BYTES;
  let output: Job['output'] = null;
  if (mustStore) {
    const name = `${job.job_id}.pdf`;
    const key = objectKey('jobOutputs', account.account_id, job.job_id, name);
    try {
      await deps.blobs.put(key, pdf, 'application/pdf');
      output = { key, name, content_type: 'application/pdf', size_bytes: pdf.byteLength, expires_at: retentionEnd('jobOutputs', started)! };
    } catch (err) {
      deps.log?.(`storing output of job ${job.job_id} failed`, err);
      // A put whose reply was lost may have stored it: kept, it would be a PDF no job points to.
      await deps.blobs.delete(key).catch((e) => deps.log?.(`could not remove output of job ${job.job_id}`, e));
      if (!input.store) {
        await recordFailure('PDF_GENERATION_FAILED', 'The PDF is too large to return inline and could not be stored.');
        throw new ServiceError('PDF_GENERATION_FAILED', 'The PDF is too large to return inline and storing it failed on our side; nothing was charged. Retry the request.', { job_id: job.job_id });
      }
    }
  }

  // Past the limit and its margin the caller has been answered already (a gateway timeout): nothing is charged.
  if (deps.clock.now().getTime() > limitEnds + QUICKJOB_ANSWER_MARGIN_MS) {
    if (output) await deps.blobs.delete(output.key).catch((e) => deps.log?.(`could not remove output of late job ${job.job_id}`, e));
    throw await limitExceeded();
  }
  const done = completed(job, deps.clock.now(), { pages, output });
  if (input.store && !output) {
    // The spec answers a failed upload with null links; the customer cannot get this PDF, so it is not charged.
    await deps.jobs.put(done);
    return { job: done, pdf, stored: { download_url: null, download_url_expires_at: null } };
  }
  const charge = { account_id: account.account_id, job_id: job.job_id, unit: 'pdf', operation: 'pdf', amount_micros: price, pdf_count: 1 } as const;
  await chargeCompletion(deps, charge, { job: done }, account, async (err) => {
    if (output) await deps.blobs.delete(output.key).catch((e) => deps.log?.(`could not remove output of uncharged job ${job.job_id}`, e));
    // The document was printed and counted: the failed job keeps its page count, as GET /jobs shows counted documents.
    await recordFailure(isServiceError(err) ? err.code : 'INTERNAL_SERVER_ERROR', isServiceError(err) ? err.message : 'Charging failed.', false, { pages });
  });

  let stored: QuickJobResult['stored'] = null;
  if (output) {
    const link = await signedLink(deps, output.key, output.name);
    stored = { download_url: link.url, download_url_expires_at: link.expiresAt };
  }
  return { job: done, pdf, stored };
}
