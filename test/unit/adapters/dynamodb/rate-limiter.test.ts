import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type Dynamo, createDynamo } from '../../../../functions/adapters/dynamodb/client';
import { DynamoRateLimiter } from '../../../../functions/adapters/dynamodb/rate-limiter';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { type LocalDynamo, startLocalDynamo } from '../../../../local/emulators/dynamodb';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** Against dynalite: the conditional counter as DynamoDB evaluates it. */
describe('DynamoRateLimiter', () => {
  let local: LocalDynamo;
  let limiter: DynamoRateLimiter;
  let db: Dynamo;
  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'rate' });
    db = createDynamo({ tableName: 'rate', region: 'us-east-1', endpoint: local.endpoint, requestHandler: local.requestHandler });
    limiter = new DynamoRateLimiter(db);
  });
  afterAll(() => local.stop());

  it('allows the plan limit per calendar minute, then refuses with the seconds left in that minute', async () => {
    const at = new Date('2026-11-22T10:15:20.500Z');
    expect(await limiter.consume('acct_r', 2, at)).toEqual({ allowed: true });
    expect(await limiter.consume('acct_r', 2, new Date('2026-11-22T10:15:40Z'))).toEqual({ allowed: true });
    expect(await limiter.consume('acct_r', 2, new Date('2026-11-22T10:15:45Z'))).toEqual({ allowed: false, retryAfterSeconds: 15 });
    expect(await limiter.consume('acct_r', 2, new Date('2026-11-22T10:15:59.900Z'))).toEqual({ allowed: false, retryAfterSeconds: 1 });
    // A new minute starts a new window; other accounts have their own.
    expect(await limiter.consume('acct_r', 2, new Date('2026-11-22T10:16:00Z'))).toEqual({ allowed: true });
    expect(await limiter.consume('acct_other', 2, new Date('2026-11-22T10:15:50Z'))).toEqual({ allowed: true });
  });

  it('lets exactly the limit through when requests arrive at once', async () => {
    const at = new Date('2026-11-22T11:00:10Z');
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('acct_burst', 3, at)));
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(3);
  });

  it("lets DynamoDB's TTL remove a window only after its minute has ended", async () => {
    // Removed early, the window's count would start again at 0 within the minute: more requests than the plan allows.
    await limiter.consume('acct_ttl', 5, new Date('2026-11-22T12:30:05Z'));
    const { Item } = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.rateWindow('acct_ttl', '2026-11-22T12:30'), ConsistentRead: true }));
    expect(Item).toMatchObject({ request_count: 1 });
    expect(Item!.ttl).toBeGreaterThanOrEqual(Date.parse('2026-11-22T12:31:00Z') / 1000);
  });
});
