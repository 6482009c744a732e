import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { LONGJOB_TIMEOUT_SECONDS, abandonLongJob, processLongJob } from '../../core/conversion/longjob';
import { readyServices } from '../../composition';
import { readRenderJobMessage } from '../../core/jobs/queue';
import { longJobEndingDeps, longJobWorkerDeps } from '../../job-deps';
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
  const limitMs = (svc.config.longjobTimeoutSeconds ?? LONGJOB_TIMEOUT_SECONDS) * 1000;
  for (const record of event.Records) {
    const message = readRenderJobMessage(record.body);
    if (!message) {
      // It would fail on every delivery.
      svc.log.error(`render message ${record.messageId} is not a job message; dropped`);
      continue;
    }
    try {
      const remaining = context ? context.getRemainingTimeInMillis() - FINISH_MARGIN_MS : limitMs;
      await processLongJob(longJobWorkerDeps(svc), message, Math.max(1000, Math.min(limitMs, remaining)), limitMs);
    } catch (err) {
      svc.log.error(`render worker failed on job ${message.job_id}`, err);
      const lastDelivery = Number(record.attributes?.ApproximateReceiveCount ?? 1) >= MAX_RECEIVES;
      // Not given up (or not recorded): the message goes back (to the dead-letter queue past its limit) rather than vanish.
      const gaveUp =
        lastDelivery &&
        (await abandonLongJob(longJobEndingDeps(svc), message.job_id).then(
          () => true,
          (e: unknown) => (svc.log.error('could not abandon job', e), false),
        ));
      if (!gaveUp) await retryLater(svc, RENDER_QUEUE, record, failures);
    }
  }
  return { batchItemFailures: failures };
}
