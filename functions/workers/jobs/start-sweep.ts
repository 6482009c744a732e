import { type Services, readyServices } from '../../composition';
import { BULK_WORKFLOW } from '../../core/bulk/deps';
import { recordBulkJobFailure } from '../../core/bulk/finish';
import { LONGJOB_TIMEOUT_SECONDS, endAbandonedLongJob } from '../../core/conversion/longjob';
import type { Job } from '../../core/jobs/job';
import { type SweepResult, sweepStartRecords } from '../../core/jobs/starts';
import { PDFOP_WORKFLOW, recordPdfJobFailure } from '../../core/pdfops/background';
import { type FailureTaskInput, strandedJobFailure } from '../../core/workflows/ended';
import { bulkDeps, pdfJobDeps } from '../../job-deps';

/**
 * Each workflow's failure recorder (its RecordFailure task's logic), for a job whose execution ended without
 * finishing it. Every workflow of functions/workflows.ts has one (a unit test holds the two lists together).
 */
export const STRANDED_JOB_RECORDERS: Record<string, (svc: Services, task: FailureTaskInput) => Promise<unknown>> = {
  [BULK_WORKFLOW]: (svc, task) => recordBulkJobFailure(bulkDeps(svc), task),
  [PDFOP_WORKFLOW]: (svc, task) => recordPdfJobFailure(pdfJobDeps(svc), task),
};

/**
 * The start sweeper (an EventBridge schedule in AWS, a timer in the local stack, both from functions/schedules.ts):
 * a job stored as queued whose start (render-queue message, workflow execution) was not confirmed within two
 * minutes is started again if it is still queued; a long job still processing two minutes after its worker's lease
 * ran out (the worker was killed) is ended as a timeout; a bulk or merge/split job whose workflow execution ended
 * without finishing it is ended by that workflow's failure recorder.
 */
export async function handler(): Promise<SweepResult> {
  const svc = await readyServices();
  const log = (m: string, err?: unknown) => svc.log.warn(m, err);
  const limitMs = (svc.config.longjobTimeoutSeconds ?? LONGJOB_TIMEOUT_SECONDS) * 1000;
  const endAbandoned = (job: Job) => endAbandonedLongJob({ jobs: svc.jobs, clock: svc.clock, accounts: svc.accounts, mailer: svc.mailer, log }, job, limitMs);
  const endStranded = async (job: Job, workflow: string, status: string | null) => {
    const record = STRANDED_JOB_RECORDERS[workflow];
    if (!record) throw new Error(`no failure recorder for the ${workflow} workflow`);
    await record(svc, strandedJobFailure(job, status));
  };
  return sweepStartRecords({ jobs: svc.jobs, renderQueue: svc.renderQueue, workflows: svc.workflows, clock: svc.clock, endAbandoned, endStranded, log });
}
