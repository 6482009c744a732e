import type { Clock } from '../clock';
import { mapBounded } from '../concurrency';
import { NEVER_DELIVERED, type OutboxEvent } from '../events/events';
import { newUlid } from '../ids';
import type { HttpClient } from '../net/fetch';
import { signedLink } from '../jobs/access';
import type { BlobStore, JobRepository } from '../jobs/ports';
import { type MessageQueue, deferralDelaySeconds, deferralsOf } from '../jobs/queue';
import type { JobSlots } from '../jobs/slots';
import { type DeliveryDeps, type SeriesResult, type SeriesStop, type SeriesTarget, runAttemptSeries } from './delivery';
import type { DeliveryStore, Outbox, OutboxNotice, WebhookRepository } from './ports';
import type { SecretBox } from './secret-box';
import { type DeliveryRecord, type Webhook, activeSealedSecrets } from './webhook';

/** How long one worker holds an (event, webhook) pair: longer than a whole series (4 × 10 s + 7 s of waits). */
export const DELIVERY_LEASE_MS = 90_000;
/** The sweeper re-sends events still pending after this long (the direct notice had its chance, and any lease ran out). */
export const SWEEP_AFTER_SECONDS = 120;
/** Pending events handled per index shard and run (8 shards, every minute), and how many writes or sends are in flight at once. */
const SWEEP_PER_SHARD = 1000;
const SWEEP_SENDS_IN_FLIGHT = 16;
/**
 * Events of one account dispatched at once, unless the deployment says otherwise. A series to a receiver that times
 * out holds its dispatcher ~47 s; without a cap one account's slow receivers could hold every dispatcher (50 in AWS)
 * while other accounts' events wait.
 */
export const DISPATCHES_PER_ACCOUNT = 10;
/** The longest an event over its account's share waits before it is tried again (the waits double from 2 s up to it). */
export const DISPATCH_DEFER_SECONDS = 30;
/** The slots (core/jobs/slots.ts) that count an account's events being dispatched. */
export const DISPATCH_SLOT_KIND = 'webhook-dispatch';
/** How long a dispatch holds its account's slot at most: the dispatcher's own time limit (functions/queues.ts). */
const DISPATCH_SLOT_LEASE_SECONDS = 120;
/** An event still pending this long is given up (its failures are permanent, or it would flood receivers with stale news). */
export const ABANDON_AFTER_SECONDS = 24 * 3600;

export interface DispatchDeps {
  outbox: Outbox;
  webhooks: WebhookRepository;
  deliveries: DeliveryStore;
  secrets: SecretBox;
  http: HttpClient;
  clock: Clock;
  blobs: Pick<BlobStore, 'signedGetUrl' | 'head'>;
  jobs: Pick<JobRepository, 'get'>;
  /** The account's share of dispatchers, and the queue an event over it goes back to with a delay. */
  slots: JobSlots;
  queue: MessageQueue<OutboxNotice>;
  /** Defaults: DISPATCHES_PER_ACCOUNT and DISPATCH_DEFER_SECONDS (the longest wait between tries). */
  share?: { dispatchesPerAccount?: number; deferSeconds?: number };
  sleep?: DeliveryDeps['sleep'];
  retryDelaysMs?: readonly number[];
  log?: (message: string, err?: unknown) => void;
}

/**
 * The delivered payload: the fields stored with the event (document 2 lists them per kind), a fresh one-hour
 * link for stored output (`s3_url` + `s3_url_expires_at` on `job.completed` and `bulk.job.*`, `report_url` on
 * mail merge events), `event_id` and `timestamp` (when the event happened).
 */
export async function buildPayload(deps: Pick<DispatchDeps, 'blobs' | 'jobs' | 'clock'>, event: OutboxEvent): Promise<Record<string, unknown>> {
  const payload: Record<string, unknown> = { event: event.event, ...event.payload, event_id: event.event_id };
  const kind = event.event;
  const wantsLink = kind === 'job.completed' || kind.startsWith('bulk.job.') || kind.startsWith('mailmerge.');
  if (wantsLink) {
    let link: { url: string; expiresAt: string } | null = null;
    // A link only to a file still stored (a swept or retried event may come after it was removed).
    if (event.output_key && (await deps.blobs.head(event.output_key))) {
      const job = await deps.jobs.get(event.job_id);
      const name = job?.output?.key === event.output_key ? job.output.name : event.output_key.split('/').pop();
      link = await signedLink(deps, event.output_key, name);
    }
    if (kind.startsWith('mailmerge.')) payload.report_url = link?.url ?? null;
    else Object.assign(payload, { s3_url: link?.url ?? null, s3_url_expires_at: link?.expiresAt ?? null });
  }
  payload.timestamp = event.created_at;
  return payload;
}

export type DispatchOutcome = 'missing' | 'already_dispatched' | 'dispatched' | 'in_progress' | 'deferred';

/** A dispatcher message: which event to dispatch (and how often it was deferred); null for a value that is not one. */
export function outboxNoticeOf(value: unknown): OutboxNotice | null {
  const message = value as { job_id?: unknown; event_id?: unknown; deferrals?: unknown } | null;
  if (typeof message?.job_id !== 'string' || typeof message.event_id !== 'string') return null;
  const deferrals = deferralsOf(message);
  return { job_id: message.job_id, event_id: message.event_id, ...(deferrals > 0 ? { deferrals } : {}) };
}

/** A dispatcher message read from its body; null for one that is not (not JSON, no job or event id). */
export function readOutboxNotice(body: string): OutboxNotice | null {
  try {
    return outboxNoticeOf(JSON.parse(body));
  } catch {
    return null;
  }
}

/**
 * Fans one outbox event out to the account's active webhooks subscribed to it (`job.timeout` never goes
 * out). Safe under at-least-once: each (event, webhook) pair is claimed, so a redelivered notice or a swept
 * event never starts a second series for a pair that finished, and a series taken over after a crash keeps its
 * delivery id. The event leaves the pending index once every pair has finished.
 *
 * Fair between accounts: an event is dispatched only in one of its account's dispatch slots
 * (`share.dispatchesPerAccount`). One over the share goes back to the queue with a delay (a new message, so waiting
 * uses up none of the deliveries that count towards the dead-letter queue; the waits double up to
 * `share.deferSeconds`), and its place in the pending index moves to now, so the sweeper does not send it again
 * meanwhile.
 */
export async function dispatchEvent(deps: DispatchDeps, notice: OutboxNotice): Promise<DispatchOutcome> {
  const stored = await deps.outbox.get(notice.job_id, notice.event_id);
  if (!stored) return 'missing';
  if (!stored.pending) return 'already_dispatched';
  const { event } = stored;
  const targets = NEVER_DELIVERED.has(event.event)
    ? []
    : (await deps.webhooks.listForAccount(event.account_id)).filter((w) => deliveryStopReason(w, event.event) === null);
  if (targets.length === 0) {
    await deps.outbox.markDispatched(event.job_id, event.event_id, deps.clock.now().toISOString());
    return 'dispatched';
  }
  // This dispatch's own slot: if its lease runs out and the event is dispatched again meanwhile, this one's late
  // release gives back only what it took.
  const slot = { accountId: event.account_id, kind: DISPATCH_SLOT_KIND, jobId: dispatchSlotHolder(event), holder: newUlid() };
  const now = deps.clock.now();
  const max = deps.share?.dispatchesPerAccount ?? DISPATCHES_PER_ACCOUNT;
  if (!(await deps.slots.acquire({ ...slot, max, now, leaseSeconds: DISPATCH_SLOT_LEASE_SECONDS }))) {
    const deferrals = (notice.deferrals ?? 0) + 1;
    await deps.outbox.postpone(event.job_id, event.event_id, now.toISOString());
    await deps.queue.send({ job_id: event.job_id, event_id: event.event_id, deferrals }, { delaySeconds: deferralDelaySeconds(deferrals, deps.share?.deferSeconds ?? DISPATCH_DEFER_SECONDS) });
    return 'deferred';
  }
  try {
    return await fanOut(deps, event, targets);
  } finally {
    // If this fails the slot frees itself when its lease runs out.
    await deps.slots.release(slot).catch((err) => deps.log?.(`could not give back the dispatch slot of event ${event.event_id}`, err));
  }
}

/** What a dispatch slot names as its holder: the event being dispatched. */
const dispatchSlotHolder = (notice: OutboxNotice) => `${notice.job_id}/${notice.event_id}`;

/**
 * A dispatch whose process died in the middle of it (the local queue knows such deliveries at its next start): its
 * slot in the account's share is given back at once. Held until its lease ran out (2 minutes), it kept the account's
 * other events, new ones too, waiting. Its (event, webhook) pairs keep their claims, taken over once those run out.
 */
export async function releaseDeadDispatch(deps: { outbox: Pick<Outbox, 'get'>; slots: JobSlots }, notice: OutboxNotice): Promise<void> {
  const stored = await deps.outbox.get(notice.job_id, notice.event_id);
  if (!stored) return;
  await deps.slots.release({ accountId: stored.event.account_id, kind: DISPATCH_SLOT_KIND, jobId: dispatchSlotHolder(notice) });
}

async function fanOut(deps: DispatchDeps, event: OutboxEvent, targets: Webhook[]): Promise<DispatchOutcome> {
  // One payload (one signed link) for every webhook of this run, built only when someone is called.
  let body: Promise<string> | null = null;
  const payloadBody = () => (body ??= buildPayload(deps, event).then((p) => JSON.stringify(p)));
  // Every pair runs to its end even when another fails; a failure then makes the whole notice come again (pairs
  // that finished are not repeated).
  const settled = await Promise.allSettled(targets.map((webhook) => deliverTo(deps, event, webhook, payloadBody)));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  if (settled.every((s) => s.status === 'fulfilled' && s.value)) {
    await deps.outbox.markDispatched(event.job_id, event.event_id, deps.clock.now().toISOString());
    return 'dispatched';
  }
  return 'in_progress';
}

/** Why `webhook` (as stored now) must not be called for `event` any more; null when it may. */
export function deliveryStopReason(webhook: Webhook | null, event: OutboxEvent['event']): string | null {
  if (!webhook) return 'the webhook was deleted';
  if (!webhook.is_active) return 'the webhook was paused (is_active false)';
  if (!webhook.events.includes(event)) return `the webhook no longer subscribes to ${event}`;
  return null;
}

/** A webhook's stored signing secret that cannot be unsealed (a lost or changed WEBHOOK_SECRETS_KEY): retrying cannot help. */
class SecretUnreadable extends Error {}

/** Where and how an attempt made at `at` goes: the webhook's URL and the secrets that sign at that moment. */
function targetOf(deps: Pick<DispatchDeps, 'secrets'>, webhook: Webhook, at: Date): SeriesTarget {
  let secrets: string[];
  try {
    secrets = activeSealedSecrets(webhook, at).map((sealed) => deps.secrets.open(sealed, webhook.webhook_id));
  } catch (err) {
    throw new SecretUnreadable(`the signing secret of webhook ${webhook.webhook_id} cannot be read`, { cause: err });
  }
  return { webhook_id: webhook.webhook_id, url: webhook.url, secrets };
}

/** One (event, webhook) pair; false when another worker is still delivering it. */
async function deliverTo(deps: DispatchDeps, event: OutboxEvent, listed: Webhook, payloadBody: () => Promise<string>): Promise<boolean> {
  const now = deps.clock.now();
  const pair = { job_id: event.job_id, event_id: event.event_id, webhook_id: listed.webhook_id };
  const claim = await deps.deliveries.claim({ ...pair, delivery_id: newUlid(), lease_until: new Date(now.getTime() + DELIVERY_LEASE_MS).toISOString(), now: now.toISOString() });
  if (claim.state === 'done') return true;
  if (claim.state === 'busy') return false;
  const body = await payloadBody();
  // The series starts: `last_triggered_at` now, and the webhook read back (the list comes from an index that may
  // lag): paused, unsubscribed or deleted since it was listed, it is not called.
  const startedAt = deps.clock.now();
  const webhook = await deps.webhooks.markTriggered(listed.webhook_id, event.event, startedAt.toISOString());
  if (!webhook) {
    await deps.deliveries.release({ ...pair, delivery_id: claim.delivery_id, at: startedAt.toISOString() });
    return true;
  }
  // Before each retry the webhook is read again: a rotation, pause, unsubscription or delete made during the
  // series applies to the attempts still to come.
  const reload = async (at: Date): Promise<SeriesTarget | SeriesStop> => {
    const current = await deps.webhooks.get(webhook.webhook_id);
    const stop = deliveryStopReason(current, event.event);
    return stop ? { stop } : targetOf(deps, current!, at);
  };
  let result: SeriesResult;
  try {
    const first = targetOf(deps, webhook, startedAt);
    result = await runAttemptSeries(
      { http: deps.http, clock: deps.clock, sleep: deps.sleep },
      first,
      { delivery_id: claim.delivery_id, event_type: event.event, body },
      {
        retryDelaysMs: deps.retryDelaysMs,
        reload,
        attemptsBefore: claim.attempts_before,
        // Best effort: a note that fails only lets a takeover repeat the attempts made since the last one noted.
        onAttempt: (attempt) =>
          deps.deliveries.noteAttempt({ ...pair, delivery_id: claim.delivery_id, attempt }).catch((err) => deps.log?.(`could not note attempt ${attempt} of delivery ${claim.delivery_id}`, err)),
      },
    );
  } catch (err) {
    if (!(err instanceof SecretUnreadable)) throw err;
    // A secret that cannot be unsealed stays so on every try: one failed record, not a retry forever.
    deps.log?.(`webhook ${webhook.webhook_id}: signing secret unreadable`, err.cause);
    result = {
      status: 'failed',
      status_code: null,
      error_message: 'Not sent: the signing secret could not be read. Rotate it (POST /accounts/me/webhooks/{webhook_id}/rotate-secret).',
      retry_count: 0,
      started_at: startedAt.toISOString(),
      delivered_at: deps.clock.now().toISOString(),
      duration_ms: 0,
      payload_size_bytes: Buffer.byteLength(body),
    };
  }
  const record: DeliveryRecord = {
    delivery_id: claim.delivery_id,
    webhook_id: webhook.webhook_id,
    account_id: event.account_id,
    job_id: event.job_id,
    event_id: event.event_id,
    event_type: event.event,
    ...result,
    started_at: startedAt.toISOString(), // the webhook's last_triggered_at for this series
  };
  await deps.deliveries.complete(record);
  if (record.status !== 'success') deps.log?.(`webhook ${webhook.webhook_id} delivery ${record.delivery_id} ${record.status}: ${record.error_message}`);
  return true;
}

/**
 * The sweeper (a scheduled Lambda in AWS, a timer in the local stack): events still pending some time after
 * they were written — their notice was lost, or the dispatcher failed — are sent to the dispatcher again.
 */
export async function sweepOutbox(
  deps: { outbox: Outbox; queue: MessageQueue<OutboxNotice>; clock: Clock; log?: (message: string) => void },
  opts: { olderThanSeconds?: number; perShard?: number } = {},
): Promise<{ sent: number; abandoned: number }> {
  const now = deps.clock.now();
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
  // Up to SWEEP_PER_SHARD a run, so events that keep failing cannot hold back the others of their shard for long.
  const perShard = opts.perShard ?? SWEEP_PER_SHARD;
  let sent = 0;
  let abandoned = 0;
  const abandonBefore = ago(ABANDON_AFTER_SECONDS);
  for (let shard = 0; shard < deps.outbox.shards; shard++) {
    const pending = await deps.outbox.listPending(shard, ago(opts.olderThanSeconds ?? SWEEP_AFTER_SECONDS), perShard);
    // Oldest first: what has been pending for a day leaves the index (it stays stored with its job).
    const stale = pending.filter((event) => event.created_at < abandonBefore);
    await mapBounded(stale, SWEEP_SENDS_IN_FLIGHT, async (event) => {
      await deps.outbox.markDispatched(event.job_id, event.event_id, now.toISOString());
      deps.log?.(`outbox event ${event.event_id} of job ${event.job_id} given up after ${ABANDON_AFTER_SECONDS / 3600} h pending`);
    });
    abandoned += stale.length;
    const due = pending.filter((event) => event.created_at >= abandonBefore).map(({ job_id, event_id }): OutboxNotice => ({ job_id, event_id }));
    await mapBounded(due, SWEEP_SENDS_IN_FLIGHT, (notice) => deps.queue.send(notice));
    sent += due.length;
  }
  return { sent, abandoned };
}
