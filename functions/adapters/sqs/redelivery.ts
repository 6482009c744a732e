import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/**
 * When a message a worker failed on comes back. Left alone, SQS waits out the queue's whole visibility timeout
 * (90 minutes for the render queue, which must outlast a throttled 15-minute worker), so workers set a short
 * backoff on each failure instead.
 */
export interface Redelivery {
  after(record: Pick<SQSRecord, 'eventSourceARN' | 'receiptHandle'>, seconds: number): Promise<void>;
}

/** The queue URL of a queue ARN (arn:aws:sqs:<region>:<account>:<name>). */
export function queueUrlOf(arn: string): string {
  const [, partition, service, region, account, name] = arn.split(':');
  if (service !== 'sqs' || !region || !account || !name) throw new Error(`not an SQS queue ARN: ${arn}`);
  const domain = partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com';
  return `https://sqs.${region}.${domain}/${account}/${name}`;
}

/** In AWS: ChangeMessageVisibility on the received message (the event source mapping grants it to the worker). */
export class SqsRedelivery implements Redelivery {
  private readonly sqs: SQSClient;

  constructor(region: string) {
    this.sqs = new SQSClient({ region });
  }

  async after(record: Pick<SQSRecord, 'eventSourceARN' | 'receiptHandle'>, seconds: number): Promise<void> {
    await this.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrlOf(record.eventSourceARN), ReceiptHandle: record.receiptHandle, VisibilityTimeout: Math.round(seconds) }));
  }
}
