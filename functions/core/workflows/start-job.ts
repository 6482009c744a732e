import { ServiceError } from '../errors';
import { watchWorkflowJob } from '../jobs/starts';
import { readBack } from '../lost-replies';
import type { WorkflowJobDeps } from './job-deps';

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
