import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EventType, OutboxEvent } from '../../core/events/events';
import { writtenAfterAll } from '../../core/lost-replies';
import type {
  ClaimResult,
  DeliveryStore,
  HistoryQuery,
  Outbox,
  PendingEvent,
  SecretChanges,
  WebhookChanges,
  WebhookRepository,
} from '../../core/webhooks/ports';
import type { DeliveryRecord, Webhook } from '../../core/webhooks/webhook';
import { type Dynamo, cancellationCodes, conditional, queryAll, queryNewestFirst, stripKeys } from './client';
import { type CountedItem, countDown, countUp } from './counts';
import { GSI1, OUTBOX_SHARDS, keys } from './schema';


/** Sets the given attributes; null when the item does not exist. */
async function setFields(db: Dynamo, webhookId: string, fields: Record<string, unknown>): Promise<Webhook | null> {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  const updated = await conditional(() =>
    db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.webhook(webhookId),
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
        ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  return updated?.Attributes ? stripKeys<Webhook>(updated.Attributes) : null;
}

export class DynamoWebhookRepository implements WebhookRepository {
  constructor(private readonly db: Dynamo) {}

  async get(webhookId: string): Promise<Webhook | null> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.webhook(webhookId), ConsistentRead: true }));
    return Item ? stripKeys<Webhook>(Item) : null;
  }

  /** The webhook and the account's webhook count in one transaction: the count must stay below `maxAllowed`. */
  async create(webhook: Webhook, maxAllowed: number): Promise<{ created: true } | { created: false; currentCount: number }> {
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            countUp(this.webhookCount(webhook.account_id), maxAllowed),
            {
              Put: {
                TableName: this.db.table,
                Item: {
                  ...keys.webhook(webhook.webhook_id),
                  gsi1pk: keys.webhooksOfAccount(webhook.account_id),
                  gsi1sk: `${webhook.created_at}#${webhook.webhook_id}`,
                  ...webhook,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
      return { created: true };
    } catch (err) {
      const codes = cancellationCodes(err);
      if (!codes || codes[0] !== 'ConditionalCheckFailed') throw err;
      const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.webhookCount(webhook.account_id), ConsistentRead: true }));
      return { created: false, currentCount: Number(Item?.webhook_count ?? 0) };
    }
  }

  update(webhookId: string, changes: WebhookChanges): Promise<Webhook | null> {
    return setFields(this.db, webhookId, changes);
  }

  /** Conditional on the secret the rotation read, so two rotations at once cannot interleave (one would lose its secret). */
  async updateSecrets(webhookId: string, changes: SecretChanges, seenSecret: string | null): Promise<Webhook | null | 'changed'> {
    const entries = Object.entries(changes);
    const updated = await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.webhook(webhookId),
          ConditionExpression:
            seenSecret === null
              ? 'attribute_exists(pk) AND (attribute_not_exists(secret_sealed) OR attribute_type(secret_sealed, :nullType))'
              : 'attribute_exists(pk) AND secret_sealed = :seen',
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
          ExpressionAttributeValues: {
            ...Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
            ...(seenSecret === null ? { ':nullType': 'NULL' } : { ':seen': seenSecret }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (updated?.Attributes) return stripKeys<Webhook>(updated.Attributes);
    return (await this.get(webhookId)) ? 'changed' : null;
  }

  /** Conditioned on the webhook being active and subscribed, so a paused or unsubscribed one is not marked either. */
  async markTriggered(webhookId: string, event: EventType, at: string): Promise<Webhook | null> {
    const updated = await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.webhook(webhookId),
          ConditionExpression: 'attribute_exists(pk) AND is_active = :true AND contains(events, :event)',
          UpdateExpression: 'SET last_triggered_at = :at',
          ExpressionAttributeValues: { ':true': true, ':event': event, ':at': at },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return updated?.Attributes ? stripKeys<Webhook>(updated.Attributes) : null;
  }

  /** Every webhook ever created was counted, so a missing count is zero. */
  private webhookCount(accountId: string): CountedItem {
    return { table: this.db.table, key: keys.webhookCount(accountId), attribute: 'webhook_count', missing: 'zero' };
  }

  async delete(accountId: string, webhookId: string): Promise<boolean> {
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.db.table,
                Key: keys.webhook(webhookId),
                ConditionExpression: 'account_id = :a',
                ExpressionAttributeValues: { ':a': accountId },
              },
            },
            countDown(this.webhookCount(accountId)),
          ],
        }),
      );
      return true;
    } catch (err) {
      if (cancellationCodes(err)?.[0] === 'ConditionalCheckFailed') return false;
      // Gone now: the delete went through with its reply lost (or a concurrent delete won); either way it is deleted.
      // Still there, or unknown: the error stands.
      if (await writtenAfterAll(async () => (await this.get(webhookId)) === null)) return true;
      throw err;
    }
  }

  async listForAccount(accountId: string): Promise<Webhook[]> {
    const items = await queryAll(this.db, {
      IndexName: GSI1,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.webhooksOfAccount(accountId) },
      ScanIndexForward: false,
    });
    return items.map((i) => stripKeys<Webhook>(i));
  }
}

/** Claims last a week: far beyond any redelivery of the event they guard. */
const CLAIM_TTL_SECONDS = 7 * 24 * 3600;

export class DynamoDeliveryStore implements DeliveryStore {
  constructor(private readonly db: Dynamo) {}

  async claim(input: { job_id: string; event_id: string; webhook_id: string; delivery_id: string; lease_until: string; now: string }): Promise<ClaimResult> {
    const key = keys.deliveryClaim(input.job_id, input.event_id, input.webhook_id);
    const claimed = await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: key,
          ConditionExpression: 'attribute_not_exists(pk) OR (#state = :pending AND lease_until < :now)',
          UpdateExpression:
            'SET #state = :pending, delivery_id = if_not_exists(delivery_id, :id), lease_until = :lease, webhook_id = :w, event_id = :e, #ttl = if_not_exists(#ttl, :ttl)',
          ExpressionAttributeNames: { '#state': 'state', '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':pending': 'pending',
            ':now': input.now,
            ':id': input.delivery_id,
            ':lease': input.lease_until,
            ':w': input.webhook_id,
            ':e': input.event_id,
            ':ttl': Math.floor(Date.parse(input.now) / 1000) + CLAIM_TTL_SECONDS,
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (claimed) {
      const deliveryId = String(claimed.Attributes?.delivery_id);
      // Kept from an earlier claim: a takeover. Without a note, its worker died at or before the first attempt.
      const takenOver = deliveryId !== input.delivery_id;
      const noted = Number(claimed.Attributes?.attempts);
      return { state: 'claimed', delivery_id: deliveryId, attempts_before: takenOver ? (Number.isInteger(noted) && noted > 0 ? noted : 1) : 0 };
    }
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: key, ConsistentRead: true }));
    return Item?.state === 'done' ? { state: 'done' } : { state: 'busy' };
  }

  /**
   * History record + claim closed + webhook counters, in one transaction. The claim must still be pending
   * with this delivery id (a series finishes once). A webhook deleted meanwhile gets its record without counters.
   * `last_triggered_at` is not touched: `markTriggered` set it when the series started, and writing the start
   * here could move it back behind a series that started later.
   */
  async complete(record: DeliveryRecord): Promise<void> {
    const success = record.status === 'success';
    const items = [
      {
        Put: {
          TableName: this.db.table,
          Item: { ...keys.delivery(record.webhook_id, record.delivery_id), gsi1pk: keys.deliveriesOfJob(record.job_id), gsi1sk: record.delivery_id, ...record },
        },
      },
      { Update: this.closeClaim(record, record.delivered_at) },
      {
        Update: {
          TableName: this.db.table,
          Key: keys.webhook(record.webhook_id),
          ConditionExpression: 'attribute_exists(pk)',
          UpdateExpression: `SET ${success ? 'last_success_at' : 'last_failure_at'} = :at ADD ${success ? 'success_count' : 'failure_count'} :one`,
          ExpressionAttributeValues: { ':at': record.delivered_at, ':one': 1 },
        },
      },
    ];
    try {
      await this.db.doc.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (err) {
      const codes = cancellationCodes(err);
      if (!codes) throw err;
      if (codes[1] === 'ConditionalCheckFailed') return; // another worker already finished this series
      if (codes[2] === 'ConditionalCheckFailed') {
        await this.db.doc.send(new TransactWriteCommand({ TransactItems: items.slice(0, 2) }));
        return;
      }
      throw err;
    }
  }

  /** The update that closes a claim, only while it is still this series' (pending, with its delivery id). */
  private closeClaim(claim: { job_id: string; event_id: string; webhook_id: string; delivery_id: string }, at: string) {
    return {
      TableName: this.db.table,
      Key: keys.deliveryClaim(claim.job_id, claim.event_id, claim.webhook_id),
      ConditionExpression: '#state = :pending AND delivery_id = :id',
      UpdateExpression: 'SET #state = :done, finished_at = :at REMOVE lease_until',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':pending': 'pending', ':done': 'done', ':id': claim.delivery_id, ':at': at },
    };
  }

  async noteAttempt(input: { job_id: string; event_id: string; webhook_id: string; delivery_id: string; attempt: number }): Promise<void> {
    await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.deliveryClaim(input.job_id, input.event_id, input.webhook_id),
          ConditionExpression: '#state = :pending AND delivery_id = :id',
          UpdateExpression: 'SET attempts = :n',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':pending': 'pending', ':id': input.delivery_id, ':n': input.attempt },
        }),
      ),
    );
  }

  /** Closes a claim (still ours) without a record: the series never started. */
  async release(input: { job_id: string; event_id: string; webhook_id: string; delivery_id: string; at: string }): Promise<void> {
    // Already closed by another worker: nothing to do.
    await conditional(() => this.db.doc.send(new UpdateCommand(this.closeClaim(input, input.at))));
  }

  listForWebhook(webhookId: string, q: HistoryQuery) {
    return this.page(q, {
      keyCondition: 'pk = :pk AND begins_with(sk, :prefix)',
      values: { ':pk': keys.delivery(webhookId, '').pk, ':prefix': keys.deliveryPrefix },
      start: q.after ? keys.delivery(webhookId, q.after) : undefined,
    });
  }

  listForJob(jobId: string, q: HistoryQuery) {
    return this.page(q, {
      index: GSI1,
      keyCondition: q.after ? 'gsi1pk = :pk AND gsi1sk < :after' : 'gsi1pk = :pk',
      values: { ':pk': keys.deliveriesOfJob(jobId), ...(q.after ? { ':after': q.after } : {}) },
    });
  }

  /** Newest first (delivery ids are ULIDs); filters applied server-side, pages refilled until `limit`. */
  private async page(
    q: HistoryQuery,
    where: { index?: string; keyCondition: string; values: Record<string, unknown>; start?: Record<string, unknown> },
  ): Promise<{ records: DeliveryRecord[]; last?: string }> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ...where.values };
    const filters: string[] = [];
    if (q.status) {
      names['#status'] = 'status';
      values[':status'] = q.status;
      filters.push('#status = :status');
    }
    if (q.eventType) {
      values[':type'] = q.eventType;
      filters.push('event_type = :type');
    }
    const { items, next } = await queryNewestFirst(this.db, { index: where.index, keyCondition: where.keyCondition, filters, names, values }, q.limit, where.start);
    const records = items.map((item) => stripKeys<DeliveryRecord>(item));
    // The next page starts after `next` (a record returned, or the last one read): its delivery id is in its sort key.
    const sk = typeof next?.sk === 'string' ? next.sk : '';
    return { records, last: sk.startsWith(keys.deliveryPrefix) ? sk.slice(keys.deliveryPrefix.length) : undefined };
  }
}

/** The outbox: events stored with their job (functions/adapters/dynamodb/jobs.ts `eventItem`). */
export class DynamoOutbox implements Outbox {
  readonly shards = OUTBOX_SHARDS;

  constructor(private readonly db: Dynamo) {}

  async get(jobId: string, eventId: string): Promise<{ event: OutboxEvent; pending: boolean } | null> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.event(jobId, eventId), ConsistentRead: true }));
    if (!Item) return null;
    const { dispatched_at: _dispatched, ...rest } = stripKeys<OutboxEvent & { dispatched_at?: string }>(Item);
    return { event: rest, pending: typeof Item.gsi1pk === 'string' };
  }

  async markDispatched(jobId: string, eventId: string, at: string): Promise<void> {
    // An event that no longer exists has nothing to mark.
    await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.event(jobId, eventId),
          ConditionExpression: 'attribute_exists(pk)',
          UpdateExpression: 'SET dispatched_at = :at REMOVE gsi1pk, gsi1sk',
          ExpressionAttributeValues: { ':at': at },
        }),
      ),
    );
  }

  async postpone(jobId: string, eventId: string, at: string): Promise<void> {
    // Only while pending: a dispatched event has left the index and must not come back to it.
    await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.event(jobId, eventId),
          ConditionExpression: 'attribute_exists(gsi1pk)',
          UpdateExpression: 'SET gsi1sk = :sk',
          ExpressionAttributeValues: { ':sk': keys.pendingEventSort(at, eventId) },
        }),
      ),
    );
  }

  async listPending(shard: number, before: string, limit: number): Promise<PendingEvent[]> {
    const { Items = [] } = await this.db.doc.send(
      new QueryCommand({
        TableName: this.db.table,
        IndexName: GSI1,
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
        ExpressionAttributeValues: { ':pk': keys.pendingEvents(shard), ':before': before },
        ProjectionExpression: 'job_id, event_id, created_at',
        Limit: limit,
      }),
    );
    return Items.map((i) => ({ job_id: String(i.job_id), event_id: String(i.event_id), created_at: String(i.created_at) }));
  }
}
