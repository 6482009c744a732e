import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { GSI1, keys } from '../../../../functions/adapters/dynamodb/schema';
import { DynamoDeliveryStore, DynamoOutbox, DynamoWebhookRepository } from '../../../../functions/adapters/dynamodb/webhooks';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
const mock = mockClient(doc);
afterEach(() => mock.reset());
const db = { doc, table: 't' };

describe('webhook access patterns (queries, never scans)', () => {
  it("reads a webhook's history from its own partition, newest first, continuing inside it", async () => {
    mock.on(QueryCommand).resolves({ Items: [] });
    await new DynamoDeliveryStore(db).listForWebhook('wh_1', { limit: 20, after: '01HAFTER00000000000000000A', status: 'failed', eventType: 'job.failed' });
    const input = mock.commandCalls(QueryCommand)[0].args[0].input;
    expect(input).toMatchObject({
      IndexName: undefined,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ScanIndexForward: false,
      FilterExpression: '#status = :status AND event_type = :type',
      ExpressionAttributeValues: expect.objectContaining({ ':pk': 'WEBHOOK#wh_1', ':prefix': 'DELIVERY#', ':status': 'failed', ':type': 'job.failed' }),
      ExclusiveStartKey: keys.delivery('wh_1', '01HAFTER00000000000000000A'),
    });
    expect(mock.commandCalls(ScanCommand)).toHaveLength(0);
  });

  it("reads a job's deliveries through the index, below the last delivery id seen", async () => {
    mock.on(QueryCommand).resolves({ Items: [] });
    await new DynamoDeliveryStore(db).listForJob('job_1', { limit: 5, after: '01HAFTER00000000000000000A' });
    expect(mock.commandCalls(QueryCommand)[0].args[0].input).toMatchObject({
      IndexName: GSI1,
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :after',
      ExpressionAttributeValues: { ':pk': keys.deliveriesOfJob('job_1'), ':after': '01HAFTER00000000000000000A' },
      ScanIndexForward: false,
    });
  });

  it("lists an account's webhooks and one outbox shard through the index", async () => {
    mock.on(QueryCommand).resolves({ Items: [] });
    await new DynamoWebhookRepository(db).listForAccount('acc_1');
    await new DynamoOutbox(db).listPending(3, '2026-01-01T00:00:00.000Z', 100);
    const [hooks, pending] = mock.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(hooks).toMatchObject({ IndexName: GSI1, ExpressionAttributeValues: { ':pk': keys.webhooksOfAccount('acc_1') } });
    expect(pending).toMatchObject({ IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before', ExpressionAttributeValues: { ':pk': 'OUTBOX#3' }, Limit: 100 });
    expect(mock.commandCalls(ScanCommand)).toHaveLength(0);
  });
});
