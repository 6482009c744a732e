import type { EventType } from '../events/events';

/** A webhook as stored. Secrets are sealed (see secret-box.ts); the plaintext is shown only on creation and rotation. */
export interface Webhook {
  webhook_id: string;
  account_id: string;
  name: string;
  url: string;
  events: EventType[];
  is_active: boolean;
  /** The current secret, sealed; null for webhooks made before signing existed (unsigned deliveries). */
  secret_sealed: string | null;
  /** The rotated-out secret, still signing until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  last_triggered_at: string | null;
  last_success_at: string | null;
  last_failure_at: string | null;
  success_count: number;
  failure_count: number;
}

/** One attempt series to one webhook for one event, as the history routes show it. */
export interface DeliveryRecord {
  delivery_id: string;
  webhook_id: string;
  account_id: string;
  job_id: string;
  event_id: string;
  event_type: EventType;
  status: 'success' | 'failed' | 'timeout';
  status_code: number | null;
  error_message: string | null;
  retry_count: number;
  /** When the series started (what the webhook's `last_triggered_at` was set to then). */
  started_at: string;
  /** When the last attempt ended. */
  delivered_at: string;
  duration_ms: number;
  payload_size_bytes: number;
}

/** The sealed secrets that sign a delivery made at `now`: the current one, and the previous one during its grace period. */
export function activeSealedSecrets(webhook: Webhook, now: Date): string[] {
  const out: string[] = [];
  if (webhook.secret_sealed) out.push(webhook.secret_sealed);
  if (webhook.previous_secret_sealed && webhook.previous_secret_expires_at && webhook.previous_secret_expires_at > now.toISOString()) {
    out.push(webhook.previous_secret_sealed);
  }
  return out;
}

/**
 * The webhook resource of document 2; `secret` only when it was just created or rotated, and
 * `previous_secret_expires_at` only while a rotated-out secret still signs (absent, not null, otherwise).
 */
export function presentWebhook(webhook: Webhook, now: Date, secret?: string) {
  const graceRunning = !!webhook.previous_secret_sealed && !!webhook.previous_secret_expires_at && webhook.previous_secret_expires_at > now.toISOString();
  return {
    webhook_id: webhook.webhook_id,
    name: webhook.name,
    url: webhook.url,
    events: webhook.events,
    is_active: webhook.is_active,
    signing_enabled: webhook.secret_sealed !== null,
    ...(secret !== undefined ? { secret } : {}),
    ...(graceRunning ? { previous_secret_expires_at: webhook.previous_secret_expires_at } : {}),
    created_at: webhook.created_at,
    updated_at: webhook.updated_at,
    last_triggered_at: webhook.last_triggered_at,
    last_success_at: webhook.last_success_at,
    last_failure_at: webhook.last_failure_at,
    success_count: webhook.success_count,
    failure_count: webhook.failure_count,
  };
}

/** A history record as the history routes show it (`status_code` and `error_message` only when there is one). */
export function presentDelivery(record: DeliveryRecord) {
  return {
    delivery_id: record.delivery_id,
    webhook_id: record.webhook_id,
    job_id: record.job_id,
    event_type: record.event_type,
    status: record.status,
    ...(record.status_code !== null ? { status_code: record.status_code } : {}),
    ...(record.error_message !== null ? { error_message: record.error_message } : {}),
    retry_count: record.retry_count,
    delivered_at: record.delivered_at,
    duration_ms: record.duration_ms,
    payload_size_bytes: record.payload_size_bytes,
  };
}
