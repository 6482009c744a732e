import { DeleteCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyRecord, ApiKeyRepository } from '../../core/auth/ports';
import { type Dynamo, isConditionalCheckFailed, queryAll, stripKeys } from './client';
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

  /** The key and its owner record, together or not at all. */
  async create(record: ApiKeyRecord): Promise<void> {
    await this.db.doc.send(
      new TransactWriteCommand({
        TransactItems: [
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
    const { Item: owner } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.apiKeyOwner(apiKeyId), ConsistentRead: true }));
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
          ],
        }),
      );
      return 'deleted';
    } catch (err) {
      // Revoked concurrently: the key is gone either way.
      if ((err as Error).name === 'TransactionCanceledException') return 'not_found';
      throw err;
    }
  }

  /** A key created before owner records existed: found through the account's listing. */
  private async deleteUnindexed(accountId: string, apiKeyId: string): Promise<'deleted' | 'not_found'> {
    const record = (await this.listForAccount(accountId)).find((r) => r.api_key_id === apiKeyId);
    if (!record) return 'not_found';
    try {
      await this.db.doc.send(
        new DeleteCommand({
          TableName: this.db.table,
          Key: keys.apiKey(record.prefix, record.api_key_id),
          ConditionExpression: 'account_id = :acc',
          ExpressionAttributeValues: { ':acc': accountId },
        }),
      );
      return 'deleted';
    } catch (err) {
      if (isConditionalCheckFailed(err)) return 'not_found';
      throw err;
    }
  }

  async touch(record: ApiKeyRecord, at: Date): Promise<void> {
    try {
      await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.apiKey(record.prefix, record.api_key_id),
          UpdateExpression: 'SET last_used_at = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': at.toISOString() },
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err; // revoked meanwhile: nothing to record
    }
  }
}
