import { z } from 'zod';
import type { Account } from '../accounts/account';
import { requireCurrentPlan } from '../accounts/entitlements';
import type { AccountRepository } from '../accounts/ports';
import { assertCanCover, type Billing } from '../billing/charging';
import type { Plan } from '../billing/plans';
import type { Clock } from '../clock';
import { ServiceError, invalidParameter, isServiceError } from '../errors';
import { jobEvent } from '../events/events';
import { newId, newUlid } from '../ids';
import { triedBriefly } from '../lost-replies';
import { FINISHED_STATUSES, type Job, type JobStatus, completed, failed, newJob, timedOut } from '../jobs/job';
import type { BlobStore, JobRepository } from '../jobs/ports';
import type { JobSlots } from '../jobs/slots';
import { type MessageQueue, type RenderJobMessage, deferralDelaySeconds } from '../jobs/queue';
import { confirmStartSent, jobWritten } from '../jobs/starts';
import { LINK_TTL_SECONDS, objectKey, retentionEnd } from '../jobs/storage-layout';
import { redactUrl } from '../net/redact-url';
import { jobFailedEmail, jobReadyEmail, wantsJobEmail } from '../notifications/job-emails';
import type { Mailer } from '../notifications/ports';
import { markdownToHtml } from '../render/markdown';
import { type PdfOptions, pdfOptionsSchema } from '../render/options';
import { pageCountFacts } from '../render/page-window';
import { RendererStoppedError, RenderTimeoutError, type Renderer, type RenderResult, TooManyPagesError } from '../render/ports';
import { type Refuser, optional, parseRequest, schemaRef } from '../validation';
import { conversionFields, conversionRefusals, namingInputField, parseTextOptions, withContentRules } from './request';

export const LONGJOB_MAX_PAGES = 100;
/** The submission render that counts pages must finish within about 28 s (the request waits for it). */
export const LONGJOB_SUBMISSION_SECONDS = 28;
/** A long job has up to 15 minutes to render. */
export const LONGJOB_TIMEOUT_SECONDS = 15 * 60;
/** `estimated_completion` is always exactly three minutes after submission (a placeholder). */
export const ESTIMATED_COMPLETION_MS = 3 * 60 * 1000;

export interface LongJobRequest {
  input_type: 'html' | 'markdown';
  content: string;
  options: PdfOptions;
  email_notification?: boolean;
}

function isHttpsUrl(text: string): boolean {
  try {
    return new URL(text).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Route longjob.create, application/json. Loose, so that a `url` (or any content field) that does not belong is
 * still seen by the content rules (400 WRONG_FIELD_PROVIDED); other unknown fields are ignored.
 */
export const longjobBodySchema = withContentRules(
  z
    .object({
      input_type: z.enum(['html', 'markdown']).meta({ description: 'What is converted: html or markdown (URLs and images go to /quickjob).' }),
      html: conversionFields.html,
      markdown: conversionFields.markdown,
      options: optional(pdfOptionsSchema.loose()).meta({
        description: 'PDF options, as for quickjob HTML/Markdown (absent or null: the defaults).',
        anyOf: [schemaRef('PdfOptions'), { type: 'null' }],
      }),
      store: optional(z.boolean()).meta({ description: 'Accepted for symmetry with /quickjob and ignored: a long job always keeps its PDF. When sent, a boolean.' }),
      email_notification: optional(z.boolean()).meta({
        description: "false skips the ready/failed email for this job; absent or null follows the account's settings (true cannot switch on emails turned off there).",
      }),
      webhook_url: optional(z.string().refine(isHttpsUrl)).meta({
        description: 'Checked (an https:// URL, else 400 INVALID_WEBHOOK_URL) and otherwise ignored: webhooks are registered with POST /accounts/me/webhooks.',
        format: 'uri',
      }),
    })
    .loose(),
).meta({ description: 'An asynchronous conversion of HTML or Markdown (up to 100 pages).' });

const longjobRefusals: Record<string, Refuser> = {
  input_type: (value, issue) =>
    value === 'url' || value === 'image'
      ? new ServiceError('INVALID_INPUT_TYPE', `Long jobs convert HTML or Markdown; send input_type "${value}" to /quickjob.`, { input_type: value, allowed: ['html', 'markdown'] })
      : conversionRefusals.input_type(value, issue),
  email_notification: () => invalidParameter('email_notification', 'email_notification must be true or false (or left out to follow the account settings).'),
  webhook_url: (value) =>
    new ServiceError('INVALID_WEBHOOK_URL', 'webhook_url must be an https:// URL. It is not used for delivery: register webhooks with POST /accounts/me/webhooks.', { webhook_url: typeof value === 'string' ? redactUrl(value, { query: true }) : value }),
};

/** POST /longjob body: HTML or Markdown only (the quickjob rules and order), then email_notification, then webhook_url. */
export function parseLongJobRequest(body: unknown): LongJobRequest {
  const request = parseRequest(longjobBodySchema, body, { refusals: longjobRefusals, example: '{"input_type": "html", "html": "<p>Hello</p>"}' });
  const type = request.input_type;
  return {
    input_type: type,
    content: request[type]!,
    options: parseTextOptions(type, request.options),
    ...(request.email_notification !== undefined ? { email_notification: request.email_notification } : {}),
  };
}

export interface LongJobDeps {
  jobs: JobRepository;
  blobs: BlobStore;
  renderer: Renderer;
  queue: MessageQueue<RenderJobMessage>;
  clock: Clock;
  /** Overrides the 28 s page-counting limit (below a 29 s API gateway it must leave room for the rest). */
  submissionSeconds?: number;
  log?: (message: string, err?: unknown) => void;
}

interface StoredDocument {
  html: string;
  options: PdfOptions;
}

/** A submission refused for its page count (counted, or estimated far beyond the limit). */
function submissionPageLimit(result: Pick<RenderResult, 'pages' | 'morePages'>): ServiceError {
  const count = pageCountFacts(result, LONGJOB_MAX_PAGES);
  return new ServiceError('PAGE_LIMIT_EXCEEDED', `The PDF would have ${count.text}; long jobs allow ${LONGJOB_MAX_PAGES}. Split the document, or use options.pageRanges.`, {
    ...count.details,
    max_pages: LONGJOB_MAX_PAGES,
  });
}

/**
 * Accepts a long job: renders it once to count pages (within ~28 s; over 100 pages is refused now),
 * stores the document for the worker, records the job as queued with its `job.queued` event, and queues it.
 * If queueing fails the job is marked failed and its document removed, so nothing waits forever.
 */
export async function submitLongJob(
  deps: LongJobDeps,
  /** `spentMs`: time the request spent before this began; the gateway's clock is the one that runs out. */
  input: { account: Account; plan: Plan; request: LongJobRequest; spentMs?: number },
): Promise<Job> {
  const { account, plan, request } = input;
  const now = deps.clock.now();
  assertCanCover(account, plan.price_per_pdf_micros, now);
  const html = request.input_type === 'markdown' ? markdownToHtml(request.content) : request.content;

  const limitSeconds = deps.submissionSeconds ?? LONGJOB_SUBMISSION_SECONDS;
  const budgetMs = limitSeconds * 1000 - Math.max(0, input.spentMs ?? 0);
  let pages: number;
  let morePages: boolean | undefined;
  try {
    if (budgetMs <= 0) throw new RenderTimeoutError(0);
    ({ pages, morePages } = await deps.renderer.render({ html, options: request.options, timeoutMs: budgetMs, maxPages: LONGJOB_MAX_PAGES, tenant: account.account_id }));
  } catch (err) {
    if (err instanceof RenderTimeoutError) {
      throw new ServiceError('RENDER_TIMEOUT', `Counting the pages took longer than ${limitSeconds} seconds, so the document cannot be submitted. Split it into smaller documents.`, {
        timeout_seconds: limitSeconds,
      });
    }
    if (err instanceof TooManyPagesError) throw submissionPageLimit(err);
    if (isServiceError(err)) throw namingInputField(err, request.input_type);
    deps.log?.('long job submission render failed', err);
    throw new ServiceError('PDF_GENERATION_FAILED', 'The renderer failed while counting pages. Retry; if it keeps failing, simplify the document.');
  }
  if (morePages || pages > LONGJOB_MAX_PAGES) throw submissionPageLimit({ pages, morePages });

  const jobId = newId('job');
  const inputKey = objectKey('jobInputs', account.account_id, jobId, 'document.json');
  const job: Job = {
    ...newJob({ job_id: jobId, account_id: account.account_id, job_type: 'long', status: 'queued', mode: request.input_type, now }),
    // Counted already: GET /jobs/{id} shows it while the job waits (the worker's render sets it again).
    pages,
    input_key: inputKey,
    ...(request.email_notification !== undefined ? { email_notification: request.email_notification } : {}),
  };
  const document: StoredDocument = { html, options: request.options };
  try {
    await deps.blobs.put(inputKey, Buffer.from(JSON.stringify(document)), 'application/json');
  } catch (err) {
    // A put whose reply was lost may have stored it: no job will ever delete it.
    await deps.blobs.delete(inputKey).catch(() => undefined);
    throw err;
  }
  // The start is recorded with the job: if this process dies before the message is sent, the start sweeper sends it.
  try {
    await deps.jobs.put(job, [jobEvent('job.queued', job, now)], { via: 'render-queue' });
  } catch (err) {
    if (!(await jobWritten(deps.jobs, jobId))) {
      await deps.blobs.delete(inputKey).catch(() => undefined);
      throw err;
    }
    deps.log?.(`the write of job ${jobId} went through although it failed; the job goes on`, err);
  }
  try {
    await deps.queue.send({ job_id: jobId });
  } catch (err) {
    deps.log?.(`could not queue long job ${jobId}`, err);
    const gaveUp = failed(job, deps.clock.now(), 'SERVICE_UNAVAILABLE', 'The job could not be queued.');
    // Only over the job as it was queued: a send whose reply was lost reached the queue all the same, and a worker
    // that took the job meanwhile (and may have completed and charged it) must not be overwritten.
    const ended = await deps.jobs.putIf(gaveUp, ['queued'], [jobEvent('job.failed', gaveUp, deps.clock.now())]).catch(() => null);
    if (ended === false) {
      deps.log?.(`the send of job ${jobId} went through although it failed; the job goes on`, err);
      await confirmStartSent(deps, jobId, job.created_at);
      return job;
    }
    await deps.blobs.delete(inputKey).catch(() => undefined);
    throw new ServiceError('SERVICE_UNAVAILABLE', 'The job could not be queued; nothing was charged. Retry in a moment.', { job_id: jobId });
  }
  await confirmStartSent(deps, jobId, job.created_at);
  return job;
}

/** Running-slot kind of long jobs being rendered (see JobSlots). */
export const LONGJOB_RENDER_SLOT_KIND = 'longjob-render';
/** Long jobs one account may have rendering at once, unless the deployment says otherwise. */
export const LONGJOB_RENDERS_PER_ACCOUNT = 10;
/** The longest a job over its account's share waits before it is tried again (the waits double from 2 s up to it). */
export const LONGJOB_DEFER_SECONDS = 30;

/**
 * The worker renders queued jobs. It sends only to its own queue: a job whose account already has its share of
 * jobs rendering goes back to the queue with a delay.
 */
export interface LongJobWorkerDeps extends Omit<LongJobDeps, 'submissionSeconds'> {
  accounts: AccountRepository;
  plans: { get(planId: string): Promise<Plan | null> };
  billing: Billing;
  mailer: Mailer;
  slots: JobSlots;
  /** Defaults: LONGJOB_RENDERS_PER_ACCOUNT and LONGJOB_DEFER_SECONDS (the longest wait between tries). */
  share?: { rendersPerAccount?: number; deferSeconds?: number };
}

export type ProcessOutcome = 'completed' | 'failed' | 'timeout' | 'skipped' | 'deferred';

/**
 * The render worker's step for one job, safe under at-least-once delivery: the job is claimed with a
 * conditional write (queued → processing, or a processing job whose worker's lease ran out), so a
 * duplicate message does nothing; the charge is keyed by the job, so a retry never charges twice; and the
 * completed job, its charge and its `job.completed` event are one write.
 *
 * Fair between accounts: a job renders only in one of its account's running slots (`share.rendersPerAccount`).
 * Timeouts are not charged, so without the cap one account's documents that spin for the whole 15 minutes could hold
 * every worker while other accounts' jobs wait. A job over the cap is sent to the queue again with a delay (a new
 * message, so waiting uses up none of the deliveries that count towards the dead-letter queue) and stays queued.
 * The delay doubles with each time it was sent back, so a slot freed soon is used soon and a long wait costs few tries.
 */
/** What ending a long job its worker gave up on needs: the failure is written first, then the failure email sent. */
export type LongJobEndingDeps = Pick<LongJobWorkerDeps, 'jobs' | 'clock' | 'accounts' | 'mailer' | 'log'>;

export async function processLongJob(deps: LongJobWorkerDeps, message: RenderJobMessage, timeoutMs: number, limitMs = LONGJOB_TIMEOUT_SECONDS * 1000): Promise<ProcessOutcome> {
  const jobId = message.job_id;
  const job = await deps.jobs.get(jobId);
  if (!job || job.job_type !== 'long' || FINISHED_STATUSES.has(job.status)) return 'skipped';
  const now = deps.clock.now();
  // Another worker holds it (a duplicate message): nothing to do, and no slot to take.
  if (job.status === 'processing' && job.lease_until && job.lease_until > now.toISOString()) return 'skipped';
  // A job taken over after its worker died has only what is left of its 15 minutes (they run from its first start).
  const budgetMs = Math.min(timeoutMs, limitMs - (job.started_at ? now.getTime() - Date.parse(job.started_at) : 0));
  if (budgetMs <= 0) return (await endAbandonedLongJob(deps, job, limitMs)) ? 'timeout' : 'skipped';

  const leaseMs = budgetMs + 60_000;
  // This attempt's own slot: if its lease runs out and another worker takes the job (and a slot) over, this
  // attempt's late release must give back only what it took.
  const slot = { accountId: job.account_id, kind: LONGJOB_RENDER_SLOT_KIND, jobId, holder: newUlid() };
  const max = deps.share?.rendersPerAccount ?? LONGJOB_RENDERS_PER_ACCOUNT;
  if (!(await deps.slots.acquire({ ...slot, max, now, leaseSeconds: Math.ceil(leaseMs / 1000) }))) {
    const deferrals = (message.deferrals ?? 0) + 1;
    await deps.queue.send({ job_id: jobId, deferrals }, { delaySeconds: deferralDelaySeconds(deferrals, deps.share?.deferSeconds ?? LONGJOB_DEFER_SECONDS) });
    return 'deferred';
  }
  try {
    // Stamped once the slot is held, not when the message arrived: waiting for the slot is not rendering.
    const at = deps.clock.now();
    const claimed: Job = { ...job, status: 'processing', started_at: job.started_at ?? at.toISOString(), lease_until: new Date(at.getTime() + leaseMs).toISOString() };
    const firstStart = job.status === 'queued';
    // The claim watches itself: if this worker dies without a word, the start sweeper ends the job once the lease is over.
    let claimedIt: boolean;
    try {
      claimedIt = await deps.jobs.putIf(claimed, ['queued'], firstStart ? [jobEvent('job.processing', claimed, at)] : [], now.toISOString(), { via: 'render-queue' });
    } catch (err) {
      // The claim may have gone through with its reply lost: its lease is given back (nothing happens if it did not
      // go through), so the message delivered again takes the job at once, rather than finding it held until the
      // lease ran out and the start sweeper ended it as a timeout.
      await deps.jobs.putIfLeaseHeld({ ...claimed, lease_until: now.toISOString() }, claimed.lease_until!).catch(() => undefined);
      throw err;
    }
    if (!claimedIt) return 'skipped';
    try {
      const outcome = await runClaimed(deps, job, claimed, budgetMs, limitMs, slot.holder);
      // Ended under this worker's claim: the watch is over (a lost lease leaves it to whoever holds the job now).
      if (outcome !== 'skipped') await confirmStartSent({ jobs: deps.jobs, log: deps.log }, jobId);
      return outcome;
    } catch (err) {
      // Unexpected failure (storage, database): give the lease back so the redelivered message can retry at once.
      await deps.jobs.putIfLeaseHeld({ ...claimed, lease_until: now.toISOString() }, claimed.lease_until!).catch(() => undefined);
      throw err;
    }
  } finally {
    // Tried again briefly: a slot not given back holds the account's share until its lease (~16 minutes) runs out,
    // deferring its next long jobs all that time. If every try fails, the lease still frees it then.
    const released = await triedBriefly(async () => (await deps.slots.release(slot), true));
    if (!released) deps.log?.(`could not give back the render slot of job ${jobId}`);
  }
}

/**
 * The worker that was rendering this job is known to be gone: the local service restarted under it (a crash or a
 * kill), and a process holds no leases across a restart. Its lease and its render slot are given up now, so that the
 * message delivered again takes the job over at once, with what is left of its 15 minutes. Without this the job waited
 * for the lease to run out and was then ended as a timeout it never had (and held its account's slot meanwhile). In
 * AWS nothing says a lease's holder is gone, and the lease runs out (the start sweeper ends the job then).
 */
export async function releaseDeadWorker(deps: { jobs: JobRepository; slots: JobSlots; clock: Clock }, jobId: string): Promise<boolean> {
  const job = await deps.jobs.get(jobId);
  if (!job || job.job_type !== 'long') return false;
  await deps.slots.release({ accountId: job.account_id, kind: LONGJOB_RENDER_SLOT_KIND, jobId });
  const now = deps.clock.now();
  if (job.status !== 'processing' || !job.lease_until || job.lease_until <= now.toISOString()) return false;
  // Ended before now, so a claim made in this same millisecond finds it ended (a claim needs a lease older than its now).
  return deps.jobs.putIfLeaseHeld({ ...job, lease_until: new Date(now.getTime() - 1).toISOString() }, job.lease_until);
}

/**
 * `timeoutMs` is what is left of the job's limit (`limitMs`, which the messages name). `attempt` names this claim: its
 * output is stored under it, so a worker whose lease ran out never overwrites or deletes the output of the one that
 * took the job over.
 */
async function runClaimed(deps: LongJobWorkerDeps, job: Job, claimed: Job, timeoutMs: number, limitMs: number, attempt: string): Promise<ProcessOutcome> {
  const jobId = job.job_id;
  const stored = await deps.accounts.get(job.account_id);
  /** The job failed for its page count: the count when it is exact, none when printing stopped early (not the one taken at submission). */
  const renderedPageLimit = (result: Pick<RenderResult, 'pages' | 'morePages'>) => {
    const count = pageCountFacts(result, LONGJOB_MAX_PAGES);
    return failed(claimed, deps.clock.now(), 'PAGE_LIMIT_EXCEEDED', `The PDF has ${count.text}; long jobs allow ${LONGJOB_MAX_PAGES}.`, { pages: result.morePages ? null : result.pages });
  };
  const finish = async (final: Job, outcome: ProcessOutcome): Promise<ProcessOutcome> => {
    // Only under this worker's own claim: if its lease ran out meanwhile, another worker owns the job (and may have
    // completed and charged it), so this late failure neither overwrites the job nor removes its input.
    if (!(await deps.jobs.putIfLeaseHeld(final, claimed.lease_until!, [jobEvent('job.failed', final, deps.clock.now())]))) return 'skipped';
    await cleanup();
    if (stored && wantsJobEmail(stored, final)) await mail(jobFailedEmail(stored, final));
    return outcome;
  };
  const cleanup = () => (job.input_key ? deps.blobs.delete(job.input_key).catch((e) => deps.log?.('could not remove a job input', e)) : Promise.resolve());
  const mail = (message: Parameters<Mailer['send']>[0]) => deps.mailer.send(message).catch((e) => deps.log?.(`could not email about job ${jobId}`, e));
  let current: { account: Account; plan: Plan };
  try {
    current = await requireCurrentPlan(deps.plans, stored);
  } catch (refusal) {
    // The refusal ends the job; anything else gives the lease back for a retry (processLongJob).
    if (!isServiceError(refusal)) throw refusal;
    return finish(failed(claimed, deps.clock.now(), refusal.code, refusal.message), 'failed');
  }
  const { account, plan } = current;

  const raw = job.input_key ? await deps.blobs.get(job.input_key) : null;
  if (!raw) return finish(failed(claimed, deps.clock.now(), 'PDF_GENERATION_FAILED', 'The submitted document is no longer stored, so it could not be printed; nothing was charged. Submit it again.'), 'failed');
  const document = JSON.parse(raw.toString('utf8')) as StoredDocument;

  let pdf: Uint8Array;
  let pages: number;
  let morePages: boolean | undefined;
  try {
    ({ pdf, pages, morePages } = await deps.renderer.render({ html: document.html, options: document.options, timeoutMs, maxPages: LONGJOB_MAX_PAGES, tenant: job.account_id }));
  } catch (err) {
    // Not the document's failure: the lease goes back and the message is delivered again (processLongJob).
    if (err instanceof RendererStoppedError) throw err;
    if (err instanceof RenderTimeoutError) {
      return finish(timedOut(claimed, deps.clock.now(), 'RENDER_TIMEOUT', `Rendering took longer than ${limitText(limitMs)}; nothing was charged. Split the document or simplify it (large images, heavy scripts).`), 'timeout');
    }
    if (err instanceof TooManyPagesError) return finish(renderedPageLimit(err), 'failed');
    deps.log?.(`long job ${jobId} failed to render`, err);
    const code = isServiceError(err) ? err.code : 'PDF_GENERATION_FAILED';
    return finish(failed(claimed, deps.clock.now(), code, isServiceError(err) ? err.message : 'The renderer failed to produce a PDF.'), 'failed');
  }
  if (morePages || pages > LONGJOB_MAX_PAGES) return finish(renderedPageLimit({ pages, morePages }), 'failed');

  const name = `${jobId}.pdf`;
  const key = objectKey('jobOutputs', job.account_id, jobId, attempt, name);
  await deps.blobs.put(key, pdf, 'application/pdf');
  const at = deps.clock.now();
  const done = completed(claimed, at, { pages, lease_until: null, output: { key, name, content_type: 'application/pdf', size_bytes: pdf.byteLength, expires_at: retentionEnd('jobOutputs', at)! } });
  const dropOutput = () => deps.blobs.delete(key).catch((e) => deps.log?.(`could not remove an unused output of job ${jobId}`, e));
  try {
    // Completed only under this worker's own lease: one that ran out may have let another worker take the job over.
    const { outcome } = await deps.billing.charge(
      { account_id: job.account_id, job_id: jobId, unit: 'pdf', operation: 'pdf', amount_micros: plan.price_per_pdf_micros, pdf_count: 1 },
      { job: done, events: [jobEvent('job.completed', done, at)], leaseUntil: claimed.lease_until! },
      account,
    );
    // Charged before: by the worker that took the job over (it completed it, and emails), unless this worker's own write
    // went through with its reply lost; the stored job says which output it names.
    if (outcome === 'already_charged' && (await deps.jobs.get(jobId))?.output?.key !== key) {
      await dropOutput();
      return 'skipped';
    }
  } catch (err) {
    if (!isServiceError(err)) throw err;
    await dropOutput();
    return finish(failed(claimed, deps.clock.now(), err.code, err.message), 'failed');
  }
  await cleanup();
  if (wantsJobEmail(account, done)) {
    const link = await deps.blobs.signedGetUrl(key, { expiresInSeconds: LINK_TTL_SECONDS, filename: name }).catch(() => null);
    await mail(jobReadyEmail(account, done, link));
  }
  return 'completed';
}

/**
 * After the last delivery attempt failed unexpectedly: the job fails rather than waiting forever, with its
 * `job.failed` event and the failure email (unless turned off), as any failed long job. Not when a worker holds it
 * under a live lease (a duplicate message's, which ends it itself): this attempt gave its own lease back when it failed.
 */
export async function abandonLongJob(deps: LongJobEndingDeps, jobId: string): Promise<void> {
  const job = await deps.jobs.get(jobId);
  if (!job || FINISHED_STATUSES.has(job.status)) return;
  const reason = 'The job failed on our side after several attempts; nothing was charged. Submit it again.';
  // Queued, or processing under a lease that ran out.
  await endUnattended(deps, failed(job, deps.clock.now(), 'PDF_GENERATION_FAILED', reason), ['queued']);
}

/**
 * Ends, as a timeout, a long job still processing after its worker's lease ran out — the worker stopped without
 * recording anything (killed for memory, or at the Lambda time limit), and the lease outlasts the job's time limit —
 * also when its message comes back and finds it so. Nothing is charged; `job.failed` and the failure
 * email go out as for any timeout. False when another writer ended or took the job first.
 */
export async function endAbandonedLongJob(
  deps: Pick<LongJobWorkerDeps, 'jobs' | 'clock' | 'accounts' | 'mailer' | 'log'> & Partial<Pick<LongJobWorkerDeps, 'blobs'>>,
  job: Job,
  limitMs = LONGJOB_TIMEOUT_SECONDS * 1000,
): Promise<boolean> {
  if (job.job_type !== 'long' || FINISHED_STATUSES.has(job.status)) return false;
  const now = deps.clock.now();
  const final = timedOut(
    job,
    now,
    'RENDER_TIMEOUT',
    `Rendering did not finish within ${limitText(limitMs)} (the renderer stopped without a result); nothing was charged. Split the document or simplify it (large images, heavy scripts).`,
    { lease_until: null },
  );
  // Only over a lease that ran out: a worker holding a live lease (a new claim) wins.
  if (!(await endUnattended(deps, final, []))) return false;
  // Without a blob store (the start sweeper may not touch the bucket) the input goes with its 2-day retention.
  if (job.input_key && deps.blobs) await deps.blobs.delete(job.input_key).catch((e) => deps.log?.('could not remove a job input', e));
  return true;
}

/**
 * Writes the end of a job whose worker died (over one of `from`, or a processing job's lease that ran out) with its
 * `job.failed` event, then sends the failure email that worker would have sent (unless the job or account turned
 * emails off). The job has ended either way: an email that cannot go out is logged, not retried. False when another
 * writer got there first.
 */
async function endUnattended(deps: Pick<LongJobWorkerDeps, 'jobs' | 'clock' | 'accounts' | 'mailer' | 'log'>, final: Job, from: JobStatus[]): Promise<boolean> {
  const now = deps.clock.now();
  if (!(await deps.jobs.putIf(final, from, [jobEvent('job.failed', final, now)], now.toISOString()))) return false;
  try {
    const account = await deps.accounts.get(final.account_id);
    if (account && wantsJobEmail(account, final)) await deps.mailer.send(jobFailedEmail(account, final));
  } catch (e) {
    deps.log?.(`could not email about job ${final.job_id}`, e);
  }
  return true;
}

/** "15 minutes"; a limit under a minute (tests, LONGJOB_TIMEOUT_SECONDS) in seconds rather than "0 minutes". */
function limitText(limitMs: number): string {
  return limitMs >= 60_000 ? `${Math.round(limitMs / 60_000)} minutes` : `${Math.round(limitMs / 1000)} seconds`;
}

/** What the dead-letter worker did with a job whose message ran out of deliveries. */
export type DeadLetterOutcome = 'failed' | 'already_finished' | 'held';

/**
 * A job whose message went to the dead-letter queue: every delivery's worker died without recording why (out of
 * memory, stopped at the Lambda timeout), so no catch ran and the job is still queued or processing. It is failed,
 * nothing charged, unless a worker holds it now under a live lease (a duplicate delivery, which ends the job itself).
 */
export async function abandonDeadLetteredLongJob(deps: LongJobEndingDeps, jobId: string): Promise<DeadLetterOutcome> {
  const job = await deps.jobs.get(jobId);
  if (!job || job.job_type !== 'long' || FINISHED_STATUSES.has(job.status)) return 'already_finished';
  const now = deps.clock.now();
  if (job.status === 'processing' && job.lease_until && job.lease_until > now.toISOString()) return 'held';
  const gaveUp = failed(job, now, 'PDF_GENERATION_FAILED', 'The job failed on our side after several attempts (the renderer stopped without a result); nothing was charged. Submit it again, or split the document if it is very large.');
  // Queued, or processing under a lease that ran out; a worker that took it over meanwhile wins.
  if (await endUnattended(deps, gaveUp, ['queued'])) return 'failed';
  const current = await deps.jobs.get(jobId);
  return current && !FINISHED_STATUSES.has(current.status) ? 'held' : 'already_finished';
}
