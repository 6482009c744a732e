import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoJobFileRepository } from '../../../../functions/adapters/dynamodb/job-files';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import type { JobFileRow } from '../../../../functions/core/jobs/files';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
const mock = mockClient(doc);
const repo = new DynamoJobFileRepository({ doc, table: 't' });

const row = (index: number): JobFileRow => ({ index, input: `f${index}.html`, output: `f${index}.pdf`, status: 'success', pages: 1, error_code: null, error_message: null, blocked_requests: 0, render_timeout: false, missing_assets: 0 });
const putOf = (index: number) => ({ PutRequest: { Item: { ...keys.jobFile('job_1', index), job_id: 'job_1', ...row(index) } } });
const sentItems = () => mock.commandCalls(BatchWriteCommand).map((c) => c.args[0].input.RequestItems!.t);

/** The pauses between retries, taken at once (the test asserts what is sent, not when). */
let pauses: number[];
beforeEach(() => {
  pauses = [];
  jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
    pauses.push(ms);
    fn();
    return 0;
  }) as never);
});
afterEach(() => {
  jest.restoreAllMocks();
  mock.reset();
});

describe('DynamoJobFileRepository.putAll', () => {
  it('writes the rows in batches of at most 25, keyed by job and index', async () => {
    mock.on(BatchWriteCommand).resolves({});
    await repo.putAll('job_1', Array.from({ length: 30 }, (_, i) => row(i)));
    expect(sentItems().map((b) => b.length)).toEqual([25, 5]);
    expect(sentItems().flat()).toEqual(Array.from({ length: 30 }, (_, i) => putOf(i)));
    expect(pauses).toEqual([]);
  });

  it('sends the rows DynamoDB left unprocessed again, with a growing pause, until none is left', async () => {
    mock
      .on(BatchWriteCommand)
      .resolvesOnce({ UnprocessedItems: { t: [putOf(3), putOf(7)] } })
      .resolvesOnce({ UnprocessedItems: { t: [putOf(7)] } })
      .resolves({ UnprocessedItems: {} });
    await repo.putAll('job_1', Array.from({ length: 10 }, (_, i) => row(i)));
    expect(sentItems()).toEqual([Array.from({ length: 10 }, (_, i) => putOf(i)), [putOf(3), putOf(7)], [putOf(7)]]);
    expect(pauses).toEqual([100, 200]);
  });

  it('fails, rather than report rows written, when some are still unprocessed after 8 retries', async () => {
    mock.on(BatchWriteCommand).resolves({ UnprocessedItems: { t: [putOf(1)] } });
    await expect(repo.putAll('job_1', [row(0), row(1)])).rejects.toThrow(/unprocessed items after retries/);
    expect(sentItems()).toHaveLength(9);
  });
});

describe('DynamoJobFileRepository reads', () => {
  it('lists every page of the rows without their keys', async () => {
    const item = (i: number) => putOf(i).PutRequest.Item;
    mock.on(QueryCommand).resolvesOnce({ Items: [item(0)], LastEvaluatedKey: keys.jobFile('job_1', 0) }).resolves({ Items: [item(1)] });
    expect(await repo.list('job_1')).toEqual([row(0), row(1)]);
    expect(mock.commandCalls(QueryCommand).map((c) => c.args[0].input.ConsistentRead)).toEqual([true, true]);
  });

  it('reads one row by index, and none for an index that cannot be one (without asking)', async () => {
    mock.on(GetCommand).resolves({ Item: putOf(2).PutRequest.Item });
    expect(await repo.get('job_1', 2)).toEqual(row(2));
    for (const index of [-1, 1.5, 1_000_000, Number.NaN]) expect(await repo.get('job_1', index)).toBeNull();
    // Strongly consistent: a row written just before (a retried task's) is read back.
    expect(mock.commandCalls(GetCommand).map((c) => c.args[0].input.ConsistentRead)).toEqual([true]);
  });

  it('deletes every row it lists', async () => {
    mock.on(QueryCommand).resolves({ Items: [putOf(0).PutRequest.Item, putOf(4).PutRequest.Item] });
    mock.on(BatchWriteCommand).resolves({});
    await repo.deleteAll('job_1');
    expect(sentItems()).toEqual([[{ DeleteRequest: { Key: keys.jobFile('job_1', 0) } }, { DeleteRequest: { Key: keys.jobFile('job_1', 4) } }]]);
  });
});
