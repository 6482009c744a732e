import type { EventType, OutboxEvent } from '../events/events';
import type { DeliveryRecord, Webhook } from './webhook';

/** Fields PUT may change (never counters or secrets). */
export type WebhookChanges = Partial<Pick<Webhook, 'name' | 'url' | 'events' | 'is_active'>> & { updated_at: string };

export type SecretChanges = Pick<Webhook, 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at' | 'updated_at'>;

export interface WebhookRepository {
  get(webhookId: string): Promise<Webhook | null>;
  /**
   * Creates the webhook unless the account already holds `maxAllowed` (checked and counted in the same
   * write, so concurrent creations cannot pass the limit); `limit` carries the count found.
   */
  create(webhook: Webhook, maxAllowed: number): Promise<{ created: true } | { created: false; currentCount: number }>;
  /** Changes only the given fields (counters written by deliveries meanwhile are kept); null when gone. */
  update(webhookId: string, changes: WebhookChanges): Promise<Webhook | null>;
  /**
   * Replaces the signing secrets if the current secret is still `seenSecret` (the one the rotation was computed from):
   * null when the webhook is gone, `changed` when another rotation wrote first (the caller reads it again and retries).
   */
  updateSecrets(webhookId: string, changes: SecretChanges, seenSecret: string | null): Promise<Webhook | null | 'changed'>;
  /**
   * The start of a delivery series: sets `last_triggered_at` to `at` on a webhook that is still active and
   * subscribed to `event`, and returns it as stored (read after the write, so its URL and secrets are current).
   * null when it is gone, paused or no longer subscribed: then nothing is written and nothing is sent.
   */
  markTriggered(webhookId: string, event: EventType, at: string): Promise<Webhook | null>;
  /** false when no such webhook of this account exists. */
  delete(accountId: string, webhookId: string): Promise<boolean>;
  /** Every webhook of the account, newest first (at most the plan's maximum). */
  listForAccount(accountId: string): Promise<Webhook[]>;
}

export interface HistoryQuery {
  limit: number;
  /** Continue after this delivery id (newest first). */
  after?: string;
  status?: DeliveryRecord['status'];
  eventType?: EventType;
}

/**
 * `claimed` carries `attempts_before`: the attempts a worker that died made of the series (0 for a new claim; at
 * least 1 when one was taken over, since its worker may have sent the first before it died).
 */
export type ClaimResult = { state: 'claimed'; delivery_id: string; attempts_before: number } | { state: 'done' } | { state: 'busy' };

/** Delivery series and their history records. */
export interface DeliveryStore {
  /**
   * Takes the (event, webhook) pair for one attempt series: a new claim gets `deliveryId`; a claim whose
   * worker died (lease over) is taken over keeping its original delivery id; a finished one is `done`; one
   * another worker is still delivering is `busy`.
   */
  claim(input: { job_id: string; event_id: string; webhook_id: string; delivery_id: string; lease_until: string; now: string }): Promise<ClaimResult>;
  /**
   * Writes the history record, closes the claim and moves the webhook's counters (`success_count` /
   * `failure_count`, `last_success_at` / `last_failure_at`), in one step (once per series). `last_triggered_at`
   * is left as the series' start set it.
   */
  complete(record: DeliveryRecord): Promise<void>;
  /** Notes on the claim (still this series') that attempt `attempt` is about to be sent, for a takeover to go on from. */
  noteAttempt(input: { job_id: string; event_id: string; webhook_id: string; delivery_id: string; attempt: number }): Promise<void>;
  /** Closes a claim whose series never started (the webhook was paused, unsubscribed or deleted first): no record. */
  release(input: { job_id: string; event_id: string; webhook_id: string; delivery_id: string; at: string }): Promise<void>;
  listForWebhook(webhookId: string, query: HistoryQuery): Promise<{ records: DeliveryRecord[]; last?: string }>;
  listForJob(jobId: string, query: HistoryQuery): Promise<{ records: DeliveryRecord[]; last?: string }>;
}

/** The event outbox as the dispatcher and the sweeper see it. */
export interface Outbox {
  get(jobId: string, eventId: string): Promise<{ event: OutboxEvent; pending: boolean } | null>;
  /** Removes the event from the pending index (it stays stored with the job). */
  markDispatched(jobId: string, eventId: string, at: string): Promise<void>;
  /**
   * Moves a pending event's place in the pending index to `at` (no-op once dispatched): the sweeper lists it again
   * only two minutes after that. For an event sent back to the queue because its account had its share of dispatchers.
   */
  postpone(jobId: string, eventId: string, at: string): Promise<void>;
  /** Pending events of one index shard whose place (written, or last postponed) is before `before`, oldest first. */
  listPending(shard: number, before: string, limit: number): Promise<PendingEvent[]>;
  readonly shards: number;
}

/** The dispatcher queue's message: which event to fan out. */
export interface OutboxNotice {
  job_id: string;
  event_id: string;
  /** How often the event was sent back already because its account had its share of dispatchers (absent: never). */
  deferrals?: number;
}

/** An event still waiting in the pending index, with the time it was written (not when it was last postponed). */
export interface PendingEvent extends OutboxNotice {
  created_at: string;
}
