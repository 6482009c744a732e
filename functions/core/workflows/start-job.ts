import { ServiceError } from '../errors';
import { watchWorkflowJob } from '../jobs/starts';
import type { WorkflowJobDeps } from './job-deps';

/**
 * Starts the workflow that runs a job just recorded as queued (with its start: `jobs.put(job, [], { via: 'workflow',
 * workflow })`), then turns the start's record into the watch the start sweeper keeps on the execution
 * (`watchWorkflowJob`). The execution is named after the job, so a repeated start — the start sweeper's — is not a
 * second run. If it cannot start, `recordFailure` ends the job (freeing what it holds) and the caller gets 500
 * SERVICE_UNAVAILABLE: nothing ran, so nothing was charged.
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
    await recordFailure();
    throw new ServiceError('SERVICE_UNAVAILABLE', 'The job could not be started. Nothing was charged and uploads are kept; retry shortly.', { job_id: job.job_id });
  }
  await watchWorkflowJob(deps, job.job_id, job.created_at);
}
