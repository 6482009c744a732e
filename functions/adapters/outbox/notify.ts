/**
 * Notify-after-commit for the event outbox. Events are written in the same transaction as the job change
 * that causes them; once that write has committed, these decorators tell the webhook dispatcher (its queue)
 * which events to fan out. A notice that cannot be sent is only logged: the event stays pending in the
 * outbox index and the sweeper hands it to the dispatcher a little later. Domain code knows nothing of this.
 */
import type { Bucket, Charge, ChargeEffects, CommitOutcome } from '../../core/billing/charging';
import type { OutboxEvent } from '../../core/events/events';
import type { Job, JobStatus } from '../../core/jobs/job';
import type { MessageQueue } from '../../core/jobs/queue';
import type { JobStart } from '../../core/jobs/starts';
import type { OutboxNotice } from '../../core/webhooks/ports';
import { DynamoBulkProgress } from '../dynamodb/bulk-progress';
import { DynamoChargeStore } from '../dynamodb/charges';
import type { Dynamo } from '../dynamodb/client';
import { DynamoJobRepository } from '../dynamodb/jobs';

export type OutboxNotifier = (events: readonly OutboxEvent[]) => Promise<void>;

/** Sends one notice per committed event; failures are logged, never thrown (the sweeper covers them). */
export function queueNotifier(queue: () => MessageQueue<OutboxNotice> | null, log: (message: string, err?: unknown) => void): OutboxNotifier {
  return async (events) => {
    if (events.length === 0) return;
    let target: MessageQueue<OutboxNotice> | null;
    try {
      target = queue();
    } catch (err) {
      log('webhook dispatcher queue unavailable; the outbox sweeper will pick the events up', err);
      return;
    }
    if (!target) return;
    await Promise.all(
      events.map((e) =>
        target.send({ job_id: e.job_id, event_id: e.event_id }).catch((err) => log(`could not notify the dispatcher of event ${e.event_id}; the sweeper will`, err)),
      ),
    );
  };
}

/** The job repository that also notifies the dispatcher of the events each committed write carried. */
export class NotifyingJobRepository extends DynamoJobRepository {
  constructor(
    db: Dynamo,
    private readonly notify: OutboxNotifier,
  ) {
    super(db);
  }

  override async put(job: Job, events: OutboxEvent[] = [], start?: JobStart): Promise<void> {
    await super.put(job, events, start);
    await this.notify(events);
  }

  override async putIf(job: Job, from: JobStatus[], events: OutboxEvent[] = [], leaseExpiredBefore?: string, watch?: JobStart): Promise<boolean> {
    const written = await super.putIf(job, from, events, leaseExpiredBefore, watch);
    if (written) await this.notify(events);
    return written;
  }

  override async putIfLeaseHeld(job: Job, leaseUntil: string, events: OutboxEvent[] = []): Promise<boolean> {
    const written = await super.putIfLeaseHeld(job, leaseUntil, events);
    if (written) await this.notify(events);
    return written;
  }
}

/** The charge store that notifies the dispatcher of the events a committed charge carried (e.g. job.completed). */
export class NotifyingChargeStore extends DynamoChargeStore {
  constructor(
    db: Dynamo,
    private readonly notify: OutboxNotifier,
  ) {
    super(db);
  }

  override async commit(charge: Charge, bucket: Bucket, now: Date, effects: ChargeEffects = {}): Promise<CommitOutcome> {
    const outcome = await super.commit(charge, bucket, now, effects);
    if (outcome === 'charged') await this.notify(effects.events ?? []);
    return outcome;
  }
}

/** Bulk progress whose finishing write (bulk.job.* with the finished job) notifies the dispatcher once committed. */
export class NotifyingBulkProgress extends DynamoBulkProgress {
  constructor(
    db: Dynamo,
    private readonly notify: OutboxNotifier,
  ) {
    super(db);
  }

  override async finishJob(job: Job, events: OutboxEvent[], cancelSeen: boolean): Promise<boolean> {
    const written = await super.finishJob(job, events, cancelSeen);
    if (written) await this.notify(events);
    return written;
  }
}
