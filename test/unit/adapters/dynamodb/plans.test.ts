import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoPlanRepository } from '../../../../functions/adapters/dynamodb/plans';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { planCatalogue } from '../../../../functions/core/billing/plans';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
const mock = mockClient(doc);
afterEach(() => mock.reset());

describe('DynamoPlanRepository.get', () => {
  it('caches plans that exist, and never an unknown id (ids come from request paths)', async () => {
    const standard = planCatalogue().find((p) => p.plan_id === 'standard')!;
    mock.on(GetCommand, { Key: keys.plan('standard') }).resolves({ Item: { ...keys.plan('standard'), ...standard } });
    mock.on(GetCommand, { Key: keys.plan('nope') }).resolves({});
    const repo = new DynamoPlanRepository({ doc, table: 't' });
    expect(await repo.get('standard')).toMatchObject({ plan_id: 'standard' });
    expect(await repo.get('standard')).toMatchObject({ plan_id: 'standard' });
    for (let i = 0; i < 3; i++) expect(await repo.get('nope')).toBeNull();
    expect(mock.commandCalls(GetCommand).map((c) => c.args[0].input.Key)).toEqual([keys.plan('standard'), keys.plan('nope'), keys.plan('nope'), keys.plan('nope')]);
    expect((repo as unknown as { cache: Map<string, unknown> }).cache.size).toBe(1);
  });
});

describe('DynamoPlanRepository cache', () => {
  const standard = () => planCatalogue().find((p) => p.plan_id === 'standard')!;
  const stored = (plan: object) => ({ Item: { ...keys.plan('standard'), ...plan } });

  it('reads a plan again once it has been cached for a minute (a plan changed in the table is seen)', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    try {
      mock.on(GetCommand).resolvesOnce(stored({ ...standard(), name: 'Old' })).resolves(stored({ ...standard(), name: 'New' }));
      const repo = new DynamoPlanRepository({ doc, table: 't' });
      expect(await repo.get('standard')).toMatchObject({ name: 'Old' });
      now.mockReturnValue(1_000_000 + 59_999);
      expect(await repo.get('standard')).toMatchObject({ name: 'Old' });
      now.mockReturnValue(1_000_000 + 60_000);
      expect(await repo.get('standard')).toMatchObject({ name: 'New' });
      expect(mock.commandCalls(GetCommand)).toHaveLength(2);
    } finally {
      now.mockRestore();
    }
  });

  it('forgets what it cached when plans are written', async () => {
    mock.on(GetCommand).resolvesOnce(stored({ ...standard(), name: 'Old' })).resolves(stored({ ...standard(), name: 'New' }));
    mock.on(BatchWriteCommand).resolves({});
    const repo = new DynamoPlanRepository({ doc, table: 't' });
    expect(await repo.get('standard')).toMatchObject({ name: 'Old' });
    await repo.put([{ ...standard(), name: 'New' }]);
    expect(await repo.get('standard')).toMatchObject({ name: 'New' });
  });

  it('does not keep a plan read while the write was under way', async () => {
    let table = 'Old';
    mock.on(GetCommand).callsFake(() => stored({ ...standard(), name: table }));
    const repo = new DynamoPlanRepository({ doc, table: 't' });
    mock.on(BatchWriteCommand).callsFake(async () => {
      expect(await repo.get('standard')).toMatchObject({ name: 'Old' });
      table = 'New';
      return {};
    });
    await repo.put([{ ...standard(), name: 'New' }]);
    expect(await repo.get('standard')).toMatchObject({ name: 'New' });
  });
});

describe('DynamoPlanRepository.put', () => {
  const plans = (n: number) => Array.from({ length: n }, (_, i) => ({ ...planCatalogue()[0], plan_id: `p${i}` }));
  const written = () => mock.commandCalls(BatchWriteCommand).flatMap((c) => (c.args[0].input.RequestItems!.t as { PutRequest: { Item: { plan_id: string } } }[]).map((r) => r.PutRequest.Item.plan_id));

  it('writes in batches of at most 25 (DynamoDB refuses more)', async () => {
    mock.on(BatchWriteCommand).resolves({});
    await new DynamoPlanRepository({ doc, table: 't' }).put(plans(30));
    expect(mock.commandCalls(BatchWriteCommand).map((c) => c.args[0].input.RequestItems!.t.length)).toEqual([25, 5]);
    expect(written()).toEqual(plans(30).map((p) => p.plan_id));
  });

  it('sends the plans DynamoDB left unprocessed again until every one is written', async () => {
    const unprocessed = [{ PutRequest: { Item: { ...keys.plan('p3'), ...plans(4)[3] } } }];
    mock.on(BatchWriteCommand).resolvesOnce({ UnprocessedItems: { t: unprocessed } }).resolves({});
    await new DynamoPlanRepository({ doc, table: 't' }).put(plans(4));
    expect(written()).toEqual(['p0', 'p1', 'p2', 'p3', 'p3']);
  });
});
