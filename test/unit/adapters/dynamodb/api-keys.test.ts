import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyRepository } from '../../../../functions/adapters/dynamodb/api-keys';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import type { ApiKeyRecord } from '../../../../functions/core/auth/ports';
import { withLocalTable } from '../../../support/local-table';

/** Against dynalite: accounts whose keys predate the key count (a missing count is unknown, not zero). */
describe('DynamoApiKeyRepository with keys made before the count existed', () => {
  const table = withLocalTable('api-keys', (db) => ({ db, keys: new DynamoApiKeyRepository(db) }));
  const at = '2026-11-23T10:00:00.000Z';
  const record = (accountId: string, id: string): ApiKeyRecord => ({ api_key_id: id, account_id: accountId, prefix: `pk_${id}`, hash: 'h', name: id, created_at: at, last_used_at: null });

  /** A key (with its owner record) as written before counts existed. */
  async function legacyKey(r: ApiKeyRecord) {
    const put = (Item: Record<string, unknown>) => table.db.doc.send(new PutCommand({ TableName: table.db.table, Item }));
    await put({ ...keys.apiKey(r.prefix, r.api_key_id), gsi1pk: keys.apiKeysOfAccount(r.account_id), gsi1sk: `${r.created_at}#${r.api_key_id}`, ...r });
    await put({ ...keys.apiKeyOwner(r.api_key_id), account_id: r.account_id, prefix: r.prefix });
  }

  it('counts the keys it already has before creating one: the limit holds', async () => {
    for (const id of ['k1', 'k2', 'k3']) await legacyKey(record('acct_old', id));
    expect(await table.keys.create(record('acct_old', 'k4'), 3)).toEqual({ created: false, currentCount: 3 });
    expect(await table.keys.listForAccount('acct_old')).toHaveLength(3);
  });

  it('revokes a key of an account that has no count yet', async () => {
    await legacyKey(record('acct_uncounted', 'u1'));
    expect(await table.keys.delete('acct_uncounted', 'u1')).toBe('deleted');
    expect(await table.keys.listForAccount('acct_uncounted')).toEqual([]);
  });
});
