import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { GSI1, keys } from '../../../../functions/adapters/dynamodb/schema';
import { newJob } from '../../../../functions/core/jobs/job';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
const mock = mockClient(doc);
afterEach(() => mock.reset());

describe('DynamoJobRepository.put', () => {
  it("writes a queued job's start record in the job's own transaction (a writer dying after it leaves both or neither)", async () => {
    mock.on(TransactWriteCommand).resolves({});
    const job = newJob({ job_id: 'job_01AB', account_id: 'acc1', job_type: 'bulk', status: 'queued', now: new Date('2026-11-22T10:00:00Z') });
    await new DynamoJobRepository({ doc, table: 't' }).put(job, [], { via: 'workflow', workflow: 'bulk' });
    expect(mock.commandCalls(PutCommand)).toHaveLength(0);
    const items = mock.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!.map((t) => t.Put!.Item);
    expect(items).toEqual([
      expect.objectContaining(keys.job('job_01AB')),
      expect.objectContaining({ ...keys.jobStart('job_01AB'), gsi1pk: expect.stringMatching(/^STARTS#[0-7]$/), gsi1sk: '2026-11-22T10:00:00.000Z#job_01AB', start: { via: 'workflow', workflow: 'bulk' } }),
    ]);
  });
});

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

/**
 * The account's index partition as DynamoDB answers it: newest first after ExclusiveStartKey, `Limit` items evaluated,
 * the filter applied to those, and a LastEvaluatedKey whenever `Limit` stopped the page (even at the very last item).
 */
function partition(jobs: { job_id: string; created_at: string; status: string }[]) {
  const items = jobs
    .map((j) => ({ ...keys.job(j.job_id), gsi1pk: keys.jobsOfAccount('acc1'), gsi1sk: keys.jobListPosition(j.created_at, j.job_id), job_type: 'quick', ...j }))
    .sort((a, b) => (a.gsi1sk < b.gsi1sk ? 1 : -1));
  mock.on(QueryCommand).callsFake((input) => {
    const from = input.ExclusiveStartKey ? items.findIndex((i) => i.gsi1sk === input.ExclusiveStartKey.gsi1sk) + 1 : 0;
    const evaluated = items.slice(from, from + input.Limit);
    const status = input.ExpressionAttributeValues[':status'];
    const last = evaluated[evaluated.length - 1];
    return {
      Items: evaluated.filter((i) => status === undefined || i.status === status),
      LastEvaluatedKey: evaluated.length === input.Limit ? { pk: last.pk, sk: last.sk, gsi1pk: last.gsi1pk, gsi1sk: last.gsi1sk } : undefined,
    };
  });
}

const jobsOf = (n: number, status = (_i: number) => 'completed') =>
  Array.from({ length: n }, (_, i) => ({ job_id: `job_${String(i).padStart(3, '0')}`, created_at: new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString(), status: status(i) }));

describe('DynamoJobRepository.list pages', () => {
  const repo = () => new DynamoJobRepository({ doc, table: 't' });

  it('says there is no next page when exactly `limit` jobs remain', async () => {
    partition(jobsOf(10));
    const page = await repo().list({ accountId: 'acc1', limit: 10 });
    expect(page.jobs).toHaveLength(10);
    expect(page.last).toBeUndefined();
  });

  it('gives a position only when another job follows, and following it never ends on an empty page', async () => {
    partition(jobsOf(21));
    const first = await repo().list({ accountId: 'acc1', limit: 10 });
    expect(first.last).toEqual({ created_at: first.jobs[9].created_at, job_id: first.jobs[9].job_id });
    const second = await repo().list({ accountId: 'acc1', limit: 10, after: first.last });
    expect(second.jobs).toHaveLength(10);
    const third = await repo().list({ accountId: 'acc1', limit: 10, after: second.last });
    expect(third.jobs.map((j) => j.job_id)).toEqual(['job_000']);
    expect(third.last).toBeUndefined();
  });

  it('with a filter, reads on until one more match than the limit is found or the partition ends', async () => {
    // Every fourth job failed: 10 of 40, the oldest one last on a full DynamoDB page (which still has a LastEvaluatedKey).
    partition(jobsOf(40, (i) => (i % 4 === 0 ? 'failed' : 'completed')));
    const first = await repo().list({ accountId: 'acc1', limit: 5, status: 'failed' });
    expect(first.jobs.map((j) => j.status)).toEqual(Array(5).fill('failed'));
    expect(first.last).toBeDefined();
    const second = await repo().list({ accountId: 'acc1', limit: 5, status: 'failed', after: first.last });
    expect(second.jobs).toHaveLength(5);
    expect(second.last).toBeUndefined();
    expect([...first.jobs, ...second.jobs].map((j) => j.job_id)).toEqual(jobsOf(40).filter((_, i) => i % 4 === 0).map((j) => j.job_id).reverse());
  });

  it('reads a bounded part of the partition per page when a filter matches almost nothing, and goes on from there', async () => {
    // 20,000 jobs, only the oldest failed: one page used to read all of them (2,000 queries for limit=1), past the
    // list Lambda's 10 s. A page now stops after a bounded read and hands out a position to go on from.
    partition(jobsOf(20_000, (i) => (i === 0 ? 'failed' : 'completed')));
    const seen: string[] = [];
    let after: { created_at: string; job_id: string } | undefined;
    let pages = 0;
    do {
      mock.resetHistory();
      const page = await repo().list({ accountId: 'acc1', limit: 1, status: 'failed', after });
      expect(mock.commandCalls(QueryCommand).length).toBeLessThanOrEqual(10);
      seen.push(...page.jobs.map((j) => j.job_id));
      after = page.last;
      pages++;
    } while (after && pages < 100);
    expect(seen).toEqual(['job_000']);
    expect(after).toBeUndefined();
  });
});
