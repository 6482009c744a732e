/**
 * `POST /jobs/{job_id}/cancel`. A queued bulk job ends at once (`cancelled`, nothing charged); a processing one is
 * asked to stop (`processing` with `cancel_requested: true`; the route answers 202 for it): it stops before its next
 * file, keeps and charges the PDFs made so far and skips the rest with CANCELLED. A finished job, and any job type
 * that is not cancellable (mail merge campaigns will join bulk here), is 409. Cancelling twice is harmless.
 */
import { ServiceError } from '../errors';
import { jobEvent } from '../events/events';
import type { Job } from '../jobs/job';
import type { BulkDeps } from './deps';
import { releaseJob } from './lifecycle';

/** `cancelled` when the job has ended; `processing` while the cancel is under way. */
export interface CancelOutcome {
  job_id: string;
  status: 'cancelled' | 'processing';
  cancel_requested: true;
  message: string;
}

function notCancellable(job: Job, reason: 'job_type' | 'finished'): ServiceError {
  const message =
    reason === 'job_type'
      ? `Job ${job.job_id} is a ${job.job_type} job; only bulk jobs and mail merge campaigns can be cancelled.`
      : `Job ${job.job_id} has already finished (${job.status}); there is nothing to cancel. Its results stay available.`;
  return new ServiceError('JOB_NOT_CANCELLABLE', message, { job_id: job.job_id, job_type: job.job_type, status: job.status, reason });
}

const cancelled = (job: Job): CancelOutcome => ({
  job_id: job.job_id,
  status: 'cancelled',
  cancel_requested: true,
  message: 'The job is cancelled. Nothing was charged for files it did not convert.',
});

const requested = (job: Job): CancelOutcome => ({
  job_id: job.job_id,
  status: 'processing',
  cancel_requested: true,
  message: `The job stops before its next file. PDFs already made stay in its output and are charged; the other files are skipped. Follow it with GET /jobs/${job.job_id}.`,
});

export async function cancelJob(deps: Pick<BulkDeps, 'jobs' | 'files' | 'blobs' | 'slots' | 'commitments' | 'clock' | 'progress' | 'log'>, job: Job): Promise<CancelOutcome> {
  if (job.job_type !== 'bulk') throw notCancellable(job, 'job_type');
  // Three rounds at most: a job that moved on between reading and writing is read and looked at again, up to twice.
  for (let round = 0; round < 3; round++) {
    if (job.status === 'cancelled') return cancelled(job);
    if (job.status === 'queued') {
      const at = deps.clock.now();
      const final: Job = { ...job, status: 'cancelled', cancel_requested: true, completed_at: at.toISOString(), failure_count: 0, success_count: 0 };
      const event = jobEvent('bulk.job.cancelled', final, at, { processed_count: 0, error_message: null, files_url: `/jobs/${job.job_id}/files` });
      if (await deps.jobs.putIf(final, ['queued'], [event])) {
        await releaseJob(deps, final);
        return cancelled(final);
      }
    } else if (job.status === 'processing') {
      if (job.cancel_requested || (await deps.progress.requestCancel(job.job_id))) return requested(job);
    } else {
      throw notCancellable(job, 'finished');
    }
    const current = await deps.jobs.get(job.job_id);
    if (!current) break;
    job = current;
  }
  throw new ServiceError('CONFLICT', `Job ${job.job_id} changed while it was being cancelled; retry.`, { job_id: job.job_id });
}
