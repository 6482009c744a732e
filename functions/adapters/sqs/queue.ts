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

  async send(message: T, options: { delaySeconds?: number } = {}): Promise<void> {
    const delay = options.delaySeconds ? { DelaySeconds: Math.min(900, Math.max(0, Math.round(options.delaySeconds))) } : {};
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message), ...delay }));
  }
}
