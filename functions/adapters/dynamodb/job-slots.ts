import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { JobSlots } from '../../core/jobs/slots';
import { writtenAfterAll } from '../../core/lost-replies';
import { type Dynamo, conditional } from './client';
import { keys } from './schema';

/**
 * Slots are items `ACCOUNT#<id>` / `SLOT#<kind>#<n>`, n < max. Taking one is a conditional put that succeeds
 * when the slot is free or its lease has run out, so concurrent submissions can never hold more than `max`.
 * The slots are read first and only those that look free are tried: a job that finds every slot held (a long job
 * over its account's share, asked again and again) costs one read, not `max` failed writes.
 */
export class DynamoJobSlots implements JobSlots {
  constructor(private readonly db: Dynamo) {}

  async acquire(input: { accountId: string; kind: string; jobId: string; holder?: string; max: number; now: Date; leaseSeconds: number }): Promise<boolean> {
    const leaseEnd = new Date(input.now.getTime() + input.leaseSeconds * 1000);
    const held = new Set((await this.slotsOf(input.accountId, input.kind)).filter((i) => String(i.lease_until) >= input.now.toISOString()).map((i) => String(i.sk)));
    for (let n = 0; n < input.max; n++) {
      const key = keys.jobSlot(input.accountId, input.kind, n);
      if (held.has(key.sk)) continue;
      const item = {
        ...key,
        job_id: input.jobId,
        holder: input.holder ?? input.jobId,
        acquired_at: input.now.toISOString(),
        lease_until: leaseEnd.toISOString(),
        ttl: Math.ceil(leaseEnd.getTime() / 1000) + 86_400,
      };
      let taken: unknown;
      try {
        taken = await conditional(() =>
          this.db.doc.send(
            new PutCommand({
              TableName: this.db.table,
              Item: item,
              ConditionExpression: 'attribute_not_exists(pk) OR lease_until < :now',
              ExpressionAttributeValues: { ':now': input.now.toISOString() },
            }),
          ),
        );
      } catch (err) {
        // A put whose reply was lost may have taken the slot: unclaimed, it stayed held for its whole lease (a long
        // job's render slot ~16 minutes, while the job that took it was deferred again and again behind it).
        if (await writtenAfterAll(() => this.isHeldAs(item))) return true;
        throw err;
      }
      if (taken) return true;
    }
    return false;
  }

  /** Whether the slot item is the one this acquire wrote (same holder, same lease). */
  private async isHeldAs(item: { pk: string; sk: string; holder: string; lease_until: string }): Promise<boolean> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: { pk: item.pk, sk: item.sk }, ConsistentRead: true }));
    return Item?.holder === item.holder && Item?.lease_until === item.lease_until;
  }

  async release(input: { accountId: string; kind: string; jobId: string; holder?: string }): Promise<void> {
    for (const item of await this.slotsOf(input.accountId, input.kind)) {
      if (item.job_id !== input.jobId || (input.holder !== undefined && item.holder !== input.holder)) continue;
      // Taken over meanwhile (by another job, or by another attempt at this one): not ours to delete.
      await conditional(() =>
        this.db.doc.send(
          new DeleteCommand({
            TableName: this.db.table,
            Key: { pk: item.pk, sk: item.sk },
            ConditionExpression: input.holder === undefined ? 'job_id = :job' : 'job_id = :job AND holder = :holder',
            ExpressionAttributeValues: input.holder === undefined ? { ':job': input.jobId } : { ':job': input.jobId, ':holder': input.holder },
          }),
        ),
      );
    }
  }

  async holders(input: { accountId: string; kind: string; now: Date; takenBefore?: Date }): Promise<string[]> {
    const live = (await this.slotsOf(input.accountId, input.kind)).filter(
      (i) => String(i.lease_until) >= input.now.toISOString() && (!input.takenBefore || String(i.acquired_at) < input.takenBefore.toISOString()),
    );
    return [...new Set(live.map((i) => String(i.job_id)))];
  }

  private async slotsOf(accountId: string, kind: string): Promise<Record<string, unknown>[]> {
    const { Items } = await this.db.doc.send(
      new QueryCommand({
        TableName: this.db.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.account(accountId).pk, ':prefix': keys.jobSlotPrefix(kind) },
        ConsistentRead: true,
      }),
    );
    return Items ?? [];
  }
}
