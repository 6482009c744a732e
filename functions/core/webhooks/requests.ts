import { EVENT_TYPES, type EventType } from '../events/events';
import { ServiceError, invalidParameter } from '../errors';
import { BlockedTargetError, type NetworkGuard } from '../net/guard';
import type { DeliveryRecord } from './webhook';

export const MAX_URL_LENGTH = 2048;
export const MAX_NAME_LENGTH = 100;
export const DEFAULT_EVENTS: EventType[] = ['job.completed'];
export const DEFAULT_GRACE_SECONDS = 86_400;
export const MAX_GRACE_SECONDS = 604_800;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
export const DELIVERY_STATUSES = ['success', 'failed', 'timeout'] as const;

type UrlChecker = Pick<NetworkGuard, 'checkLiteral'>;

function badUrl(reason: string, url?: unknown): ServiceError {
  return new ServiceError(
    'INVALID_WEBHOOK_URL',
    `The webhook URL is not accepted: ${reason}. Use a public https:// URL of at most ${MAX_URL_LENGTH} characters.`,
    { reason, ...(typeof url === 'string' ? { url: url.slice(0, 200) } : {}) },
  );
}

/**
 * The URL rules of document 2: HTTPS, 1 to 2048 characters, no credentials, and a host the network guard's
 * DNS-free rules accept (no localhost / .localhost / .local / .internal names, no private, loopback,
 * link-local, CGNAT, reserved or IPv4-mapped addresses in any notation). Names are resolved again at delivery.
 */
export function validateWebhookUrl(value: unknown, guard: UrlChecker): string {
  if (value === undefined || value === null) throw badUrl('url is required');
  if (typeof value !== 'string') throw badUrl('url must be a string');
  if (value.length === 0) throw badUrl('url is empty');
  if (value.length > MAX_URL_LENGTH) throw badUrl(`url is ${value.length} characters long`, value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badUrl('not a valid absolute URL', value);
  }
  if (url.protocol !== 'https:') throw badUrl(`the scheme is ${url.protocol.replace(/:$/, '')}, not https`, value);
  if (url.username || url.password) throw badUrl('URLs with a user name or password are not allowed', value);
  const port = url.port ? Number(url.port) : 443;
  const verdict = guard.checkLiteral(url.hostname, port);
  if (!verdict.allowed) throw badUrl(verdict.reason, value);
  return value;
}

/** How long registration waits for DNS before leaving the resolving check to delivery. */
const REGISTRATION_DNS_WAIT_MS = 2_000;

/**
 * The resolving half of the URL rules, at registration: a name with a private, loopback or reserved address
 * among its answers is refused now, not only at delivery (which resolves and checks again on every attempt).
 * A name that does not resolve (yet), or not within two seconds, is accepted: DNS may be set up after the
 * webhook, and delivery reports it in the history.
 */
export async function assertPublicWebhookHost(url: string, guard: Pick<NetworkGuard, 'approve'>): Promise<void> {
  const { hostname, port } = new URL(url);
  let timer: NodeJS.Timeout | undefined;
  const wait = new Promise<void>((resolve) => (timer = setTimeout(resolve, REGISTRATION_DNS_WAIT_MS)));
  try {
    await Promise.race([guard.approve(hostname, port ? Number(port) : 443), wait]);
  } catch (err) {
    if (err instanceof BlockedTargetError) throw badUrl(err.reason, url);
    // ResolveError: not resolvable now; delivery decides.
  } finally {
    clearTimeout(timer);
  }
}

/** `events`: a non-empty array of subscribable event names (duplicates dropped, order kept). */
export function parseEvents(value: unknown): EventType[] {
  const allowed = EVENT_TYPES as readonly string[];
  if (!Array.isArray(value) || value.length === 0) {
    throw new ServiceError('INVALID_EVENTS', 'events must be a non-empty array of event names, e.g. ["job.completed", "job.failed"].', { allowed: EVENT_TYPES });
  }
  const invalid = value.filter((e) => typeof e !== 'string' || !allowed.includes(e));
  if (invalid.length > 0) {
    throw new ServiceError('INVALID_EVENTS', `Unknown event name${invalid.length > 1 ? 's' : ''}: ${invalid.map((e) => JSON.stringify(e)).join(', ')}. See details.allowed.`, {
      invalid,
      allowed: EVENT_TYPES,
    });
  }
  return [...new Set(value as EventType[])];
}

function object(body: unknown, example: string): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidParameter('body', `Send a JSON object, e.g. ${example}.`);
  return body as Record<string, unknown>;
}

function parseName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > MAX_NAME_LENGTH) {
    throw invalidParameter('name', `name must be a non-empty string of at most ${MAX_NAME_LENGTH} characters.`);
  }
  return value.trim();
}

function parseActive(value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidParameter('is_active', 'is_active must be true or false.');
  return value;
}

export interface CreateWebhookRequest {
  name: string;
  url: string;
  events: EventType[];
  is_active: boolean;
}

/** POST /accounts/me/webhooks. `name` defaults to the URL's host. */
export function parseCreateWebhook(body: unknown, guard: UrlChecker): CreateWebhookRequest {
  const b = object(body, '{"url": "https://example.com/hooks/pdf", "events": ["job.completed"]}');
  const url = validateWebhookUrl(b.url, guard);
  return {
    url,
    name: b.name === undefined || b.name === null ? new URL(url).hostname : parseName(b.name),
    events: b.events === undefined || b.events === null ? [...DEFAULT_EVENTS] : parseEvents(b.events),
    is_active: b.is_active === undefined || b.is_active === null ? true : parseActive(b.is_active),
  };
}

/** PUT /accounts/me/webhooks/{id}: any of name, url, events, is_active (at least one). */
export function parseUpdateWebhook(body: unknown, guard: UrlChecker): Partial<CreateWebhookRequest> {
  const b = object(body, '{"is_active": false}');
  const out: Partial<CreateWebhookRequest> = {};
  if (b.name !== undefined) out.name = parseName(b.name);
  if (b.url !== undefined) out.url = validateWebhookUrl(b.url, guard);
  if (b.events !== undefined) out.events = parseEvents(b.events);
  if (b.is_active !== undefined) out.is_active = parseActive(b.is_active);
  if (Object.keys(out).length === 0) throw invalidParameter('body', 'Send at least one of name, url, events, is_active.');
  return out;
}

/** POST …/rotate-secret: optional `grace_period_seconds`, a whole number 0 to 604800 (default 86400). */
export function parseRotation(body: unknown): { graceSeconds: number } {
  if (body === undefined) return { graceSeconds: DEFAULT_GRACE_SECONDS };
  const b = object(body, '{"grace_period_seconds": 3600}');
  const g = b.grace_period_seconds;
  if (g === undefined || g === null) return { graceSeconds: DEFAULT_GRACE_SECONDS };
  if (typeof g !== 'number' || !Number.isInteger(g) || g < 0 || g > MAX_GRACE_SECONDS) {
    throw invalidParameter('grace_period_seconds', `grace_period_seconds must be a whole number from 0 (revoke the old secret now) to ${MAX_GRACE_SECONDS} (7 days); default ${DEFAULT_GRACE_SECONDS}.`, {
      min: 0,
      max: MAX_GRACE_SECONDS,
    });
  }
  return { graceSeconds: g };
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PAGE_SIZE;
  const n = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_PAGE_SIZE)) {
    throw invalidParameter('limit', `limit must be a whole number from 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`, { min: 1, max: MAX_PAGE_SIZE });
  }
  return n;
}

function parseEventFilter(name: string, value: string | undefined): EventType | undefined {
  if (value === undefined) return undefined;
  if (!(EVENT_TYPES as readonly string[]).includes(value)) throw invalidParameter(name, `${name} must be one of ${EVENT_TYPES.join(', ')}.`, { allowed: EVENT_TYPES });
  return value as EventType;
}

const token = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

export interface WebhookListRequest {
  limit: number;
  isActive?: boolean;
  event?: EventType;
  nextToken?: string;
}

/** GET /accounts/me/webhooks query: `is_active`, `event`, `limit`, `next_token`. */
export function parseWebhookListQuery(query: Record<string, string>): WebhookListRequest {
  const out: WebhookListRequest = { limit: parseLimit(query.limit), nextToken: token(query.next_token) };
  if (query.is_active !== undefined) {
    if (query.is_active !== 'true' && query.is_active !== 'false') throw invalidParameter('is_active', 'is_active must be true or false.');
    out.isActive = query.is_active === 'true';
  }
  out.event = parseEventFilter('event', query.event);
  return out;
}

export interface HistoryRequest {
  limit: number;
  status?: DeliveryRecord['status'];
  eventType?: EventType;
  nextToken?: string;
}

/** History query (webhook and job routes): `status`, `event_type`, `limit`, `next_token`. */
export function parseHistoryQuery(query: Record<string, string>): HistoryRequest {
  const out: HistoryRequest = { limit: parseLimit(query.limit), nextToken: token(query.next_token) };
  if (query.status !== undefined) {
    if (!(DELIVERY_STATUSES as readonly string[]).includes(query.status)) {
      throw invalidParameter('status', `status must be one of ${DELIVERY_STATUSES.join(', ')}.`, { allowed: DELIVERY_STATUSES });
    }
    out.status = query.status as DeliveryRecord['status'];
  }
  out.eventType = parseEventFilter('event_type', query.event_type);
  return out;
}
