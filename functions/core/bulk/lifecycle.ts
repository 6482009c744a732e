/**
 * How a bulk job ends, whatever the path: its slot is given back and everything staged for it (the uploaded
 * ZIP, the job's copy of it, the request, the bundle index, the PDFs made so far) is deleted. A job-level failure also
 * removes any output and rows, so nothing half-written survives, and writes `bulk.job.failed` with the job.
 */
import { jobEvent } from '../events/events';
import type { JobFileRow } from '../jobs/files';
import { type Job, failed } from '../jobs/job';
import { releaseWorkflowJob } from '../workflows/release';
import { BULK_SLOT_KIND, type BulkDeps } from './deps';
import { type StoredBulkRequest, bulkKeys, loadIndex } from './storage';

type Deps = Pick<BulkDeps, 'jobs' | 'files' | 'blobs' | 'slots' | 'commitments' | 'clock' | 'log'>;
type FailDeps = Deps & Pick<BulkDeps, 'billing' | 'progress'>;

export async function loadStoredRequest(deps: Pick<Deps, 'blobs'>, job: Job): Promise<StoredBulkRequest | null> {
  const raw = await deps.blobs.get(bulkKeys.request(job.account_id, job.job_id));
  return raw ? (JSON.parse(raw.toString('utf8')) as StoredBulkRequest) : null;
}

/**
 * Gives back the slot and the credit commitment and deletes the staged inputs of a job that has ended (the uploaded
 * ZIP too: it was the caller's input for this job only). Never throws.
 */
export async function releaseJob(deps: Deps, job: Job, { keepUpload = false, keepWatch = false }: { keepUpload?: boolean; keepWatch?: boolean } = {}): Promise<void> {
  const { account_id: acct, job_id: id } = job;
  const index = await loadIndex(deps.blobs, acct, id).catch(() => null);
  const staged = [bulkKeys.request(acct, id), bulkKeys.index(acct, id), bulkKeys.bundle(acct, id)];
  if (index) for (const f of index.files) if (f.entry) staged.push(bulkKeys.pdf(acct, id, f.index));
  await releaseWorkflowJob(deps, job, { slotKind: BULK_SLOT_KIND, staged, inputs: job.input_key ? [job.input_key] : [], keepUploads: keepUpload, keepWatch });
}

/**
 * Ends a queued or processing job as failed with a job-level code: no output, no rows, nothing charged (files
 * already paid for when a later step failed for good are refunded), `bulk.job.failed`, slot and staged inputs
 * released. Returns the job as it ends up (another writer may have finished it first, e.g. a cancel of a queued job).
 * The write is conditional on the cancel request it saw (as Finish's is), so a cancel answered 202 meanwhile is never
 * overwritten: the job keeps `cancel_requested`, and with `honourCancel` (a refusal found before any file was
 * converted or charged, in Prepare) it ends `cancelled` with `bulk.job.cancelled`, as the 202 promised; the files
 * it had counted (`cancelledInputs`) are then listed as skipped with CANCELLED, as a cancel's rows always are.
 */
export async function failJob(
  deps: FailDeps,
  job: Job,
  code: string,
  message: string,
  changes: Partial<Job> = {},
  { honourCancel = false, cancelledInputs = [], ...release }: { keepUpload?: boolean; honourCancel?: boolean; cancelledInputs?: string[] } = {},
): Promise<Job> {
  let seen = job;
  let final: Job | null = null;
  for (let round = 0; round < 3 && !final; round++) {
    const at = deps.clock.now();
    const cancelSeen = !!seen.cancel_requested;
    const ending = { success_count: 0, failure_count: (changes.file_count !== undefined ? changes.file_count : seen.file_count) ?? 0, pages_total: 0, output: null, lease_until: null, ...changes };
    const next: Job =
      honourCancel && cancelSeen
        ? {
            ...seen,
            ...ending,
            failure_count: cancelledInputs.length,
            processed_count: cancelledInputs.length,
            status: 'cancelled',
            completed_at: at.toISOString(),
            error_code: null,
            error_message: 'Cancelled on request before any file was converted; nothing was charged.',
          }
        : failed(seen, at, code, message, ending);
    // Every bulk.job.* payload has the same fields, whichever path ended the job (Finish, cancel, or here).
    const files_url = `/jobs/${job.job_id}/files`;
    const event =
      next.status === 'cancelled'
        ? jobEvent('bulk.job.cancelled', next, at, { processed_count: next.processed_count ?? 0, error_message: next.error_message, files_url })
        : jobEvent('bulk.job.failed', next, at, { error_message: message, processed_count: next.processed_count ?? 0, files_url });
    // Only a job still running ends here, and only then are its output and rows removed (one finished meanwhile keeps them).
    const written = seen.status === 'queued' ? await deps.jobs.putIf(next, ['queued'], [event]) : await deps.progress.finishJob(next, [event], cancelSeen);
    if (written) {
      final = next;
      break;
    }
    const current = await deps.jobs.get(job.job_id);
    // Finished by another writer (a cancel of a queued job, a Finish): left as it is.
    if (!current || (current.status !== 'queued' && current.status !== 'processing')) return current ?? next;
    // A cancel request landed (or the job moved from queued to processing): decided again from the job as it is now.
    seen = current;
  }
  if (!final) throw new Error(`the failure of bulk job ${job.job_id} kept conflicting with other writes`);
  // The job has failed: whatever fails below, its slot and commitment are given back, and the start sweeper's watch
  // stays until the refund went through (the sweeper calls the failure recorder again until then; see
  // `recordBulkJobFailure`). Dropped first, a refund that failed (or a sweeper stopped at its time limit) was never retried.
  try {
    await deps.blobs.delete(bulkKeys.output(job.account_id, job.job_id)).catch((err) => deps.log?.(`deleting the output of ${job.job_id}`, err));
    await deps.files.deleteAll(job.job_id);
    if (final.status === 'cancelled' && cancelledInputs.length) await deps.files.putAll(job.job_id, cancelledInputs.map(cancelledRow));
  } finally {
    await releaseJob(deps, final, { ...release, keepWatch: true });
  }
  await refundFailedJob(deps, final);
  await deps.jobs.startSent(job.job_id).catch((err) => deps.log?.(`ending the watch of bulk job ${job.job_id}`, err));
  return final;
}

/** How a file the cancel stopped before it started is listed (`CANCELLED` rows are skipped, never billed). */
export const CANCELLED_SKIP = { status: 'skipped', error_code: 'CANCELLED', error_message: 'Not converted: the job was cancelled before this file started.' } as const;

function cancelledRow(input: string, index: number): JobFileRow {
  return {
    index,
    input,
    output: null,
    pages: 0,
    ...CANCELLED_SKIP,
    blocked_requests: 0,
    render_timeout: false,
    missing_assets: 0,
    key: null,
  };
}

/**
 * Gives back what a failed job was charged (Finish charges the files before it writes the output, and a Finish still
 * running when the workflow gave up may charge after the job was failed). Failing here leaves the charges for the
 * next caller (every charge is refunded once), so the error is raised: the workflow retries its failure step.
 */
export async function refundFailedJob(deps: Pick<FailDeps, 'billing' | 'log'>, job: Job): Promise<void> {
  const refunded = await deps.billing.refundJob(job.account_id, job.job_id);
  if (refunded > 0) deps.log?.(`refunded ${refunded} micro-USD to ${job.account_id} for failed bulk job ${job.job_id}`, undefined);
}
