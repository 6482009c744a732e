import type { ItemKey } from './schema';

/**
 * A per-account count kept in its own item and changed in the same transaction as the items it counts, so a limit
 * ("at most 5 webhooks", "at most 50 API keys") holds under concurrent creations. `missing` says what an absent count
 * means: `zero` (it always existed for these items), or `unknown` (items may predate it: the change is refused, the
 * caller starts the count from a listing, or deletes without it).
 */
export interface CountedItem {
  table: string;
  key: ItemKey;
  attribute: string;
  missing: 'zero' | 'unknown';
}

/** The count one higher, conditional on it staying at most `max` (a cancellation reason `ConditionalCheckFailed` otherwise). */
export function countUp(count: CountedItem, max: number) {
  const zero = count.missing === 'zero';
  return {
    Update: {
      TableName: count.table,
      Key: count.key,
      ConditionExpression: zero ? 'attribute_not_exists(#n) OR #n < :max' : 'attribute_exists(#n) AND #n < :max',
      UpdateExpression: zero ? 'SET #n = if_not_exists(#n, :zero) + :one' : 'SET #n = #n + :one',
      ExpressionAttributeNames: { '#n': count.attribute },
      ExpressionAttributeValues: { ':max': max, ':one': 1, ...(zero ? { ':zero': 0 } : {}) },
    },
  };
}

/** The count one lower (an `unknown` count must exist: `ConditionalCheckFailed` otherwise). */
export function countDown(count: CountedItem) {
  const zero = count.missing === 'zero';
  return {
    Update: {
      TableName: count.table,
      Key: count.key,
      ...(zero ? {} : { ConditionExpression: 'attribute_exists(#n)' }),
      UpdateExpression: zero ? 'SET #n = if_not_exists(#n, :one) - :one' : 'SET #n = #n - :one',
      ExpressionAttributeNames: { '#n': count.attribute },
      ExpressionAttributeValues: { ':one': 1 },
    },
  };
}
