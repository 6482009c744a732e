import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { GSI1, keys } from '../../../../functions/adapters/dynamodb/schema';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
const mock = mockClient(doc);
afterEach(() => mock.reset());

describe('DynamoJobRepository.list (GET /jobs)', () => {
  it("queries the account's partition of the index newest first, never scans", async () => {
    mock.on(QueryCommand).resolves({ Items: [] });
    const repo = new DynamoJobRepository({ doc, table: 't' });
    await repo.list({ accountId: 'acc1', limit: 20, status: 'failed', month: '2026-11', after: { created_at: '2026-11-05T00:00:00.000Z', job_id: 'job_9' } });
    expect(mock.commandCalls(ScanCommand)).toHaveLength(0);
    const input = mock.commandCalls(QueryCommand)[0].args[0].input;
    expect(input).toMatchObject({
      IndexName: GSI1,
      ScanIndexForward: false,
      KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :month)',
      ExpressionAttributeValues: expect.objectContaining({ ':pk': keys.jobsOfAccount('acc1'), ':month': '2026-11', ':status': 'failed' }),
    });
    // The start position stays inside the caller's partition whatever the page token said.
    expect(input.ExclusiveStartKey).toMatchObject({ gsi1pk: keys.jobsOfAccount('acc1'), gsi1sk: '2026-11-05T00:00:00.000Z#job_9' });
  });
});
