import { readyServices } from '../../composition';
import { sendUnsentStarts } from '../../core/jobs/starts';

/**
 * The start sweeper (an EventBridge schedule in AWS, a timer in the local stack, both from functions/schedules.ts):
 * a job stored as queued whose start (render-queue message, workflow execution) was not confirmed within two
 * minutes is started again if it is still queued.
 */
export async function handler(): Promise<{ sent: number; cleared: number; failed: number }> {
  const svc = await readyServices();
  return sendUnsentStarts({ jobs: svc.jobs, renderQueue: svc.renderQueue, workflows: svc.workflows, clock: svc.clock, log: (m, err) => svc.log.warn(m, err) });
}
