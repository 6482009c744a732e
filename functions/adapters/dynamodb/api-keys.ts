import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyRecord, ApiKeyRepository } from '../../core/auth/ports';
import { writtenAfterAll } from '../../core/lost-replies';
import { type Dynamo, cancellationCodes, conditional, queryAll, stripKeys } from './client';
import { type CountedItem, countDown, countUp } from './counts';
import { GSI1, keys } from './schema';

export class DynamoApiKeyRepository implements ApiKeyRepository {
  constructor(private readonly db: Dynamo) {}

  async findByPrefix(prefix: string): Promise<ApiKeyRecord[]> {
    const { Items = [] } = await this.db.doc.send(
      new QueryCommand({
        TableName: this.db.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.apiKeyPartition(prefix) },
        ConsistentRead: true,
      }),
    );
    return Items.map((i) => stripKeys<ApiKeyRecord>(i));
  }

  /**
   * The key, its owner record and the account's key count, together or not at all: the count must stay below
   * `maxAllowed`. Accounts whose keys predate the count get it from their listing first.
   */
  async create(record: ApiKeyRecord, maxAllowed: number): Promise<{ created: true } | { created: false; currentCount: number }> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.db.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              countUp(this.keyCountItem(record.account_id), maxAllowed),
              {
                Put: {
                  TableName: this.db.table,
                  Item: {
                    ...keys.apiKey(record.prefix, record.api_key_id),
                    gsi1pk: keys.apiKeysOfAccount(record.account_id),
                    gsi1sk: `${record.created_at}#${record.api_key_id}`,
                    ...record,
                  },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Put: {
                  TableName: this.db.table,
                  Item: { ...keys.apiKeyOwner(record.api_key_id), account_id: record.account_id, prefix: record.prefix },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ],
          }),
        );
        return { created: true };
      } catch (err) {
        if (cancellationCodes(err)?.[0] !== 'ConditionalCheckFailed') throw err;
        const counted = await this.keyCount(record.account_id);
        if (counted !== null) return { created: false, currentCount: counted };
        await this.startCount(record.account_id);
      }
    }
    return { created: false, currentCount: (await this.keyCount(record.account_id)) ?? 0 };
  }

  private async keyCount(accountId: string): Promise<number | null> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.apiKeyCount(accountId), ConsistentRead: true }));
    return Item ? Number(Item.key_count) : null;
  }

  /** The count of an account that has none yet, from its listing (a concurrent start wins; either is right). */
  private async startCount(accountId: string): Promise<void> {
    const existing = await this.listForAccount(accountId);
    await conditional(() =>
      this.db.doc.send(new PutCommand({ TableName: this.db.table, Item: { ...keys.apiKeyCount(accountId), key_count: existing.length }, ConditionExpression: 'attribute_not_exists(pk)' })),
    );
  }

  async listForAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const items = await queryAll(this.db, {
      IndexName: GSI1,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.apiKeysOfAccount(accountId) },
      ScanIndexForward: false,
    });
    return items.map((i) => stripKeys<ApiKeyRecord>(i));
  }

  async delete(accountId: string, apiKeyId: string): Promise<'deleted' | 'not_found' | 'other_account'> {
    const owner = await this.ownerOf(apiKeyId);
    if (!owner) return this.deleteUnindexed(accountId, apiKeyId);
    if (owner.account_id !== accountId) return 'other_account';
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.db.table,
                Key: keys.apiKey(owner.prefix as string, apiKeyId),
                ConditionExpression: 'account_id = :acc',
                ExpressionAttributeValues: { ':acc': accountId },
              },
            },
            { Delete: { TableName: this.db.table, Key: keys.apiKeyOwner(apiKeyId) } },
            countDown(this.keyCountItem(accountId)),
          ],
        }),
      );
      return 'deleted';
    } catch (err) {
      const codes = cancellationCodes(err);
      // Revoked concurrently: the key is gone either way.
      if (codes?.[0] === 'ConditionalCheckFailed') return 'not_found';
      // An account whose keys predate the count: nothing to count down.
      if (codes?.[2] === 'ConditionalCheckFailed') return this.deleteUncounted(accountId, owner.prefix as string, apiKeyId);
      // The key was there a moment ago: gone now, the delete went through with its reply lost (or a concurrent revoke
      // won); either way it is revoked, and a retry would only find it missing.
      if (await writtenAfterAll(async () => !(await this.ownerOf(apiKeyId)))) return 'deleted';
      throw err;
    }
  }

  private async ownerOf(apiKeyId: string): Promise<Record<string, unknown> | undefined> {
    return (await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.apiKeyOwner(apiKeyId), ConsistentRead: true }))).Item;
  }

  /** Keys created before the count existed were not counted: a missing count is unknown, not zero. */
  private keyCountItem(accountId: string): CountedItem {
    return { table: this.db.table, key: keys.apiKeyCount(accountId), attribute: 'key_count', missing: 'unknown' };
  }

  private async deleteUncounted(accountId: string, prefix: string, apiKeyId: string): Promise<'deleted' | 'not_found'> {
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: this.db.table, Key: keys.apiKey(prefix, apiKeyId), ConditionExpression: 'account_id = :acc', ExpressionAttributeValues: { ':acc': accountId } } },
            { Delete: { TableName: this.db.table, Key: keys.apiKeyOwner(apiKeyId) } },
          ],
        }),
      );
      return 'deleted';
    } catch (err) {
      if (cancellationCodes(err)?.[0] === 'ConditionalCheckFailed') return 'not_found';
      throw err;
    }
  }

  /** A key created before owner records existed: found through the account's listing. */
  private async deleteUnindexed(accountId: string, apiKeyId: string): Promise<'deleted' | 'not_found'> {
    const record = (await this.listForAccount(accountId)).find((r) => r.api_key_id === apiKeyId);
    if (!record) return 'not_found';
    const deleteKey = {
      Delete: { TableName: this.db.table, Key: keys.apiKey(record.prefix, record.api_key_id), ConditionExpression: 'account_id = :acc', ExpressionAttributeValues: { ':acc': accountId } },
    };
    for (const counted of [true, false]) {
      try {
        await this.db.doc.send(new TransactWriteCommand({ TransactItems: counted ? [deleteKey, countDown(this.keyCountItem(accountId))] : [deleteKey] }));
        return 'deleted';
      } catch (err) {
        const codes = cancellationCodes(err);
        if (codes?.[0] === 'ConditionalCheckFailed') return 'not_found';
        // No count yet for this account: delete without one. (Any other failure, a lasting conflict included, is thrown.)
        if (!counted || codes?.[1] !== 'ConditionalCheckFailed') throw err;
      }
    }
    return 'not_found';
  }

  async touch(record: ApiKeyRecord, at: Date): Promise<void> {
    // Revoked meanwhile: nothing to record.
    await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.apiKey(record.prefix, record.api_key_id),
          UpdateExpression: 'SET last_used_at = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': at.toISOString() },
        }),
      ),
    );
  }
}
