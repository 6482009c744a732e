import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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

  it('stops a page whose filter matches nothing after a bounded read, going on after the last record read', async () => {
    // A long run of records the filter drops: each query answers none, with the position it reached.
    let n = 0;
    mock.on(QueryCommand).callsFake(() => ({ Items: [], LastEvaluatedKey: ++n < 5000 ? keys.delivery('wh_1', `01HREAD${String(n).padStart(19, '0')}`) : undefined }));
    const page = await new DynamoDeliveryStore(db).listForWebhook('wh_1', { limit: 1, status: 'timeout' });
    expect(mock.commandCalls(QueryCommand).length).toBeLessThanOrEqual(10);
    expect(page).toEqual({ records: [], last: `01HREAD${String(n).padStart(19, '0')}` });
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
    mock.on(QueryCommand).resolves({ Items: [{ job_id: 'job_1', event_id: '01HEVENT00000000000000000A', created_at: '2025-12-31T10:00:00.000Z' }] });
    expect(await new DynamoOutbox(db).listPending(3, '2026-01-01T00:00:00.000Z', 100)).toEqual([
      { job_id: 'job_1', event_id: '01HEVENT00000000000000000A', created_at: '2025-12-31T10:00:00.000Z' },
    ]);
    const [hooks, pending] = mock.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(hooks).toMatchObject({ IndexName: GSI1, ExpressionAttributeValues: { ':pk': keys.webhooksOfAccount('acc_1') } });
    expect(pending).toMatchObject({ IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before', ExpressionAttributeValues: { ':pk': 'OUTBOX#3' }, Limit: 100 });
    // The sweeper tells events to give up from those to re-send by the time they were written.
    expect(pending.ProjectionExpression).toContain('created_at');
    expect(mock.commandCalls(ScanCommand)).toHaveLength(0);
  });
});

describe('webhook counters and series start', () => {
  const record = {
    delivery_id: '01HDELIVERY000000000000001', webhook_id: 'wh_1', account_id: 'acc_1', job_id: 'job_1', event_id: '01HEVENT00000000000000000A',
    event_type: 'job.completed' as const, status: 'failed' as const, status_code: 500, error_message: 'HTTP 500 from the receiver', retry_count: 3,
    started_at: '2026-05-01T10:00:00.000Z', delivered_at: '2026-05-01T10:00:07.500Z', duration_ms: 12, payload_size_bytes: 40,
  };

  it('sets last_triggered_at when a series starts, only on an active webhook subscribed to the event, reading it back', async () => {
    mock.on(UpdateCommand).resolves({ Attributes: { ...keys.webhook('wh_1'), webhook_id: 'wh_1', is_active: true, last_triggered_at: '2026-05-01T10:00:00.000Z' } });
    const hook = await new DynamoWebhookRepository(db).markTriggered('wh_1', 'job.completed', '2026-05-01T10:00:00.000Z');
    expect(hook).toEqual({ webhook_id: 'wh_1', is_active: true, last_triggered_at: '2026-05-01T10:00:00.000Z' });
    expect(mock.commandCalls(UpdateCommand)[0].args[0].input).toMatchObject({
      Key: keys.webhook('wh_1'),
      ConditionExpression: 'attribute_exists(pk) AND is_active = :true AND contains(events, :event)',
      UpdateExpression: 'SET last_triggered_at = :at',
      ExpressionAttributeValues: { ':true': true, ':event': 'job.completed', ':at': '2026-05-01T10:00:00.000Z' },
      ReturnValues: 'ALL_NEW',
    });
    mock.on(UpdateCommand).rejects(Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' }));
    expect(await new DynamoWebhookRepository(db).markTriggered('wh_1', 'job.completed', '2026-05-01T10:00:00.000Z')).toBeNull();
  });

  it('completes a series without moving last_triggered_at (no backdating to the start)', async () => {
    mock.on(TransactWriteCommand).resolves({});
    await new DynamoDeliveryStore(db).complete(record);
    const [, claim, counters] = mock.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(claim.Update).toMatchObject({ Key: keys.deliveryClaim('job_1', record.event_id, 'wh_1') });
    expect(counters.Update).toMatchObject({
      Key: keys.webhook('wh_1'),
      UpdateExpression: 'SET last_failure_at = :at ADD failure_count :one',
      ExpressionAttributeValues: { ':at': record.delivered_at, ':one': 1 },
    });
  });

  it('releases a claim whose series never started: closed, no record', async () => {
    mock.on(UpdateCommand).resolves({});
    await new DynamoDeliveryStore(db).release({ job_id: 'job_1', event_id: record.event_id, webhook_id: 'wh_1', delivery_id: record.delivery_id, at: record.started_at });
    expect(mock.commandCalls(UpdateCommand)[0].args[0].input).toMatchObject({
      Key: keys.deliveryClaim('job_1', record.event_id, 'wh_1'),
      ConditionExpression: '#state = :pending AND delivery_id = :id',
      ExpressionAttributeValues: expect.objectContaining({ ':done': 'done', ':id': record.delivery_id }),
    });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });
});
