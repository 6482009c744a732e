import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
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
