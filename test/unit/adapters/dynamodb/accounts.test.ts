/** Against dynalite: the conditional create is DynamoDB's own check. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { newAccount } from '../../../../functions/core/accounts/account';
import type { Micros } from '../../../../functions/core/billing/money';
import { withLocalTable } from '../../../support/local-table';

const table = withLocalTable('accounts', (db) => ({ db, repo: new DynamoAccountRepository(db) }));

const account = (id: string, email: string) => newAccount({ account_id: id, email, plan_id: null, credits_micros: 5_000_000 as Micros, now: new Date('2026-11-01T00:00:00Z') });

describe('DynamoAccountRepository', () => {
  it('creates an account once: a second create of the same id writes nothing and says so', async () => {
    expect(await table.repo.create(account('acc_1', 'first@example.com'))).toBe(true);
    expect(await table.repo.create(account('acc_1', 'second@example.com'))).toBe(false);
    expect(await table.repo.get('acc_1')).toEqual(account('acc_1', 'first@example.com'));
  });

  it('reads an account without its key attributes, and null for an unknown id', async () => {
    await table.repo.create(account('acc_2', 'a@example.com'));
    const { Item } = await table.db.doc.send(new GetCommand({ TableName: table.db.table, Key: keys.account('acc_2') }));
    expect(Item).toMatchObject(keys.account('acc_2'));
    expect(Object.keys((await table.repo.get('acc_2'))!)).toEqual(Object.keys(account('acc_2', 'a@example.com')));
    expect(await table.repo.get('acc_unknown')).toBeNull();
  });

  it('reads strongly consistently: an account just written (a charge, a top-up) is read as it is now', async () => {
    const reads: unknown[] = [];
    const spy = new DynamoAccountRepository({ ...table.db, doc: { send: (command: { input: unknown }) => (reads.push(command.input), table.db.doc.send(command as never)) } as never });
    await spy.get('acc_1');
    expect(reads).toEqual([expect.objectContaining({ Key: keys.account('acc_1'), ConsistentRead: true })]);
  });

  it('reports a create DynamoDB refused for another reason than the account existing', async () => {
    await expect(table.repo.create(account('a'.repeat(3000), 'c@example.com'))).rejects.toMatchObject({ name: 'ValidationException' });
  });
});
