import { ServiceError } from '../errors';
import type { Job } from '../jobs/job';
import { jobWritten, watchWorkflowJob } from '../jobs/starts';
import { readBack } from '../lost-replies';
import type { WorkflowJobDeps } from './job-deps';

/**
 * Stores a submitted job: the files its workflow reads (its request, an inline input), then the job, queued, with its
 * start record. A write that failed and did not go through leaves nothing behind: the files are deleted and the slot
 * (and any commitment) the submission took are given back before the error goes on. One that went through with its
 * reply lost goes on, logged.
 */
export async function storeQueuedJob(
  deps: Pick<WorkflowJobDeps, 'blobs' | 'jobs' | 'slots' | 'commitments' | 'log'>,
  job: Job,
  stored: { workflow: string; slotKind: string; files: { key: string; body: Uint8Array; contentType: string }[] },
): Promise<void> {
  const written: string[] = [];
  try {
    for (const file of stored.files) {
      // Counted before the put: one whose reply was lost may have stored it all the same.
      written.push(file.key);
      await deps.blobs.put(file.key, file.body, file.contentType);
    }
    await deps.jobs.put(job, [], { via: 'workflow', workflow: stored.workflow });
  } catch (err) {
    if (!(await jobWritten(deps.jobs, job.job_id))) {
      await Promise.all(written.map((key) => deps.blobs.delete(key).catch(() => undefined)));
      await deps.slots.release({ accountId: job.account_id, kind: stored.slotKind, jobId: job.job_id });
      await deps.commitments.release(job.account_id, job.job_id).catch((e) => deps.log?.(`releasing the commitment of job ${job.job_id}`, e));
      throw err;
    }
    deps.log?.(`the write of job ${job.job_id} went through although it failed; the job goes on`, err);
  }
}

/**
 * Starts the workflow that runs a job just recorded as queued (with its start: `jobs.put(job, [], { via: 'workflow',
 * workflow })`), then turns the start's record into the watch the start sweeper keeps on the execution
 * (`watchWorkflowJob`). The execution is named after the job, so a repeated start — the start sweeper's — is not a
 * second run. If it cannot start, `recordFailure` ends the job (freeing what it holds) and the caller gets 500
 * SERVICE_UNAVAILABLE: nothing ran, so nothing was charged. A job that goes on all the same is accepted: one whose
 * failure could not be recorded (still queued: the start sweeper starts it), or one the execution took first (the
 * start went through with its reply lost).
 */
export async function startJobWorkflow(
  deps: Pick<WorkflowJobDeps, 'workflows' | 'jobs' | 'clock' | 'log'>,
  workflow: string,
  job: { job_id: string; account_id: string; created_at: string },
  recordFailure: () => Promise<unknown>,
): Promise<void> {
  try {
    await deps.workflows.start(workflow, { job_id: job.job_id, account_id: job.account_id }, { name: job.job_id });
  } catch (err) {
    deps.log?.(`could not start the ${workflow} workflow for job ${job.job_id}`, err);
    await recordFailure().catch((recordErr) => deps.log?.(`could not record the failed start of job ${job.job_id}`, recordErr));
    // Unless the job now reads as failed by that record, it goes on, and is accepted (answered 500, the client's
    // retry would run it twice): still queued (the failure could not be recorded), the start sweeper starts it within
    // minutes; running or ended, the start went through with its reply lost, and the execution took the job first.
    const now = await readBack(() => deps.jobs.get(job.job_id));
    if (now && !(now.status === 'failed' && now.error_code === 'SERVICE_UNAVAILABLE')) {
      deps.log?.(`job ${job.job_id} goes on although its start failed (${now.status})`, err);
      return;
    }
    throw new ServiceError('SERVICE_UNAVAILABLE', 'The job could not be started. Nothing was charged and uploads are kept; retry shortly.', { job_id: job.job_id });
  }
  await watchWorkflowJob(deps, job.job_id, job.created_at);
}
