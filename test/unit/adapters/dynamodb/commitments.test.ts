import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { DynamoCommitmentStore } from '../../../../functions/adapters/dynamodb/commitments';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { newAccount } from '../../../../functions/core/accounts/account';
import { withLocalTable } from '../../../support/local-table';

/** Against dynalite: the conditions and map paths as DynamoDB evaluates them. */
describe('DynamoCommitmentStore', () => {
  const table = withLocalTable('commitments', (db) => ({ db, store: new DynamoCommitmentStore(db), accounts: new DynamoAccountRepository(db) }));

  const at = new Date('2026-11-22T10:00:00Z');
  const pledge = (charges: number) => ({ charges, amount_micros: 10_000, at: at.toISOString() });

  it('writes only over the version it read, and release moves the version on', async () => {
    await table.accounts.create(newAccount({ account_id: 'acct_c', email: 'c@example.com', plan_id: 'standard', credits_micros: 100_000, now: at }));
    expect(await table.store.replace('acct_c', 0, { job_a: pledge(3) }, at)).toBe(true);
    // A second writer that also read version 0 loses.
    expect(await table.store.replace('acct_c', 0, { job_b: pledge(3) }, at)).toBe(false);
    expect(await table.store.replace('acct_c', 1, { job_a: pledge(3), job_b: pledge(2) }, at)).toBe(true);
    let account = await table.accounts.get('acct_c');
    expect(account).toMatchObject({ commitments: { job_a: pledge(3), job_b: pledge(2) }, commitments_version: 2, credits_micros: 100_000 });

    await table.store.release('acct_c', 'job_a');
    await table.store.release('acct_c', 'job_a'); // nothing left to release: no error, no version change
    await table.store.release('acct_c', 'job_never');
    account = await table.accounts.get('acct_c');
    expect(account).toMatchObject({ commitments: { job_b: pledge(2) }, commitments_version: 3 });
    expect(await table.store.replace('acct_c', 2, {}, at)).toBe(false);
  });

  it('releases on an account that never had commitments, and writes nothing for an account that does not exist', async () => {
    await table.db.doc.send(new PutCommand({ TableName: table.db.table, Item: { ...keys.account('acct_plain'), account_id: 'acct_plain' } }));
    await expect(table.store.release('acct_plain', 'job_x')).resolves.toBeUndefined();
    expect(await table.store.replace('acct_missing', 0, { job_a: pledge(1) }, at)).toBe(false);
  });
});
