import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type Bucket, type Charge, type ChargeEffects, type ChargeStore, type CommitOutcome, type LedgerEntry, MAX_BATCH } from '../../core/billing/charging';
import { type Dynamo, queryAll, stripKeys } from './client';
import { eventItem, jobItem } from './jobs';
import { keys } from './schema';

/** The debit for each bucket: the condition that it still covers the amount, and the decrement. */
const DEBITS: Record<Bucket, { condition: string; set: string }> = {
  subscription: {
    condition:
      'subscription.allowance_micros >= :amount AND subscription.#status IN (:active, :trialing) AND subscription.period_end > :now',
    set: 'subscription.allowance_micros = subscription.allowance_micros - :amount',
  },
  free_credits: { condition: 'free_credits_micros >= :amount', set: 'free_credits_micros = free_credits_micros - :amount' },
  credits: { condition: 'credits_micros >= :amount', set: 'credits_micros = credits_micros - :amount' },
};

/**
 * The ledger entry of a charge: written only if the (job, unit) has none yet, which is what makes a charge exactly-once.
 * `commit_token` names the write that made it, so a write whose reply was lost can tell whether it committed.
 */
function ledgerPut(table: string, charge: Charge, bucket: Bucket, at: string, commitToken: string) {
  return {
    Put: {
      TableName: table,
      Item: { ...keys.charge(charge.account_id, charge.job_id, charge.unit), ...charge, bucket, created_at: at, commit_token: commitToken },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/**
 * The account's side of one or more charges: each bucket's share must still be covered (and a subscription
 * usable), each is decremented, and the usage counters move by the total.
 */
function accountDebit(table: string, charges: { charge: Charge; bucket: Bucket }[], at: string) {
  const accountId = charges[0].charge.account_id;
  const share = new Map<Bucket, number>();
  let count = 0;
  let total = 0;
  for (const { charge, bucket } of charges) {
    if (charge.account_id !== accountId) throw new TypeError('the charges of one debit must be of one account');
    share.set(bucket, (share.get(bucket) ?? 0) + charge.amount_micros);
    count += charge.pdf_count;
    total += charge.amount_micros;
  }
  const conditions = ['attribute_exists(pk)'];
  const sets: string[] = [];
  const values: Record<string, unknown> = { ':count': count, ':total': total, ':at': at };
  const names: Record<string, string> = {};
  for (const [bucket, sum] of share) {
    const placeholder = `:amount_${bucket}`;
    conditions.push(DEBITS[bucket].condition.replaceAll(':amount', placeholder));
    sets.push(DEBITS[bucket].set.replaceAll(':amount', placeholder));
    values[placeholder] = sum;
    if (bucket === 'subscription') {
      Object.assign(values, { ':active': 'active', ':trialing': 'trialing', ':now': at });
      names['#status'] = 'status';
    }
  }
  return {
    Update: {
      TableName: table,
      Key: keys.account(accountId),
      ConditionExpression: conditions.join(' AND '),
      UpdateExpression: `SET ${sets.join(', ')}, updated_at = :at ADD total_pdf_count :count, total_amount_micros :total`,
      ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Where a refund puts the amount back: the bucket's balance. An allowance takes it back only while its subscription is
 * usable, holds the current period's allowance, and the charge drew from it (`allowanceTakesRefund`); otherwise it
 * goes to credits.
 */
const CREDITS_BACK: Record<Bucket, { condition: string; set: string }> = {
  subscription: {
    condition:
      'subscription.#status IN (:active, :trialing) AND subscription.period_end > :now AND ' +
      'subscription.period_start <= :chargedAt AND (subscription.allowance_period_start = subscription.period_start OR attribute_not_exists(subscription.allowance_period_start))',
    set: 'subscription.allowance_micros = subscription.allowance_micros + :amount',
  },
  free_credits: { condition: 'attribute_exists(pk)', set: 'free_credits_micros = free_credits_micros + :amount' },
  credits: { condition: 'attribute_exists(pk)', set: 'credits_micros = credits_micros + :amount' },
};

/** The names and values the refund of `bucket` uses beside its amount. */
function refundTerms(bucket: Bucket, entry: LedgerEntry, at: string) {
  return bucket === 'subscription'
    ? { names: { '#status': 'status' }, values: { ':active': 'active', ':trialing': 'trialing', ':now': at, ':chargedAt': entry.created_at } }
    : { names: undefined, values: {} };
}

/** The ledger items of one job (all its units), read consistently; `projection` narrows what is read. */
export function ledgerOfJob(db: Dynamo, accountId: string, jobId: string, projection?: string): Promise<Record<string, unknown>[]> {
  const prefix = keys.charge(accountId, jobId, '');
  return queryAll(db, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': prefix.pk, ':prefix': prefix.sk },
    ...(projection ? { ProjectionExpression: projection } : {}),
    ConsistentRead: true,
  });
}

function isCancelled(err: unknown): boolean {
  return err instanceof TransactionCanceledException || (err as Error)?.name === 'TransactionCanceledException';
}

/**
 * A charge is one DynamoDB transaction: the ledger entry keyed by (job, unit) must not exist yet, the
 * chosen bucket must still cover the amount, usage counters move, and the finished job and its events
 * (if any) are written in the same step, so a job is never completed without its charge or charged twice.
 */
export class DynamoChargeStore implements ChargeStore {
  constructor(private readonly db: Dynamo) {}

  async commit(charge: Charge, bucket: Bucket, now: Date, effects: ChargeEffects = {}): Promise<CommitOutcome> {
    const at = now.toISOString();
    const token = randomUUID();
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            ledgerPut(this.db.table, charge, bucket, at, token),
            accountDebit(this.db.table, [{ charge, bucket }], at),
            // The job moves to its end only from a running state (or is first written here, as a quick job is);
            // a worker's claim, only while its lease is still the job's.
            ...(effects.job
              ? [
                  {
                    Put: {
                      TableName: this.db.table,
                      Item: jobItem(effects.job),
                      ...(effects.leaseUntil !== undefined
                        ? {
                            ConditionExpression: '#status = :processing AND lease_until = :lease',
                            ExpressionAttributeNames: { '#status': 'status' },
                            ExpressionAttributeValues: { ':processing': 'processing', ':lease': effects.leaseUntil },
                          }
                        : {
                            ConditionExpression: 'attribute_not_exists(pk) OR #status IN (:queued, :processing)',
                            ExpressionAttributeNames: { '#status': 'status' },
                            ExpressionAttributeValues: { ':queued': 'queued', ':processing': 'processing' },
                          }),
                    },
                  },
                ]
              : []),
            ...(effects.events ?? []).map((event) => ({ Put: { TableName: this.db.table, Item: eventItem(event) } })),
          ],
        }),
      );
      return 'charged';
    } catch (err) {
      if (isCancelled(err)) {
        const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
        // The SDK's own retry of a write that had committed also lands here: the entry then carries this call's token.
        if (reasons[0]?.Code === 'ConditionalCheckFailed') return (await this.writtenBy(charge, token).catch(() => false)) ? 'charged' : 'already_charged';
        if (effects.job && reasons[2]?.Code === 'ConditionalCheckFailed') return 'job_finished';
        // The bucket no longer covers it, or a concurrent transaction touched the account: re-read and retry.
        return 'bucket_changed';
      }
      // A timeout or dropped connection leaves the outcome unknown; the ledger entry says whether it committed.
      if (await this.writtenBy(charge, token).catch(() => false)) return 'charged';
      throw err;
    }
  }

  /** True when the charge's ledger entry was written by the call holding `token` (its transaction, all or nothing, committed). */
  private async writtenBy(charge: Charge, token: string): Promise<boolean> {
    const { Item } = await this.db.doc.send(
      new GetCommand({ TableName: this.db.table, Key: keys.charge(charge.account_id, charge.job_id, charge.unit), ConsistentRead: true, ProjectionExpression: 'commit_token' }),
    );
    return Item?.commit_token === token;
  }

  async chargesOf(accountId: string, jobId: string): Promise<LedgerEntry[]> {
    return (await ledgerOfJob(this.db, accountId, jobId)).map((item) => stripKeys<LedgerEntry>(item));
  }

  /**
   * The entry marked refunded and the amount back in its bucket, in one transaction; an allowance whose subscription
   * is gone goes to one-off credits instead. `refund_token` tells a write whose reply was lost whether it committed.
   */
  async refund(entry: LedgerEntry, now: Date): Promise<'refunded' | 'already_refunded'> {
    const at = now.toISOString();
    const token = randomUUID();
    const key = keys.charge(entry.account_id, entry.job_id, entry.unit);
    for (const bucket of entry.bucket === 'subscription' ? (['subscription', 'credits'] as const) : [entry.bucket]) {
      try {
        await this.db.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.db.table,
                  Key: key,
                  ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(refunded_at)',
                  UpdateExpression: 'SET refunded_at = :at, refunded_to = :bucket, refund_token = :token',
                  ExpressionAttributeValues: { ':at': at, ':bucket': bucket, ':token': token },
                },
              },
              {
                Update: {
                  TableName: this.db.table,
                  Key: keys.account(entry.account_id),
                  ConditionExpression: CREDITS_BACK[bucket].condition,
                  UpdateExpression: `SET ${CREDITS_BACK[bucket].set}, updated_at = :at ADD total_pdf_count :count, total_amount_micros :total`,
                  ExpressionAttributeNames: refundTerms(bucket, entry, at).names,
                  ExpressionAttributeValues: { ':amount': entry.amount_micros, ':at': at, ':count': -entry.pdf_count, ':total': -entry.amount_micros, ...refundTerms(bucket, entry, at).values },
                },
              },
            ],
          }),
        );
        return 'refunded';
      } catch (err) {
        if (isCancelled(err)) {
          const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
          if (reasons[0]?.Code === 'ConditionalCheckFailed') return (await this.refundedBy(key, token).catch(() => false)) ? 'refunded' : 'already_refunded';
          if (reasons[1]?.Code === 'ConditionalCheckFailed') {
            if (bucket === 'subscription') continue; // the allowance cannot take it back
            throw new Error(`the account of charge ${entry.job_id}/${entry.unit} is gone; nothing was refunded`);
          }
          throw err;
        }
        if (await this.refundedBy(key, token).catch(() => false)) return 'refunded';
        throw err;
      }
    }
    throw new Error('unreachable: the last bucket tried is one-off credits');
  }

  private async refundedBy(key: { pk: string; sk: string }, token: string): Promise<boolean> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: key, ConsistentRead: true, ProjectionExpression: 'refund_token' }));
    return Item?.refund_token === token;
  }

  /** The ledger entries and one debit of the account covering every bucket's share, in one transaction. */
  async commitMany(charges: { charge: Charge; bucket: Bucket }[], now: Date): Promise<'charged' | 'conflict'> {
    if (charges.length === 0) return 'charged';
    if (charges.length > MAX_BATCH) throw new RangeError(`at most ${MAX_BATCH} charges per transaction`);
    const at = now.toISOString();
    const token = randomUUID();
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [...charges.map(({ charge, bucket }) => ledgerPut(this.db.table, charge, bucket, at, token)), accountDebit(this.db.table, charges, at)],
        }),
      );
      return 'charged';
    } catch (err) {
      if (isCancelled(err)) return 'conflict';
      if (await this.writtenBy(charges[0].charge, token).catch(() => false)) return 'charged';
      throw err;
    }
  }
}
