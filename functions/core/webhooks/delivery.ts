import type { Clock } from '../clock';
import type { EventType } from '../events/events';
import { FetchError, type HttpClient } from '../net/fetch';
import { signatureHeader } from './signature';
import type { DeliveryRecord } from './webhook';

/** Per-attempt limit (document 2, Delivery behaviour). */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Waits before the 3 retries. */
export const RETRY_DELAYS_MS: readonly number[] = [1000, 2000, 4000];
/** The service-webhook product token. */
export const WEBHOOK_USER_AGENT = 'PdfService-Webhooks/1.0';
/** A receiver's answer is read up to this size (its body is ignored). */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface DeliveryDeps {
  http: HttpClient;
  clock: Clock;
  /** Injected by unit tests; a real timer otherwise. */
  sleep?: (ms: number) => Promise<void>;
}

export interface SeriesTarget {
  webhook_id: string;
  url: string;
  /** Plaintext secrets that sign (none: an unsigned legacy webhook). */
  secrets: string[];
}

export interface SeriesInput {
  delivery_id: string;
  event_type: EventType;
  /** The JSON payload, identical on every attempt of the series. */
  body: string;
}

export type SeriesResult = Pick<
  DeliveryRecord,
  'status' | 'status_code' | 'error_message' | 'retry_count' | 'started_at' | 'delivered_at' | 'duration_ms' | 'payload_size_bytes'
>;

interface Attempt {
  /** `retry`: network error, timeout, 5xx or 429; `final`: success or a failure retrying cannot fix. */
  next: 'final' | 'retry';
  status: DeliveryRecord['status'];
  status_code: number | null;
  error_message: string | null;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What one attempt's outcome means for the series. */
export function classifyResponse(status: number, location?: string): Attempt {
  if (status >= 200 && status < 300) return { next: 'final', status: 'success', status_code: status, error_message: null };
  if (status >= 300 && status < 400) {
    return {
      next: 'final',
      status: 'failed',
      status_code: status,
      error_message: `Redirect not followed: HTTP ${status}${location ? ` to ${location.slice(0, 300)}` : ''}. Register the final URL.`,
    };
  }
  if (status === 429 || status >= 500) return { next: 'retry', status: 'failed', status_code: status, error_message: `HTTP ${status} from the receiver` };
  return { next: 'final', status: 'failed', status_code: status, error_message: `HTTP ${status} from the receiver (not retried)` };
}

export function classifyError(err: unknown, timeoutMs: number): Attempt {
  if (err instanceof FetchError) {
    switch (err.kind) {
      case 'blocked':
        return { next: 'final', status: 'failed', status_code: null, error_message: `Delivery blocked: ${err.message.replace(/^Blocked /, '')}` };
      case 'timeout':
        return { next: 'retry', status: 'timeout', status_code: null, error_message: `No complete response within ${timeoutMs / 1000} seconds` };
      case 'dns':
      case 'connect':
      case 'tls':
      case 'bad_response':
        return { next: 'retry', status: 'failed', status_code: null, error_message: `Network error: ${err.message}` };
      case 'too_large':
        return { next: 'final', status: 'failed', status_code: null, error_message: `The receiver's response exceeded ${MAX_RESPONSE_BYTES} bytes` };
      default:
        return { next: 'final', status: 'failed', status_code: null, error_message: err.message };
    }
  }
  return { next: 'retry', status: 'failed', status_code: null, error_message: `Network error: ${(err as Error)?.message ?? String(err)}` };
}

/**
 * One attempt series: POST with the delivery headers, re-signed with a fresh `t` on every attempt (one `v1`
 * per active secret), 10 s per attempt, redirects returned rather than followed, and the host approved by
 * the network guard on every attempt (the client resolves it again and connects only to checked addresses).
 * Up to 3 retries after 1, 2 and 4 s on network errors, timeouts, 5xx and 429. The result is the last
 * attempt's outcome; `duration_ms` is that attempt's duration.
 */
export async function runAttemptSeries(
  deps: DeliveryDeps,
  target: SeriesTarget,
  input: SeriesInput,
  opts: { retryDelaysMs?: readonly number[]; timeoutMs?: number } = {},
): Promise<SeriesResult> {
  const delays = opts.retryDelaysMs ?? RETRY_DELAYS_MS;
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const sleep = deps.sleep ?? defaultSleep;
  const body = Buffer.from(input.body, 'utf8');
  const startedAt = deps.clock.now().toISOString();
  let retries = 0;
  for (;;) {
    const at = deps.clock.now();
    const t = Math.floor(at.getTime() / 1000);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': WEBHOOK_USER_AGENT,
      'X-Webhook-Event': input.event_type,
      'X-Webhook-Id': target.webhook_id,
      'X-Webhook-Delivery-Id': input.delivery_id,
      'X-Webhook-Timestamp': at.toISOString(),
    };
    if (target.secrets.length > 0) headers['Service-Signature'] = signatureHeader(body, target.secrets, t);
    const began = performance.now();
    let attempt: Attempt;
    try {
      const res = await deps.http.request({ method: 'POST', url: target.url, headers, body, schemes: ['https:'], maxRedirects: 0, maxBytes: MAX_RESPONSE_BYTES, timeoutMs });
      attempt = classifyResponse(res.status, res.headers.location);
    } catch (err) {
      attempt = classifyError(err, timeoutMs);
    }
    const durationMs = Math.round(performance.now() - began);
    if (attempt.next === 'final' || retries >= delays.length) {
      return {
        status: attempt.status,
        status_code: attempt.status_code,
        error_message: attempt.error_message,
        retry_count: retries,
        started_at: startedAt,
        delivered_at: deps.clock.now().toISOString(),
        duration_ms: durationMs,
        payload_size_bytes: body.byteLength,
      };
    }
    await sleep(delays[retries]);
    retries++;
  }
}
