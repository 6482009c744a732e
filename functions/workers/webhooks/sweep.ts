import { readyServices } from '../../composition';
import { sweepOutbox } from '../../core/webhooks/dispatch';

/**
 * The outbox sweeper (an EventBridge schedule in AWS, a timer in the local stack, both from
 * functions/schedules.ts): events still pending two minutes after they were written go to the dispatcher again;
 * those pending for a day are given up.
 */
export async function handler(): Promise<{ sent: number; abandoned: number }> {
  const svc = await readyServices();
  const result = await sweepOutbox({ outbox: svc.outbox, queue: svc.webhookQueue, clock: svc.clock, log: (m) => svc.log.warn(m) });
  if (result.sent > 0) svc.log.warn(`outbox sweeper re-sent ${result.sent} pending event(s) to the webhook dispatcher`);
  return result;
}
