import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { SqsRedelivery, queueUrlOf } from '../../../../functions/adapters/sqs/redelivery';

describe('queueUrlOf', () => {
  it('turns a queue ARN into its URL', () => {
    expect(queueUrlOf('arn:aws:sqs:eu-west-1:123456789012:Test-Queue-render')).toBe('https://sqs.eu-west-1.amazonaws.com/123456789012/Test-Queue-render');
    expect(queueUrlOf('arn:aws-cn:sqs:cn-north-1:123456789012:q')).toBe('https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q');
  });

  it('refuses what is not an SQS queue ARN', () => {
    expect(() => queueUrlOf('arn:aws:sns:eu-west-1:123456789012:topic')).toThrow('not an SQS queue ARN');
    expect(() => queueUrlOf('nonsense')).toThrow('not an SQS queue ARN');
  });
});

describe('SqsRedelivery', () => {
  it('sets the received message’s visibility timeout to the wait, in whole seconds as SQS takes it', async () => {
    const sqs = mockClient(SQSClient);
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    try {
      await new SqsRedelivery('eu-west-1').after({ eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:render', receiptHandle: 'AQEB…' }, 60);
      await new SqsRedelivery('eu-west-1').after({ eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:render', receiptHandle: 'AQEB…' }, 29.6);
      expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
        { QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/render', ReceiptHandle: 'AQEB…', VisibilityTimeout: 60 },
        { QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/render', ReceiptHandle: 'AQEB…', VisibilityTimeout: 30 },
      ]);
    } finally {
      sqs.restore();
    }
  });
});
