import { ServiceError } from '../errors';
import { watchWorkflowJob } from '../jobs/starts';
import { readBack } from '../lost-replies';
import type { WorkflowJobDeps } from './job-deps';

/**
 * Starts the workflow that runs a job just recorded as queued (with its start: `jobs.put(job, [], { via: 'workflow',
 * workflow })`), then turns the start's record into the watch the start sweeper keeps on the execution
 * (`watchWorkflowJob`). The execution is named after the job, so a repeated start — the start sweeper's — is not a
 * second run. If it cannot start, `recordFailure` ends the job (freeing what it holds) and the caller gets 500
 * SERVICE_UNAVAILABLE: nothing ran, so nothing was charged. If that fails too and the job is still queued, the start
 * sweeper will start it: the submission is accepted.
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
    const recorded = await recordFailure().then(
      () => true,
      (recordErr) => (deps.log?.(`could not record the failed start of job ${job.job_id}`, recordErr), false),
    );
    // Not recorded, the job stays queued with its start record, and the start sweeper starts it within minutes: it
    // will run, so it is accepted (answered 500, the client's retry would have run a second one).
    if (!recorded && (await readBack(() => deps.jobs.get(job.job_id)))?.status === 'queued') return;
    throw new ServiceError('SERVICE_UNAVAILABLE', 'The job could not be started. Nothing was charged and uploads are kept; retry shortly.', { job_id: job.job_id });
  }
  await watchWorkflowJob(deps, job.job_id, job.created_at);
}
