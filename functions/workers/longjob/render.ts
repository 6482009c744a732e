import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { LONGJOB_TIMEOUT_SECONDS, abandonLongJob, processLongJob } from '../../core/conversion/longjob';
import { readyServices } from '../../composition';
import type { RenderJobMessage } from '../../core/jobs/queue';
import { queueDef } from '../../queues';
import { retryLater } from '../retry-later';

const RENDER_QUEUE = queueDef('render');
/** Deliveries after which an unexpected failure gives the job up: the queue's redrive limit. */
export const MAX_RECEIVES = RENDER_QUEUE.maxReceiveCount;
/** Time kept back from the Lambda deadline to record the outcome. */
const FINISH_MARGIN_MS = 30_000;

/**
 * The render worker (SQS-triggered in AWS, the in-process queue locally). Each message names a long job;
 * a message that fails unexpectedly is reported back for redelivery, and on its last delivery the job is
 * marked failed so it never stays queued or processing.
 */
export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const svc = await readyServices();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    let jobId = '';
    try {
      const message = JSON.parse(record.body) as Partial<RenderJobMessage>;
      jobId = String(message.job_id ?? '');
      const limitMs = (svc.config.longjobTimeoutSeconds ?? LONGJOB_TIMEOUT_SECONDS) * 1000;
      const remaining = context ? context.getRemainingTimeInMillis() - FINISH_MARGIN_MS : limitMs;
      await processLongJob(
        {
          jobs: svc.jobs,
          blobs: svc.blobs,
          renderer: svc.renderer,
          clock: svc.clock,
          accounts: svc.accounts,
          plans: svc.plans,
          billing: svc.billing,
          mailer: svc.mailer,
          slots: svc.jobSlots,
          queue: svc.renderQueue,
          share: svc.config.longjobShare,
          log: (m, e) => svc.log.warn(m, e),
        },
        { job_id: jobId, deferrals: Number(message.deferrals) || 0 },
        Math.max(1000, Math.min(limitMs, remaining)),
        limitMs,
      );
    } catch (err) {
      svc.log.error(`render worker failed on job ${jobId || record.messageId}`, err);
      if (jobId && Number(record.attributes?.ApproximateReceiveCount ?? 1) >= MAX_RECEIVES) {
        const message = 'The job failed on our side after several attempts; nothing was charged. Submit it again.';
        // Accounts and mailer are read only for the failure email, once the failure is written: one that cannot be set
        // up (what this delivery may have failed on) costs the email, not the record.
        const ending = {
          jobs: svc.jobs,
          clock: svc.clock,
          get accounts() {
            return svc.accounts;
          },
          get mailer() {
            return svc.mailer;
          },
          log: (m: string, e?: unknown) => svc.log.warn(m, e),
        };
        const gaveUp = await abandonLongJob(ending, jobId, message).then(
          () => true,
          (e: unknown) => (svc.log.error('could not abandon job', e), false),
        );
        // Not recorded: the message goes back (to the dead-letter queue past its limit) rather than vanish.
        if (!gaveUp) await retryLater(svc, RENDER_QUEUE, record, failures);
      } else {
        await retryLater(svc, RENDER_QUEUE, record, failures);
      }
    }
  }
  return { batchItemFailures: failures };
}
