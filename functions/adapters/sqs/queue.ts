import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { MessageQueue } from '../../core/jobs/queue';

export class SqsQueue<T> implements MessageQueue<T> {
  private readonly sqs: SQSClient;

  constructor(
    private readonly queueUrl: string,
    region: string,
  ) {
    this.sqs = new SQSClient({ region });
  }

  async send(message: T): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message) }));
  }
}
