import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Account } from '../../core/accounts/account';
import type { AccountRepository } from '../../core/accounts/ports';
import { type Dynamo, conditional, stripKeys } from './client';
import { keys } from './schema';

export class DynamoAccountRepository implements AccountRepository {
  constructor(private readonly db: Dynamo) {}

  async get(accountId: string): Promise<Account | null> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.account(accountId), ConsistentRead: true }));
    return Item ? stripKeys<Account>(Item) : null;
  }

  async create(account: Account): Promise<boolean> {
    const written = await conditional(() =>
      this.db.doc.send(new PutCommand({ TableName: this.db.table, Item: { ...keys.account(account.account_id), ...account }, ConditionExpression: 'attribute_not_exists(pk)' })),
    );
    return written !== null;
  }
}
