import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { Services } from '../composition';
import { type QueueDef, retryDelaySeconds } from '../queues';

/**
 * Reports a record as failed and asks for it back after the queue's backoff for its delivery count, rather than
 * after the whole visibility timeout. If that request fails the message still comes back, only later.
 */
export async function retryLater(svc: Pick<Services, 'redelivery' | 'log'>, def: QueueDef, record: SQSRecord, failures: SQSBatchResponse['batchItemFailures']): Promise<void> {
  failures.push({ itemIdentifier: record.messageId });
  const seconds = retryDelaySeconds(def, Number(record.attributes?.ApproximateReceiveCount ?? 1));
  await svc.redelivery.after(record, seconds).catch((err: unknown) => svc.log.warn(`could not set when message ${record.messageId} comes back`, err));
}
