import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { SqsQueue } from '../../../../functions/adapters/sqs/queue';

describe('SqsQueue', () => {
  const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/render';

  it('sends the message as JSON, with DelaySeconds only when asked, rounded and capped at the 900 s SQS allows', async () => {
    const sqs = mockClient(SQSClient);
    sqs.on(SendMessageCommand).resolves({});
    try {
      const queue = new SqsQueue<{ job_id: string }>(url, 'eu-west-1');
      await queue.send({ job_id: 'job_1' });
      await queue.send({ job_id: 'job_2' }, { delaySeconds: 29.6 });
      await queue.send({ job_id: 'job_3' }, { delaySeconds: 3600 });
      expect(sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input)).toEqual([
        { QueueUrl: url, MessageBody: '{"job_id":"job_1"}' },
        { QueueUrl: url, MessageBody: '{"job_id":"job_2"}', DelaySeconds: 30 },
        { QueueUrl: url, MessageBody: '{"job_id":"job_3"}', DelaySeconds: 900 },
      ]);
    } finally {
      sqs.restore();
    }
  });
});
