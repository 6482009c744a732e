/**
 * Webhook signatures (document 2, Events → Signing). Self-contained on purpose: it imports nothing but
 * node:crypto, so customers can copy this file into their receiver as it is.
 *
 * Header `Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]` — one `v1` per active secret (two during
 * a rotation's grace period). `v1` is the hex HMAC-SHA256 of `<t>.<raw request body>` keyed by the secret.
 * The format is Stripe's, so `stripe.webhooks.constructEvent(body, header, secret)` accepts it too.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Service-Signature';
/** Receivers reject a `t` more than 5 minutes away from their clock. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

type RawBody = string | Uint8Array;

/** The hex HMAC-SHA256 of `<t>.<raw body>` keyed by `secret`. */
export function computeSignature(secret: string, timestamp: number, rawBody: RawBody): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** The header value for a body signed at `timestamp` with every active secret. */
export function signatureHeader(rawBody: RawBody, secrets: readonly string[], timestamp: number): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${computeSignature(s, timestamp, rawBody)}`)].join(',');
}

/** `t` and every `v1` of a header; null when it is not of the documented form. */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) {
      signatures.push(value.toLowerCase());
    }
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

/**
 * Verifies a delivery: true when `t` is within `toleranceSeconds` of now and any `v1` matches any of
 * `secrets` (compared in constant time). Pass the raw request bytes exactly as received — a body parsed and
 * re-serialised will not match. `secrets` may hold the old and the new secret while you rotate.
 */
export function verifyWebhookSignature(
  rawBody: RawBody,
  header: string | null | undefined,
  secrets: string | readonly string[],
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (typeof header !== 'string' || (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array))) return false;
  const parsed = parseSignatureHeader(header);
  if (!parsed || Math.abs(nowSeconds - parsed.timestamp) > toleranceSeconds) return false;
  const given = parsed.signatures.map((s) => Buffer.from(s, 'hex'));
  let match = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    if (typeof secret !== 'string' || secret === '') continue;
    const expected = Buffer.from(computeSignature(secret, parsed.timestamp, rawBody), 'hex');
    // Every pair is compared (no early exit), each comparison in constant time.
    for (const candidate of given) if (timingSafeEqual(candidate, expected)) match = true;
  }
  return match;
}
