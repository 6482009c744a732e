import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { OutboxEvent } from '../../core/events/events';
import type { Job, JobStatus } from '../../core/jobs/job';
import type { JobListQuery, JobRepository } from '../../core/jobs/ports';
import type { JobStart, StartRecord } from '../../core/jobs/starts';
import { type Dynamo, cancellationCodes, isConditionalCheckFailed, queryNewestFirst, stripKeys } from './client';
import { GSI1, OUTBOX_SHARDS, START_SHARDS, keys, shardOf } from './schema';

/** The stored form of a job: the job plus its keys (also used inside charge transactions). */
export function jobItem(job: Job): Record<string, unknown> {
  return {
    ...keys.job(job.job_id),
    gsi1pk: keys.jobsOfAccount(job.account_id),
    gsi1sk: keys.jobListPosition(job.created_at, job.job_id),
    ...job,
  };
}

/** The stored form of an outbox event: pending until the dispatcher removes its index keys. */
export function eventItem(event: OutboxEvent): Record<string, unknown> {
  const shard = shardOf(event.event_id, OUTBOX_SHARDS);
  return { ...keys.event(event.job_id, event.event_id), gsi1pk: keys.pendingEvents(shard), gsi1sk: keys.pendingEventSort(event.created_at, event.event_id), ...event };
}

/**
 * The stored record of a queued job's start, in the unsent-starts index until the start was sent; for a job
 * claimed under a lease, the watch on it, due when the lease ends.
 */
function startItem(job: Job, start: JobStart): Record<string, unknown> {
  const due = job.status === 'processing' && job.lease_until ? job.lease_until : job.created_at;
  const unsent: StartRecord = { job_id: job.job_id, account_id: job.account_id, created_at: job.created_at, due_at: due, start };
  return { ...keys.jobStart(job.job_id), gsi1pk: keys.dueStartRecords(shardOf(job.job_id, START_SHARDS)), gsi1sk: `${due}#${job.job_id}`, ...unsent };
}

/**
 * Puts a whole job item if `condition` (which may use `#status`) holds, with its outbox events in the same
 * transaction; false when the condition failed.
 */
export async function putJobIf(db: Dynamo, job: Job, condition: string, values: Record<string, unknown>, events: OutboxEvent[] = [], also: Record<string, unknown>[] = []): Promise<boolean> {
  const put = { TableName: db.table, Item: jobItem(job), ConditionExpression: condition, ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: values };
  const others = [...events.map(eventItem), ...also];
  try {
    if (others.length === 0) await db.doc.send(new PutCommand(put));
    else await db.doc.send(new TransactWriteCommand({ TransactItems: [{ Put: put }, ...others.map((Item) => ({ Put: { TableName: db.table, Item } }))] }));
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err) || cancellationCodes(err)?.[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
}

/** A start record is due at `value` (records written before watches had no due_at: their time is created_at). */
const startDueAt = (value: string) => `due_at = ${value} OR (attribute_not_exists(due_at) AND created_at = ${value})`;

export class DynamoJobRepository implements JobRepository {
  constructor(private readonly db: Dynamo) {}

  async get(jobId: string): Promise<Job | null> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.job(jobId), ConsistentRead: true }));
    return Item ? stripKeys<Job>(Item) : null;
  }

  async put(job: Job, events: OutboxEvent[] = [], start?: JobStart): Promise<void> {
    const items = [jobItem(job), ...events.map(eventItem), ...(start ? [startItem(job, start)] : [])];
    if (items.length === 1) {
      await this.db.doc.send(new PutCommand({ TableName: this.db.table, Item: items[0] }));
      return;
    }
    await this.db.doc.send(new TransactWriteCommand({ TransactItems: items.map((Item) => ({ Put: { TableName: this.db.table, Item } })) }));
  }

  async startSent(jobId: string, due?: string): Promise<void> {
    if (due === undefined) {
      await this.db.doc.send(new DeleteCommand({ TableName: this.db.table, Key: keys.jobStart(jobId) }));
      return;
    }
    try {
      await this.db.doc.send(
        new DeleteCommand({
          TableName: this.db.table,
          Key: keys.jobStart(jobId),
          ConditionExpression: startDueAt(':due'),
          ExpressionAttributeValues: { ':due': due },
        }),
      );
    } catch (err) {
      // Gone already, or re-armed by a later claim: either way not ours to remove.
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  async watchStart(jobId: string, from: string, until: string): Promise<boolean> {
    try {
      await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.jobStart(jobId),
          UpdateExpression: 'SET due_at = :until, gsi1pk = :pk, gsi1sk = :sk',
          ConditionExpression: startDueAt(':from'),
          ExpressionAttributeValues: { ':from': from, ':until': until, ':pk': keys.workflowWatches(shardOf(jobId, START_SHARDS)), ':sk': `${until}#${jobId}` },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  async dueStartRecords(before: string, limit: number): Promise<StartRecord[]> {
    const [starts, watches] = await Promise.all([this.dueIn(keys.dueStartRecords, before, limit), this.dueIn(keys.workflowWatches, before, limit)]);
    return [...starts, ...watches];
  }

  /** The records of one family of index partitions due before `before`, oldest first across its shards, at most `limit`. */
  private async dueIn(partition: (shard: number) => string, before: string, limit: number): Promise<StartRecord[]> {
    const shards = await Promise.all(
      Array.from({ length: START_SHARDS }, async (_, shard) => {
        const { Items = [] } = await this.db.doc.send(
          new QueryCommand({
            TableName: this.db.table,
            IndexName: GSI1,
            KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
            ExpressionAttributeValues: { ':pk': partition(shard), ':before': before },
            ProjectionExpression: 'job_id, account_id, created_at, due_at, #start',
            ExpressionAttributeNames: { '#start': 'start' },
            Limit: limit,
          }),
        );
        return Items as StartRecord[];
      }),
    );
    const due = (s: StartRecord) => s.due_at ?? s.created_at;
    return shards
      .flat()
      .sort((a, b) => (due(a) < due(b) ? -1 : due(a) > due(b) ? 1 : 0))
      .slice(0, limit);
  }

  async putIf(job: Job, from: JobStatus[], events: OutboxEvent[] = [], leaseExpiredBefore?: string, watch?: JobStart): Promise<boolean> {
    const values: Record<string, unknown> = Object.fromEntries(from.map((status, i) => [`:s${i}`, status]));
    const conditions = from.length > 0 ? [`#status IN (${from.map((_, i) => `:s${i}`).join(', ')})`] : [];
    if (leaseExpiredBefore) {
      conditions.push('#status = :processing AND lease_until < :now');
      Object.assign(values, { ':processing': 'processing', ':now': leaseExpiredBefore });
    }
    if (conditions.length === 0) throw new Error('putIf needs a status to write over or an expired lease');
    return putJobIf(this.db, job, conditions.map((c) => `(${c})`).join(' OR '), values, events, watch ? [startItem(job, watch)] : []);
  }

  async putIfLeaseHeld(job: Job, leaseUntil: string, events: OutboxEvent[] = []): Promise<boolean> {
    return putJobIf(this.db, job, '#status = :processing AND lease_until = :lease', { ':processing': 'processing', ':lease': leaseUntil }, events);
  }

  /** Newest first from the account's GSI partition; filters are applied server-side, pages refilled until `limit`. */
  async list(q: JobListQuery): Promise<{ jobs: Job[]; last?: { created_at: string; job_id: string } }> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':pk': keys.jobsOfAccount(q.accountId) };
    let keyCondition = 'gsi1pk = :pk';
    if (q.month) {
      keyCondition += ' AND begins_with(gsi1sk, :month)';
      values[':month'] = q.month;
    }
    const filters: string[] = [];
    if (q.status) {
      names['#status'] = 'status';
      values[':status'] = q.status;
      filters.push('#status = :status');
    }
    if (q.jobType) {
      values[':type'] = q.jobType;
      filters.push('job_type = :type');
    }
    if (q.truncated !== undefined) {
      values[':truncated'] = q.truncated;
      filters.push('truncated = :truncated');
    }
    const start = q.after
      ? { ...keys.job(q.after.job_id), gsi1pk: keys.jobsOfAccount(q.accountId), gsi1sk: keys.jobListPosition(q.after.created_at, q.after.job_id) }
      : undefined;
    const { items, next } = await queryNewestFirst(this.db, { index: GSI1, keyCondition, filters, names, values }, q.limit, start);
    const jobs = items.map((item) => stripKeys<Job>(item));
    // The next page starts after `next` (a job returned, or the last one read): its position is in its index key.
    const position = typeof next?.gsi1sk === 'string' ? next.gsi1sk : '';
    const split = position.indexOf('#');
    return { jobs, last: split > 0 ? { created_at: position.slice(0, split), job_id: position.slice(split + 1) } : undefined };
  }
}
