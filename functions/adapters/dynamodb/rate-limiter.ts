import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RateLimiter } from '../../core/accounts/ports';
import { type Dynamo, conditional } from './client';
import { keys } from './schema';

/** A fixed one-minute window per account: one conditional counter increment per request. */
export class DynamoRateLimiter implements RateLimiter {
  constructor(private readonly db: Dynamo) {}

  async consume(accountId: string, limitPerMinute: number, now: Date) {
    const minute = now.toISOString().slice(0, 16);
    const counted = await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.rateWindow(accountId, minute),
          UpdateExpression: 'ADD #count :one SET #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'request_count', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':one': 1, ':limit': limitPerMinute, ':ttl': Math.floor(now.getTime() / 1000) + 180 },
        }),
      ),
    );
    if (counted) return { allowed: true as const };
    return { allowed: false as const, retryAfterSeconds: Math.max(1, 60 - now.getUTCSeconds()) };
  }
}
