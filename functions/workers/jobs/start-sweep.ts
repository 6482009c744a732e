import { readyServices } from '../../composition';
import { LONGJOB_TIMEOUT_SECONDS, endAbandonedLongJob } from '../../core/conversion/longjob';
import type { Job } from '../../core/jobs/job';
import { sendUnsentStarts } from '../../core/jobs/starts';

/**
 * The start sweeper (an EventBridge schedule in AWS, a timer in the local stack, both from functions/schedules.ts):
 * a job stored as queued whose start (render-queue message, workflow execution) was not confirmed within two
 * minutes is started again if it is still queued; a long job still processing two minutes after its worker's lease
 * ran out (the worker was killed) is ended as a timeout.
 */
export async function handler(): Promise<{ sent: number; cleared: number; ended: number; failed: number }> {
  const svc = await readyServices();
  const log = (m: string, err?: unknown) => svc.log.warn(m, err);
  const limitMs = (svc.config.longjobTimeoutSeconds ?? LONGJOB_TIMEOUT_SECONDS) * 1000;
  const endAbandoned = (job: Job) => endAbandonedLongJob({ jobs: svc.jobs, clock: svc.clock, accounts: svc.accounts, mailer: svc.mailer, log }, job, limitMs);
  return sendUnsentStarts({ jobs: svc.jobs, renderQueue: svc.renderQueue, workflows: svc.workflows, clock: svc.clock, endAbandoned, log });
}
