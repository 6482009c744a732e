/**
 * Background merge/split jobs (POST /pdf/jobs): submission here, processing in the `pdfop` workflow
 * (statemachines/pdfop.asl.json) whose task handlers call `markProcessing`, `processPdfJob` and
 * `recordPdfJobFailure`.
 *
 * A job produces every file or fails as a whole: on failure its stored files are removed, its file rows are
 * replaced by one failed row naming the input, nothing is charged, and `job.failed` is written with it.
 * Whatever the outcome, the running slot is given back and the uploads it used are deleted.
 */
import { z } from 'zod';
import type { Account } from '../accounts/account';
import { requireCurrentPlan } from '../accounts/entitlements';
import { assertCanCover, completionCommitted } from '../billing/charging';
import { commitWholeJob, jobLiveness } from '../billing/commitments';
import type { Plan } from '../billing/plans';
import type { Clock } from '../clock';
import { ServiceError, isServiceError } from '../errors';
import { newUploadKey, ownUpload, parseUploadLength, presignUpload, withUploadsClaimed } from '../jobs/uploads';
import { newId } from '../ids';
import type { JobFileRow } from '../jobs/files';
import { FINISHED_STATUSES, type Job, completed, failed, newJob } from '../jobs/job';
import type { BlobStore } from '../jobs/ports';
import { retentionEnd } from '../jobs/storage-layout';
import { Deadline, PdfDeadlineExceeded } from '../pdf/errors';
import { basenameOf } from '../pdf/filenames';
import { JOB_LIMITS, MAX_UPLOAD_BYTES } from '../pdf/limits';
import type { SourceDocument } from '../pdf/copier';
import { type OperationPlan, openInputs, planMerge, planSplit, produce } from '../pdf/operations';
import { parsePageRange } from '../pdf/page-ranges';
import { maxOperationCharge, operationCharge } from '../pdf/pricing';
import type { WorkflowJobDeps } from '../workflows/job-deps';
import { isTimeoutError } from '../workflows/ended';
import { TransientTaskError } from '../workflows/ports';
import { releaseWorkflowJob } from '../workflows/release';
import { startJobWorkflow, storeQueuedJob } from '../workflows/start-job';
import { acquireSlot } from '../jobs/slots';
import { type PdfJobRequest, parseMergeOptions, parseSplitMode, parseSplitOptions } from './requests';
import { PDF, ZIP, ZipBuilder, failedRow, pdfopCompletedEvent, pdfopFailedEvent, pdfopKeys, storedOutput, successRow, zipName } from './results';

export const PDFOP_WORKFLOW = 'pdfop';
export const PDFOP_SLOT_KIND = 'pdfop';
export const MAX_ACTIVE_PDF_JOBS = 2;
/**
 * A slot held longer than this (a job that died without finishing) may be taken again: longer than the pdfop workflow
 * may run (40 minutes: Process's 15, its retry finding the job's time spent, and RecordFailure's retries all fit, so the
 * execution never times out before the job is recorded as failed).
 */
export const PDF_JOB_LEASE_SECONDS = 40 * 60 + 5 * 60;
const PROGRESS_EVERY_MS = 2000;

export interface PdfJobDeps extends WorkflowJobDeps {
  /** Overrides the job time budget (tests). */
  timeoutSeconds?: number;
}

// ---- uploads ----------------------------------------------------------------------------------------

/** An uploaded PDF input: the caller's, present and less than a day old (see ownUpload), at most 150 MB. Returns its size. */
export async function checkUpload(deps: { blobs: BlobStore; clock: Clock }, account: Account, key: string, input: { filename: string; index: number }): Promise<number> {
  const details = { filename: input.filename, input_index: input.index };
  const head = await ownUpload(deps, account.account_id, key, { subject: input.filename, kind: 'pdf', details });
  if (head.size_bytes > MAX_UPLOAD_BYTES) {
    throw new ServiceError('PDF_INPUT_TOO_LARGE', `${input.filename} is larger than 150 MB, the most one job takes. Split it into PDFs under 150 MB and process them in separate jobs.`, { ...details, s3_key: key, size_bytes: head.size_bytes, max_bytes: MAX_UPLOAD_BYTES });
  }
  return head.size_bytes;
}

// ---- submission ---------------------------------------------------------------------------------------

export async function submitPdfJob(deps: PdfJobDeps, input: { account: Account; plan: Plan; request: PdfJobRequest }) {
  const { account, plan, request } = input;
  const now = deps.clock.now();
  // The inputs first, as on the instant routes: another account's upload is FORBIDDEN whatever the balance.
  let total = 0;
  let over: { filename: string; input_index: number } | null = null;
  for (const [i, item] of request.inputs.entries()) {
    total += await checkUpload(deps, account, item.s3_key, { filename: item.filename, index: i });
    if (total > MAX_UPLOAD_BYTES) over ??= { filename: item.filename, input_index: i };
  }
  if (over) {
    // Named after the input that took the total over the limit, as on the instant routes.
    throw new ServiceError('PDF_INPUT_TOO_LARGE', `The inputs of one job may total at most 150 MB; ${over.filename} (input ${over.input_index}) takes them over. Process the files in separate jobs.`, {
      ...over,
      size_bytes: total,
      max_bytes: MAX_UPLOAD_BYTES,
      file_count: request.inputs.length,
    });
  }
  const jobId = newId('job');
  // Each upload serves one job (the job deletes it when it ends): one held by a queued or running job is refused now,
  // rather than accepting a job that fails when the other ends (or fails the other).
  const uploads = request.inputs.map((item, i) => ({ key: item.s3_key, refusal: { subject: item.filename, kind: 'pdf' as const, details: { filename: item.filename, input_index: i } } }));
  return withUploadsClaimed(deps, { accountId: account.account_id, jobId, leaseSeconds: PDF_JOB_LEASE_SECONDS, uploads }, () => queuePdfJob(deps, { account, plan, request, jobId, now }));
}

async function queuePdfJob(deps: PdfJobDeps, input: { account: Account; plan: Plan; request: PdfJobRequest; jobId: string; now: Date }) {
  const { account, plan, request, jobId, now } = input;
  assertCanCover(account, maxOperationCharge(plan), now);

  const acquired = await acquireSlot(deps, { accountId: account.account_id, kind: PDFOP_SLOT_KIND, jobId, max: MAX_ACTIVE_PDF_JOBS, now, leaseSeconds: PDF_JOB_LEASE_SECONDS });
  if (!acquired) {
    throw new ServiceError('PDF_JOB_ALREADY_ACTIVE', `${MAX_ACTIVE_PDF_JOBS} merge/split jobs are already running for this account. Wait for one to finish (GET /jobs/{job_id}), then retry.`, {
      max_active_jobs: MAX_ACTIVE_PDF_JOBS,
    });
  }
  // The whole job's charge at most, on top of what the account's other running jobs will charge (rule 3).
  try {
    await commitWholeJob(deps, { account_id: account.account_id, job_id: jobId, charges: 1, amount_micros: maxOperationCharge(plan) }, jobLiveness(deps.jobs));
  } catch (err) {
    await deps.slots.release({ accountId: account.account_id, kind: PDFOP_SLOT_KIND, jobId });
    throw err;
  }
  const job: Job = {
    ...newJob({ job_id: jobId, account_id: account.account_id, job_type: 'pdfop', status: 'queued', now }),
    operation: request.operation,
    split_mode: request.operation === 'split' ? String(request.split?.mode) : null,
    input_files: request.inputs.length,
    input_pages: 0,
    outputs_produced: 0,
    processed_count: 0,
  };
  // The request can be far larger than a workflow input allows; the job reads it from storage.
  const files = [{ key: pdfopKeys.request(account.account_id, jobId), body: Buffer.from(JSON.stringify(request)), contentType: 'application/json' }];
  await storeQueuedJob(deps, job, { workflow: PDFOP_WORKFLOW, slotKind: PDFOP_SLOT_KIND, files });
  await startJobWorkflow(deps, PDFOP_WORKFLOW, job, () => finishFailed(deps, job, request, 'SERVICE_UNAVAILABLE', 'The job could not be started.', null, { keepUploads: true }));
  return {
    job_id: jobId,
    status: 'queued' as const,
    job_type: 'pdfop' as const,
    operation: request.operation,
    message: `The ${request.operation} job is queued. Follow it with GET /jobs/${jobId}; its files will be listed at GET /jobs/${jobId}/files.`,
  };
}

// ---- workflow tasks -------------------------------------------------------------------------------------

export interface TaskInput {
  job_id: string;
  account_id?: string;
  /** Set by the ASL's Catch: the error that ended the processing state. */
  error?: { Error?: string; Cause?: string };
}

async function loadRequest(deps: PdfJobDeps, job: Job): Promise<PdfJobRequest | null> {
  const raw = await deps.blobs.get(pdfopKeys.request(job.account_id, job.job_id));
  return raw ? (JSON.parse(raw.toString('utf8')) as PdfJobRequest) : null;
}

/** Releases the slot and the credit commitment and deletes the uploads the job used (and its stored request). Never throws. */
async function releaseJob(deps: PdfJobDeps, job: Job, request: PdfJobRequest | null, { keepUploads = false, keepWatch = false }: { keepUploads?: boolean; keepWatch?: boolean } = {}) {
  const staged = [pdfopKeys.request(job.account_id, job.job_id)];
  await releaseWorkflowJob(deps, job, { slotKind: PDFOP_SLOT_KIND, staged, inputs: (request?.inputs ?? []).map((i) => i.s3_key), keepUploads, keepWatch });
}

/** Removes whatever files the job may have written (deterministic keys: one per planned output, and the ZIP). */
async function removeOutputs(deps: PdfJobDeps, job: Job) {
  const count = Math.max(job.output_count ?? 0, job.outputs_produced ?? 0);
  const keys = [pdfopKeys.zip(job.account_id, job.job_id)];
  for (let i = 0; i < count; i++) keys.push(pdfopKeys.file(job.account_id, job.job_id, i));
  await Promise.all(keys.map((k) => deps.blobs.delete(k).catch((err) => deps.log?.(`could not delete ${k}`, err))));
}

function inputNames(request: PdfJobRequest | null): string {
  return request ? request.inputs.map((i) => i.filename).join(', ') : 'unknown';
}

/**
 * The failure path: job failed + job.failed, then outputs removed, one failed row naming the input, slot and uploads
 * released. Only a job still running ends here, and only then is anything removed: a task timed out by the workflow
 * may still be running, and the job another task finished keeps its files and rows.
 */
async function finishFailed(
  deps: PdfJobDeps,
  job: Job,
  request: PdfJobRequest | null,
  code: string,
  message: string,
  culpritName: string | null,
  { timeout = false, keepUploads = false }: { timeout?: boolean; keepUploads?: boolean } = {},
) {
  // No files, and one failed row naming the input.
  const clear = async (failure: Job) => {
    await removeOutputs(deps, job);
    await deps.files.deleteAll(job.job_id);
    await deps.files.putAll(job.job_id, [failedRow(failure.failed_input ?? culpritName ?? inputNames(request), failure.error_code ?? code, failure.error_message ?? message)]);
  };
  const at = deps.clock.now();
  // A job produces every file or none: the files it had made are gone.
  const final = failed(job, at, code, message, { outputs_produced: 0, failed_input: culpritName ?? inputNames(request), ...(timeout ? { timeout_occurred: true } : {}) });
  if (!(await deps.jobs.putIf(final, ['queued', 'processing'], [pdfopFailedEvent(final, at)]))) {
    const current = await deps.jobs.get(job.job_id);
    // Ended as failed by another task while this one went on writing files and rows (the workflow gave up on it): what
    // it wrote since goes too, so a failed job offers nothing to download. A completed job is left as it is.
    if (current && (current.status === 'failed' || current.status === 'timeout')) await clear(current);
    return current ?? final;
  }
  // Released whatever happens to the rows; the start sweeper's watch stays until the rows are written too (the sweeper
  // calls the failure recorder again until then), so a row write that fails cannot keep the slot and the uploads.
  try {
    await clear(final);
  } finally {
    await releaseJob(deps, final, request, { keepUploads, keepWatch: true });
  }
  await deps.jobs.startSent(job.job_id).catch((err) => deps.log?.(`ending the watch of job ${job.job_id}`, err));
  return final;
}

/** Task 1: queued → processing. Idempotent. */
export async function markProcessing(deps: PdfJobDeps, input: TaskInput): Promise<TaskInput> {
  const job = await deps.jobs.get(input.job_id);
  if (job && job.status === 'queued') {
    const now = deps.clock.now();
    await deps.jobs.putIf({ ...job, status: 'processing', started_at: now.toISOString(), processed_count: 0 }, ['queued']);
  }
  return { job_id: input.job_id, account_id: input.account_id };
}

/** Reads every input (INVALID_PDF, PDF_ENCRYPTED, … naming it), within the job's deadline. */
function openSources(request: PdfJobRequest, inputs: Uint8Array[], deadline: Deadline): SourceDocument[] {
  return openInputs(
    request.inputs.map((item, i) => ({ bytes: inputs[i], filename: item.filename, index: i })),
    deadline,
  );
}

function buildPlan(request: PdfJobRequest, inputs: Uint8Array[], sources: SourceDocument[]): OperationPlan {
  if (request.operation === 'merge') {
    const options = parseMergeOptions(request.options);
    const spec = {
      inputs: request.inputs.map((item, i) => ({
        bytes: inputs[i],
        filename: item.filename,
        index: i,
        pages: item.pages === null ? null : parsePageRange(item.pages, { filename: item.filename, input_index: i, parameter: `inputs[${i}].pages` }),
      })),
      ...options,
    };
    return planMerge(spec, sources, JOB_LIMITS);
  }
  const item = request.inputs[0];
  return planSplit(
    { input: { bytes: inputs[0], filename: item.filename, index: 0 }, split: parseSplitMode(request.split, { filename: item.filename, input_index: 0 }), pattern: parseSplitOptions(request.options) },
    sources[0],
    JOB_LIMITS,
  );
}

/**
 * Task 2: the whole job. Domain failures end the job here (and are returned as data); infrastructure
 * failures throw TransientTaskError so the workflow retries the task, which is safe: outputs have fixed
 * keys and the charge is exactly-once per job.
 */
export async function processPdfJob(deps: PdfJobDeps, input: TaskInput): Promise<{ job_id: string; status: string }> {
  let job = await deps.jobs.get(input.job_id);
  if (!job) return { job_id: input.job_id, status: 'missing' };
  if (FINISHED_STATUSES.has(job.status)) return { job_id: job.job_id, status: job.status };
  const started = job.started_at ? new Date(job.started_at) : deps.clock.now();
  if (job.status !== 'processing') job = { ...job, status: 'processing', started_at: started.toISOString() };
  const deadline = Deadline.in((deps.timeoutSeconds ?? JOB_LIMITS.timeoutSeconds) * 1000 - (deps.clock.now().getTime() - started.getTime()));

  let request: PdfJobRequest | null = null;
  // Progress writes in flight; awaited before any final write so none can land after it.
  let progress: Promise<void> = Promise.resolve();
  try {
    request = await loadRequest(deps, job);
    if (!request) return { job_id: job.job_id, status: (await finishFailed(deps, job, null, 'INTERNAL_SERVER_ERROR', 'The job request was lost; nothing was charged. Submit the job again.', null)).status };
    // Refused (402) as the job's failure by the catch below.
    const { account, plan } = await requireCurrentPlan(deps.plans, await deps.accounts.get(job.account_id));

    const bytes: Uint8Array[] = [];
    for (const [i, item] of request.inputs.entries()) {
      const data = await deps.blobs.get(item.s3_key);
      if (!data) throw new ServiceError('UPLOAD_NOT_FOUND', `${item.filename}: the upload is gone: uploads are kept one day, and removed when a job using them finishes (each job needs its own upload). Upload it again.`, { filename: item.filename, input_index: i });
      bytes.push(data);
    }
    const sources = openSources(request, bytes, deadline);
    // Known once the inputs are read, so a job refused by a limit still shows what it was given.
    job = { ...job, input_pages: sources.reduce((n, source) => n + source.pages.length, 0) };
    const opPlan = buildPlan(request, bytes, sources);
    job = { ...job, output_count: opPlan.outputs.length, processed_count: 0, outputs_produced: 0 };
    if (!(await deps.jobs.putIf(job, ['queued', 'processing']))) return { job_id: job.job_id, status: (await deps.jobs.get(job.job_id))?.status ?? 'missing' };

    // Progress: pages copied so far, written at most every 2 s while the work goes on.
    let lastWrite = Date.now();
    const current = job;
    const onProgress = (pagesDone: number, filesDone: number) => {
      current.processed_count = pagesDone;
      current.outputs_produced = filesDone;
      if (Date.now() - lastWrite < PROGRESS_EVERY_MS) return;
      lastWrite = Date.now();
      const snapshot = { ...current };
      progress = progress
        .then(() => deps.jobs.putIf(snapshot, ['processing']))
        .then(() => undefined)
        .catch((err) => deps.log?.(`progress of job ${snapshot.job_id}`, err));
    };

    const startedAt = new Date(job.created_at);
    const expiresAt = retentionEnd('pdfOutputs', deps.clock.now());
    const zip = opPlan.outputs.length > 1 ? new ZipBuilder() : null;
    const rows: JobFileRow[] = [];
    const inputName = inputNames(request);
    const result = await produce(opPlan, {
      limits: JOB_LIMITS,
      deadline,
      onProgress,
      onFile: async (file) => {
        const key = pdfopKeys.file(current.account_id, current.job_id, file.index);
        await deps.blobs.put(key, file.bytes, PDF);
        zip?.add(file.name, file.bytes, startedAt);
        rows.push(successRow({ input: inputName, file, key, expiresAt }));
      },
    });
    await progress;
    let output;
    if (zip) {
      const { parts, size } = await zip.finish();
      const key = pdfopKeys.zip(job.account_id, job.job_id);
      await deps.blobs.putParts(key, parts, ZIP);
      output = storedOutput(key, zipName(basenameOf(request.inputs[0].filename)), ZIP, size, deps.clock.now());
    } else {
      output = storedOutput(rows[0].key!, rows[0].output!, PDF, rows[0].size_bytes ?? 0, deps.clock.now());
    }
    await deps.files.deleteAll(job.job_id);
    await deps.files.putAll(job.job_id, rows);

    const at = deps.clock.now();
    const done = completed({ ...current, status: 'processing' }, at, {
      pages: result.files.reduce((n, f) => n + f.pages, 0),
      output,
      outputs_produced: result.files.length,
      output_count: result.files.length,
      processed_count: opPlan.pagesProcessed,
    });
    const event = pdfopCompletedEvent(done, result.warnings, at);
    await deps.billing.charge(
      {
        account_id: job.account_id,
        job_id: job.job_id,
        unit: 'pdfop',
        operation: 'pdf_operation',
        amount_micros: operationCharge(plan, opPlan.pagesProcessed),
        pdf_count: result.files.length,
      },
      { job: done, events: [event] },
      account,
    );
    await releaseJob(deps, done, request);
    return { job_id: done.job_id, status: 'completed' };
  } catch (err) {
    await progress;
    if (err instanceof PdfDeadlineExceeded) {
      const message = `The job did not finish within ${Math.round((deps.timeoutSeconds ?? JOB_LIMITS.timeoutSeconds) / 60)} minutes; nothing was charged. Split the work into smaller jobs.`;
      return { job_id: job.job_id, status: (await finishFailed(deps, job, request, 'PDFOP_TIMEOUT', message, null, { timeout: true })).status };
    }
    if (isServiceError(err)) {
      const culprit = typeof err.details.filename === 'string' ? err.details.filename : null;
      return { job_id: job.job_id, status: (await finishFailed(deps, job, request, err.code, err.message, culprit)).status };
    }
    // Storage or database trouble. The charge-and-complete write may have committed with its reply lost: a completed
    // job keeps its outputs (and its charge). Otherwise partial outputs go, unless the job cannot be read now, and the
    // workflow retries.
    const outcome = await completionCommitted(deps.jobs, job.job_id);
    if (outcome === 'committed') {
      await releaseJob(deps, job, request);
      return { job_id: job.job_id, status: 'completed' };
    }
    if (outcome === 'not_committed') await removeOutputs(deps, job).catch(() => undefined);
    throw new TransientTaskError(`processing job ${job.job_id} failed: ${(err as Error)?.message ?? err}`, { cause: err });
  }
}

/** Task 3 (the ASL's Catch): the processing state failed for good (retries exhausted, or timed out). */
export async function recordPdfJobFailure(deps: PdfJobDeps, input: TaskInput): Promise<{ job_id: string; status: string }> {
  const job = await deps.jobs.get(input.job_id);
  if (!job) return { job_id: input.job_id, status: 'missing' };
  if (FINISHED_STATUSES.has(job.status)) {
    // A retry (or the start sweeper's call) after the job was failed but its failure path stopped half-way: the
    // release again (done once; the uploads stay, as a job failed at submission promised), then the watch goes.
    if (job.status === 'failed' || job.status === 'timeout') {
      await releaseJob(deps, job, null, { keepUploads: true });
    }
    return { job_id: job.job_id, status: job.status };
  }
  const request = await loadRequest(deps, job).catch(() => null);
  const ranOutOfTime = isTimeoutError(input.error);
  const final = await finishFailed(
    deps,
    job,
    request,
    ranOutOfTime ? 'PDFOP_TIMEOUT' : 'INTERNAL_SERVER_ERROR',
    ranOutOfTime ? 'The job ran out of time; nothing was charged. Split the work into smaller jobs.' : 'The job failed on our side; nothing was charged. Submit it again.',
    null,
    { timeout: ranOutOfTime },
  );
  return { job_id: final.job_id, status: final.status };
}

/** POST /pdf/upload-url body: the exact size in bytes. */
export const pdfUploadUrlBodySchema = z.object({
  content_length_bytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_UPLOAD_BYTES)
    .meta({ description: `The exact size of the PDF in bytes, 1 to ${MAX_UPLOAD_BYTES} (150 MB); the PUT must send exactly this many bytes.` }),
});

/** The announced size: missing or not a whole number is 400 INVALID_PARAMETER, over 150 MB 400 PDF_INPUT_TOO_LARGE. */
export function parseUploadSize(body: unknown): number {
  return parseUploadLength(pdfUploadUrlBodySchema, body, 'PDF', MAX_UPLOAD_BYTES, (size) =>
    new ServiceError('PDF_INPUT_TOO_LARGE', `The file is ${size} bytes; uploads may be at most ${MAX_UPLOAD_BYTES} bytes (150 MB). Split the PDF into smaller files first.`, { size_bytes: size, max_bytes: MAX_UPLOAD_BYTES }),
  );
}

/** POST /pdf/upload-url: a presigned PUT for exactly `size` bytes of application/pdf, valid 15 minutes. */
export async function createPdfUploadUrl(deps: { blobs: BlobStore; clock: Clock }, account: Account, size: number) {
  return presignUpload(deps, newUploadKey(account.account_id, 'pdf'), { size, contentType: PDF, maxBytes: MAX_UPLOAD_BYTES });
}
