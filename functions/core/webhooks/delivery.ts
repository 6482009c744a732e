import type { Clock } from '../clock';
import type { EventType } from '../events/events';
import { FetchError, type HttpClient } from '../net/fetch';
import { redactUrl } from '../net/redact-url';
import { SIGNATURE_HEADER, signatureHeader } from './signature';
import type { DeliveryRecord } from './webhook';

/** Per-attempt limit (document 2, Delivery behaviour). */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Waits before the 3 retries. */
export const RETRY_DELAYS_MS: readonly number[] = [1000, 2000, 4000];
/** The service-webhook product token. */
export const WEBHOOK_USER_AGENT = 'PdfService-Webhooks/1.0';
/** Cap on a receiver's answer for a client that reads bodies anyway (the guarded client discards them). */
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

/** Why a series ends before a retry: its webhook is gone, paused or no longer subscribed to the event. */
export interface SeriesStop {
  stop: string;
}

export interface SeriesOptions {
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
  /**
   * Called before each retry (after its wait) with the time of that attempt: the webhook as it is now (its URL
   * and the secrets valid at `at`), or why the series stops. Without it every attempt uses the first target.
   */
  reload?: (at: Date) => Promise<SeriesTarget | SeriesStop>;
  /**
   * Attempts a worker that died made of this series before this one took it over: the series goes on from there, so
   * a series makes at most 1 + `retryDelaysMs.length` attempts whoever makes them. (An attempt counts from when it
   * was about to be sent: the dead worker may or may not have sent it.)
   */
  attemptsBefore?: number;
  /** Called before every attempt after the first with its number (2, 3, …), so that a takeover knows where to go on. */
  onAttempt?: (attempt: number) => Promise<void>;
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
      error_message: `Redirect not followed: HTTP ${status}${location ? ` to ${redactUrl(location, { query: false }).slice(0, 300)}` : ''}. Register the final URL.`,
    };
  }
  // 5xx only: Node accepts any three-digit status, and 600–999 mean nothing a retry could fix.
  if (status === 429 || (status >= 500 && status <= 599)) return { next: 'retry', status: 'failed', status_code: status, error_message: `HTTP ${status} from the receiver` };
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
 * per active secret), 10 s per attempt up to the status line (the body is discarded), redirects returned
 * rather than followed, and the host approved by the network guard on every attempt (the client resolves it
 * again and connects only to checked addresses). Up to 3 retries after 1, 2 and 4 s on network errors,
 * timeouts, 5xx and 429; before each, `reload` gives the webhook as it is then (a rotation, a pause or a
 * delete made meanwhile applies to the retries). The result is the last attempt's outcome (`duration_ms` is
 * that attempt's); a series stopped by `reload` keeps it and says why in `error_message`.
 */
export async function runAttemptSeries(deps: DeliveryDeps, first: SeriesTarget, input: SeriesInput, opts: SeriesOptions = {}): Promise<SeriesResult> {
  const delays = opts.retryDelaysMs ?? RETRY_DELAYS_MS;
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const sleep = deps.sleep ?? defaultSleep;
  const body = Buffer.from(input.body, 'utf8');
  const startedAt = deps.clock.now().toISOString();
  let target = first;
  // Retries are counted over the whole series, the attempts of a worker that died before this one included.
  let retries = Math.max(0, opts.attemptsBefore ?? 0);
  if (retries > delays.length) {
    const at = deps.clock.now().toISOString();
    return {
      status: 'failed',
      status_code: null,
      error_message: `The worker delivering this event stopped during its last attempt; all ${delays.length + 1} attempts are used`,
      retry_count: delays.length,
      started_at: startedAt,
      delivered_at: at,
      duration_ms: 0,
      payload_size_bytes: Buffer.byteLength(input.body),
    };
  }
  for (;;) {
    if (retries > 0) await opts.onAttempt?.(retries + 1);
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
    if (target.secrets.length > 0) headers[SIGNATURE_HEADER] = signatureHeader(body, target.secrets, t);
    const began = performance.now();
    let attempt: Attempt;
    try {
      const res = await deps.http.request({ method: 'POST', url: target.url, headers, body, schemes: ['https:'], maxRedirects: 0, maxBytes: MAX_RESPONSE_BYTES, timeoutMs, discardBody: true });
      attempt = classifyResponse(res.status, res.headers.location);
    } catch (err) {
      attempt = classifyError(err, timeoutMs);
    }
    const durationMs = Math.round(performance.now() - began);
    const endedAt = deps.clock.now().toISOString();
    const outcome = (errorMessage: string | null): SeriesResult => ({
      status: attempt.status,
      status_code: attempt.status_code,
      error_message: errorMessage,
      retry_count: retries,
      started_at: startedAt,
      delivered_at: endedAt,
      duration_ms: durationMs,
      payload_size_bytes: body.byteLength,
    });
    if (attempt.next === 'final' || retries >= delays.length) return outcome(attempt.error_message);
    await sleep(delays[retries]);
    if (opts.reload) {
      const next = await opts.reload(deps.clock.now());
      // Not retried: the record keeps the last attempt's outcome (it is what the receiver last did).
      if ('stop' in next) return outcome(`${attempt.error_message}; retries stopped: ${next.stop}`);
      target = next;
    }
    retries++;
  }
}
