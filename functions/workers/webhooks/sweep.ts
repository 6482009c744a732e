import { services } from '../../composition';
import { sweepOutbox } from '../../core/webhooks/dispatch';

/**
 * The outbox sweeper (an EventBridge schedule in AWS, a timer in the local stack, both from
 * functions/schedules.ts): events still pending two minutes after they were written go to the dispatcher again.
 */
export async function handler(): Promise<{ sent: number }> {
  const svc = services();
  const sent = await sweepOutbox({ outbox: svc.outbox, queue: svc.webhookQueue, clock: svc.clock });
  if (sent > 0) svc.log.warn(`outbox sweeper re-sent ${sent} pending event(s) to the webhook dispatcher`);
  return { sent };
}
