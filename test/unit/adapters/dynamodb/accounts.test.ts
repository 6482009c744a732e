/** Against dynalite: the conditional create is DynamoDB's own check. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { createDynamo, type Dynamo } from '../../../../functions/adapters/dynamodb/client';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { newAccount } from '../../../../functions/core/accounts/account';
import type { Micros } from '../../../../functions/core/billing/money';
import { type LocalDynamo, startLocalDynamo } from '../../../../local/emulators/dynamodb';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

let local: LocalDynamo;
let db: Dynamo;
let repo: DynamoAccountRepository;
beforeAll(async () => {
  local = await startLocalDynamo({ tableName: 'accounts' });
  db = createDynamo({ tableName: 'accounts', region: 'us-east-1', endpoint: local.endpoint, requestHandler: local.requestHandler });
  repo = new DynamoAccountRepository(db);
});
afterAll(() => local.stop());

const account = (id: string, email: string) => newAccount({ account_id: id, email, plan_id: null, credits_micros: 5_000_000 as Micros, now: new Date('2026-11-01T00:00:00Z') });

describe('DynamoAccountRepository', () => {
  it('creates an account once: a second create of the same id writes nothing and says so', async () => {
    expect(await repo.create(account('acc_1', 'first@example.com'))).toBe(true);
    expect(await repo.create(account('acc_1', 'second@example.com'))).toBe(false);
    expect(await repo.get('acc_1')).toEqual(account('acc_1', 'first@example.com'));
  });

  it('reads an account without its key attributes, and null for an unknown id', async () => {
    await repo.create(account('acc_2', 'a@example.com'));
    const { Item } = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.account('acc_2') }));
    expect(Item).toMatchObject(keys.account('acc_2'));
    expect(Object.keys((await repo.get('acc_2'))!)).toEqual(Object.keys(account('acc_2', 'a@example.com')));
    expect(await repo.get('acc_unknown')).toBeNull();
  });

  it('reads strongly consistently: an account just written (a charge, a top-up) is read as it is now', async () => {
    const reads: unknown[] = [];
    const spy = new DynamoAccountRepository({ ...db, doc: { send: (command: { input: unknown }) => (reads.push(command.input), db.doc.send(command as never)) } as never });
    await spy.get('acc_1');
    expect(reads).toEqual([expect.objectContaining({ Key: keys.account('acc_1'), ConsistentRead: true })]);
  });

  it('reports a create DynamoDB refused for another reason than the account existing', async () => {
    await expect(repo.create(account('a'.repeat(3000), 'c@example.com'))).rejects.toMatchObject({ name: 'ValidationException' });
  });
});
