/**
 * POST /pdf/merge and /pdf/split: a synchronous merge/split job, in the shape of the quick job.
 * Inputs are opened and the outputs planned (every refusal happens here, before any work and without a
 * job record), credits are pre-checked for the actual band, the files are produced within 25 seconds,
 * stored when needed, and then the charge and the completed job are written in one transaction.
 * A failure after the work started (timeout, storage, charge) is recorded as a failed job, charges
 * nothing and leaves no stored files or rows behind. Like background merge/split jobs, the job emits `job.completed`
 * (in the completing write) or `job.failed` (timeouts included) for the account's webhooks.
 */
import type { Account } from '../accounts/account';
import { type Billing, assertCanCover, chargeCompletion } from '../billing/charging';
import type { Plan } from '../billing/plans';
import type { Clock } from '../clock';
import { ServiceError, isServiceError } from '../errors';
import { newId } from '../ids';
import type { JobFileRepository, JobFileRow } from '../jobs/files';
import { type Job, completed, failed, newJob, timedOut } from '../jobs/job';
import type { BlobStore, JobRepository } from '../jobs/ports';
import { retentionEnd } from '../jobs/storage-layout';
import { Deadline, PdfDeadlineExceeded } from '../pdf/errors';
import type { PdfWarning } from '../pdf/features';
import { basenameOf } from '../pdf/filenames';
import { INSTANT_LIMITS, MAX_INLINE_PDF_BYTES, type PdfToolLimits } from '../pdf/limits';
import { type OperationPlan, type ProducedFile, openInputs, planMerge, planSplit, produce } from '../pdf/operations';
import { operationCharge } from '../pdf/pricing';
import type { MergeRequest, SplitRequest } from './requests';
import { PDF, ZIP, ZipBuilder, pdfopCompletedEvent, pdfopFailedEvent, pdfopKeys, storedOutput, storedResult, successRow, zipName } from './results';

export interface PdfOpDeps {
  jobs: JobRepository;
  files: JobFileRepository;
  blobs: BlobStore;
  billing: Billing;
  clock: Clock;
  /** Overrides the 25 s instant limit (tests); errors report the limit in force. */
  timeoutSeconds?: number;
  log?: (message: string, err: unknown) => void;
}

export type InstantInput = {
  account: Account;
  plan: Plan;
  /** Time the request already took before the operation started (reading the body, the plan): the 25 s run from its arrival. */
  spentMs?: number;
} & ({ operation: 'merge'; request: MergeRequest } | { operation: 'split'; request: SplitRequest });

export interface InstantResult {
  job: Job;
  /** The single PDF answered in the response body (not stored). */
  direct: ProducedFile | null;
  /** The stored-result JSON, when the result is stored. */
  stored: Record<string, unknown> | null;
  warnings: PdfWarning[];
}

/**
 * Opens the inputs and plans the outputs: every refusal of a well-formed request happens here. PdfDeadlineExceeded
 * when reading the inputs passes `deadline`.
 */
export function planInstant(input: InstantInput, limits: PdfToolLimits = INSTANT_LIMITS, deadline?: Deadline): OperationPlan {
  if (input.operation === 'merge') return planMerge(input.request, openInputs(input.request.inputs, deadline), limits);
  const [source] = openInputs([input.request.input], deadline);
  return planSplit(input.request, source, limits);
}

export async function runInstantOp(deps: PdfOpDeps, input: InstantInput): Promise<InstantResult> {
  const { account, plan } = input;
  const started = deps.clock.now();
  const timeoutSeconds = deps.timeoutSeconds ?? INSTANT_LIMITS.timeoutSeconds;
  const limitMs = timeoutSeconds * 1000;
  const deadline = Deadline.in(limitMs - Math.min(Math.max(0, input.spentMs ?? 0), limitMs));

  const inputName = input.operation === 'merge' ? input.request.inputs.map((i) => i.filename).join(', ') : input.request.input.filename;
  const jobOf = (opPlan: OperationPlan | null): Job => ({
    ...newJob({ job_id: newId('job'), account_id: account.account_id, job_type: 'pdfop', status: 'processing', now: started }),
    started_at: started.toISOString(),
    operation: input.operation,
    split_mode: input.operation === 'split' ? input.request.split.mode : null,
    input_files: input.operation === 'merge' ? input.request.inputs.length : 1,
    outputs_produced: 0,
    // Unknown when the inputs could not be read in time.
    ...(opPlan ? { input_pages: opPlan.inputPages, output_count: opPlan.outputs.length } : {}),
  });
  const timeout = async (job: Job, cleanUp: () => Promise<void> = async () => {}) => {
    await cleanUp();
    const at = deps.clock.now();
    const final = timedOut(job, at, 'PDFOP_TIMEOUT', `The operation took longer than ${timeoutSeconds} seconds.`, { failed_input: inputName });
    await deps.jobs.put(final, [pdfopFailedEvent(final, at)]).catch((err) => deps.log?.(`could not record failed job ${job.job_id}`, err));
    return new ServiceError('PDFOP_TIMEOUT', `The ${input.operation} did not finish within ${timeoutSeconds} seconds. Upload the files (POST /pdf/upload-url) and run it as a background job (POST /pdf/jobs).`, {
      job_id: job.job_id,
      timeout_seconds: timeoutSeconds,
      suggestion: 'use_pdf_jobs_endpoint',
    });
  };

  let opPlan: OperationPlan;
  try {
    opPlan = planInstant(input, INSTANT_LIMITS, deadline);
  } catch (err) {
    // Inputs too slow to read: a run that timed out (recorded, not charged), unlike a refusal, which has no job.
    if (err instanceof PdfDeadlineExceeded) throw await timeout(jobOf(null));
    throw err;
  }
  const amount = operationCharge(plan, opPlan.pagesProcessed);
  assertCanCover(account, amount, started);

  const job = jobOf(opPlan);
  const written: string[] = [];
  const cleanUp = async () => {
    await Promise.all(written.map((key) => deps.blobs.delete(key).catch((err) => deps.log?.(`could not remove ${key} of failed job ${job.job_id}`, err))));
    await deps.files.deleteAll(job.job_id).catch((err) => deps.log?.(`could not remove file rows of failed job ${job.job_id}`, err));
  };
  const recordFailure = async (code: string, message: string) => {
    await cleanUp();
    const at = deps.clock.now();
    const final = failed(job, at, code, message, { failed_input: inputName });
    await deps.jobs.put(final, [pdfopFailedEvent(final, at)]).catch((err) => deps.log?.(`could not record failed job ${job.job_id}`, err));
  };

  let result;
  try {
    result = await produce(opPlan, { limits: INSTANT_LIMITS, deadline });
  } catch (err) {
    if (err instanceof PdfDeadlineExceeded) throw await timeout(job, cleanUp);
    throw err; // a refusal found while producing (OUTPUT_TOO_LARGE, a damaged object): no job to record
  }

  const files = result.files;
  const direct = files.length === 1 && !input.request.store && files[0].size_bytes < MAX_INLINE_PDF_BYTES ? files[0] : null;
  let rows: JobFileRow[];
  let output: Job['output'] = null;
  try {
    const expiresAt = retentionEnd('pdfOutputs', started);
    if (direct) {
      rows = [successRow({ input: inputName, file: direct, key: null, expiresAt: null })];
    } else {
      rows = [];
      const zip = files.length > 1 ? new ZipBuilder() : null;
      for (const file of files) {
        // Storing many large files takes time too: the limit covers the whole request, not only producing them.
        deadline.check();
        const key = pdfopKeys.file(account.account_id, job.job_id, file.index);
        written.push(key);
        await deps.blobs.put(key, file.bytes, PDF);
        zip?.add(file.name, file.bytes, started);
        rows.push(successRow({ input: inputName, file, key, expiresAt }));
      }
      if (zip) {
        deadline.check();
        const { parts, size } = await zip.finish();
        const key = pdfopKeys.zip(account.account_id, job.job_id);
        written.push(key);
        await deps.blobs.putParts(key, parts, ZIP);
        const base = input.operation === 'split' ? basenameOf(input.request.input.filename) : 'merged';
        output = storedOutput(key, zipName(base), ZIP, size, started);
      } else {
        output = storedOutput(rows[0].key!, files[0].name, PDF, files[0].size_bytes, started);
      }
    }
    await deps.files.putAll(job.job_id, rows);
    // Past the limit now, the answer would come too late to be wanted: nothing is kept or charged.
    deadline.check();
  } catch (err) {
    if (err instanceof PdfDeadlineExceeded) throw await timeout(job, cleanUp);
    deps.log?.(`storing outputs of job ${job.job_id} failed`, err);
    await recordFailure('PDF_GENERATION_FAILED', 'The output could not be stored.');
    throw new ServiceError('PDF_GENERATION_FAILED', 'The output could not be stored. Nothing was charged; retry the request.', { job_id: job.job_id });
  }

  const at = deps.clock.now();
  const done = completed(job, at, {
    pages: files.reduce((n, f) => n + f.pages, 0),
    output,
    outputs_produced: files.length,
  });
  const charge = { account_id: account.account_id, job_id: job.job_id, unit: 'pdfop', operation: 'pdf_operation', amount_micros: amount, pdf_count: files.length } as const;
  await chargeCompletion(deps, charge, { job: done, events: [pdfopCompletedEvent(done, result.warnings, at)] }, account, (err) =>
    recordFailure(isServiceError(err) ? err.code : 'INTERNAL_SERVER_ERROR', isServiceError(err) ? err.message : 'Charging failed.'),
  );

  return {
    job: done,
    direct,
    stored: direct ? null : await storedResult(deps, done, rows, result.warnings),
    warnings: result.warnings,
  };
}
