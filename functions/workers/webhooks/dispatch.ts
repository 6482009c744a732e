import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readyServices } from '../../composition';
import { dispatchEvent, readOutboxNotice } from '../../core/webhooks/dispatch';
import { queueDef } from '../../queues';
import { retryLater } from '../retry-later';

/**
 * The webhook dispatcher (SQS-fed in AWS, the in-process queue locally). Each message names one outbox
 * event; it is fanned out to the account's active webhooks subscribed to it. A message that fails
 * unexpectedly (database, key) is reported back for redelivery; the claims make a redelivery safe.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const svc = await readyServices();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const notice = readOutboxNotice(record.body);
      if (!notice) {
        svc.log.error(`dispatcher: ignoring a malformed message ${record.messageId}`);
        continue;
      }
      await dispatchEvent(
        {
          outbox: svc.outbox,
          webhooks: svc.webhooks,
          deliveries: svc.webhookDeliveries,
          secrets: svc.webhookSecrets,
          http: svc.http,
          clock: svc.clock,
          blobs: svc.blobs,
          jobs: svc.jobs,
          slots: svc.jobSlots,
          queue: svc.webhookQueue,
          share: svc.config.webhookShare,
          log: (m, e) => svc.log.info(m, e),
        },
        notice,
      );
    } catch (err) {
      svc.log.error(`dispatcher failed on message ${record.messageId}`, err);
      await retryLater(svc, queueDef('webhooks'), record, failures);
    }
  }
  return { batchItemFailures: failures };
}
