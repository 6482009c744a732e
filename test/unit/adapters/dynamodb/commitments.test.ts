import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { createDynamo, type Dynamo } from '../../../../functions/adapters/dynamodb/client';
import { DynamoCommitmentStore } from '../../../../functions/adapters/dynamodb/commitments';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { newAccount } from '../../../../functions/core/accounts/account';
import { type LocalDynamo, startLocalDynamo } from '../../../../local/emulators/dynamodb';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** Against dynalite: the conditions and map paths as DynamoDB evaluates them. */
describe('DynamoCommitmentStore', () => {
  let local: LocalDynamo;
  let db: Dynamo;
  let store: DynamoCommitmentStore;
  let accounts: DynamoAccountRepository;
  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'commitments' });
    db = createDynamo({ tableName: 'commitments', region: 'us-east-1', endpoint: local.endpoint, requestHandler: local.requestHandler });
    store = new DynamoCommitmentStore(db);
    accounts = new DynamoAccountRepository(db);
  });
  afterAll(() => local.stop());

  const at = new Date('2026-11-22T10:00:00Z');
  const pledge = (charges: number) => ({ charges, amount_micros: 10_000, at: at.toISOString() });

  it('writes only over the version it read, and release moves the version on', async () => {
    await accounts.create(newAccount({ account_id: 'acct_c', email: 'c@example.com', plan_id: 'standard', credits_micros: 100_000, now: at }));
    expect(await store.replace('acct_c', 0, { job_a: pledge(3) }, at)).toBe(true);
    // A second writer that also read version 0 loses.
    expect(await store.replace('acct_c', 0, { job_b: pledge(3) }, at)).toBe(false);
    expect(await store.replace('acct_c', 1, { job_a: pledge(3), job_b: pledge(2) }, at)).toBe(true);
    let account = await accounts.get('acct_c');
    expect(account).toMatchObject({ commitments: { job_a: pledge(3), job_b: pledge(2) }, commitments_version: 2, credits_micros: 100_000 });

    await store.release('acct_c', 'job_a');
    await store.release('acct_c', 'job_a'); // nothing left to release: no error, no version change
    await store.release('acct_c', 'job_never');
    account = await accounts.get('acct_c');
    expect(account).toMatchObject({ commitments: { job_b: pledge(2) }, commitments_version: 3 });
    expect(await store.replace('acct_c', 2, {}, at)).toBe(false);
  });

  it('releases on an account that never had commitments, and writes nothing for an account that does not exist', async () => {
    await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.account('acct_plain'), account_id: 'acct_plain' } }));
    await expect(store.release('acct_plain', 'job_x')).resolves.toBeUndefined();
    expect(await store.replace('acct_missing', 0, { job_a: pledge(1) }, at)).toBe(false);
  });
});
