import { newUlid } from '../ids';
import type { Job } from '../jobs/job';

/** Subscribable event names (document 2, Events). `job.timeout` is subscribable but never delivered. */
export const EVENT_TYPES = [
  'job.queued',
  'job.processing',
  'job.completed',
  'job.failed',
  'job.timeout',
  'bulk.job.completed',
  'bulk.job.partial',
  'bulk.job.failed',
  'bulk.job.cancelled',
  'mailmerge.campaign.completed',
  'mailmerge.campaign.partial',
  'mailmerge.campaign.failed',
  'mailmerge.campaign.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const NEVER_DELIVERED: ReadonlySet<EventType> = new Set(['job.timeout']);

/**
 * An event waiting in the outbox. It is written in the same transaction as the job change that caused it,
 * and carries the job's state at that moment; the dispatcher turns it into the delivered payload (adding a
 * fresh signed link for `output_key`, since links expire).
 */
export interface OutboxEvent {
  event_id: string;
  event: EventType;
  account_id: string;
  job_id: string;
  created_at: string;
  /** Spec payload fields known when the event happened (without signed links). */
  payload: Record<string, unknown>;
  /** Stored output whose signed link becomes `s3_url` / `report_url` at delivery. */
  output_key: string | null;
}

/** The common job fields every job event carries. */
function jobFields(job: Job) {
  return { job_id: job.job_id, status: job.status, job_type: job.job_type, mode: job.mode, created_at: job.created_at };
}

/**
 * Builds the outbox event for a job change, with the payload fields document 2 lists for that event kind.
 * `extra` adds kind-specific fields (merge/split `operation`, `input_pages`, …; bulk counters).
 */
export function jobEvent(type: EventType, job: Job, at: Date, extra: Record<string, unknown> = {}): OutboxEvent {
  const base: Record<string, unknown> = { event: type, ...jobFields(job) };
  if (type === 'job.processing') base.started_at = job.started_at;
  if (type === 'job.completed') Object.assign(base, { pages: job.pages, truncated: job.truncated, completed_at: job.completed_at });
  if (type === 'job.failed') Object.assign(base, { error_message: job.error_message, error_code: job.error_code, failed_at: job.completed_at ?? at.toISOString() });
  if (type.startsWith('bulk.job.')) {
    Object.assign(base, {
      bundle_type: job.bundle_type,
      file_count: job.file_count ?? null,
      success_count: job.success_count ?? 0,
      failure_count: job.failure_count ?? 0,
      pages_total: job.pages_total ?? 0,
      error_code: job.error_code,
      completed_at: job.completed_at,
    });
  }
  return {
    event_id: newUlid(),
    event: type,
    account_id: job.account_id,
    job_id: job.job_id,
    created_at: at.toISOString(),
    payload: { ...base, ...extra },
    output_key: job.output?.key ?? null,
  };
}
