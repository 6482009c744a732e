import { z } from 'zod';
import { EVENT_TYPES, type EventType } from '../events/events';
import { ServiceError, invalidParameter } from '../errors';
import { BlockedTargetError, type NetworkGuard } from '../net/guard';
import { redactUrl } from '../net/redact-url';
import { type Refuser, labelRule, labelSchema, optional, parseRequest, queryInteger, refuse } from '../validation';
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

/** How long registration waits for DNS before leaving the resolving check to delivery. */
const REGISTRATION_DNS_WAIT_MS = 2_000;

function badUrl(reason: string, url?: unknown): ServiceError {
  return new ServiceError(
    'INVALID_WEBHOOK_URL',
    `The webhook URL is not accepted: ${reason}. Use a public https:// URL of at most ${MAX_URL_LENGTH} characters.`,
    { reason, ...(typeof url === 'string' ? { url: redactUrl(url, { query: true }).slice(0, 200) } : {}) },
  );
}

/** INVALID_WEBHOOK_URL for a `url` that is missing, not a string, empty or too long (the schema's own checks). */
const urlRefusal: Refuser = (value) => {
  if (value === undefined || value === null) return badUrl('url is required');
  if (typeof value !== 'string') return badUrl('url must be a string');
  if (value.length === 0) return badUrl('url is empty');
  return badUrl(`url is ${value.length} characters long`, value);
};

/** Why a URL of acceptable length is still refused, if it is: not absolute, not HTTPS, credentials, or its host. */
function urlProblem(value: string, guard: UrlChecker | undefined): string | null {
  // URL parsers drop tabs and line breaks and trim the ends: the URL shown would not be the one called.
  if (/[\u0000-\u0020\u007f]/.test(value)) return 'the URL contains spaces or control characters; percent-encode them (%20)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a valid absolute URL';
  }
  if (url.protocol !== 'https:') return `the scheme is ${url.protocol.replace(/:$/, '')}, not https`;
  if (url.username || url.password) return 'URLs with a user name or password are not allowed';
  // Spellings URL parsers repair (https:host, https:\\host, backslashes for slashes): the URL shown would not be the one called.
  if (!/^https:\/\//i.test(value) || value.includes('\\')) return `write it as ${url.href.slice(0, 200)} (with // after https: and / between parts, no backslashes)`;
  if (!guard) return null;
  const verdict = guard.checkLiteral(url.hostname, url.port ? Number(url.port) : 443);
  return verdict.allowed ? null : verdict.reason;
}

/**
 * The `url` field. With a guard, the network guard's DNS-free rules run inside the schema, so a refused host
 * stands where the URL stands among a request's problems; without one (the documented schema) only its shape.
 */
function webhookUrl(guard?: UrlChecker) {
  return z
    .string()
    .min(1)
    .max(MAX_URL_LENGTH)
    .superRefine((value, ctx) => {
      if (value.length === 0 || value.length > MAX_URL_LENGTH) return; // min/max said it
      const problem = urlProblem(value, guard);
      if (problem) refuse(ctx, badUrl(problem, value));
    })
    .meta({
      description:
        `Where deliveries are POSTed: an absolute https:// URL of 1 to ${MAX_URL_LENGTH} characters, without a user name or password, spaces or control characters, ` +
        'whose host is public: localhost, .localhost, .local and .internal names and private, loopback, link-local, CGNAT, reserved ' +
        'or IPv4-mapped addresses (in any notation) are refused with 400 INVALID_WEBHOOK_URL, and so is a name that resolves to one. ' +
        `A name whose DNS lookup fails or takes longer than ${REGISTRATION_DNS_WAIT_MS / 1000} s is accepted (DNS may be set up after the webhook); ` +
        'every delivery resolves and checks it again, and a private answer then means no connection and a failed "Delivery blocked:" record.',
    });
}

/**
 * The URL rules of document 2: HTTPS, 1 to 2048 characters, no credentials, and a host the network guard's
 * DNS-free rules accept (no localhost / .localhost / .local / .internal names, no private, loopback,
 * link-local, CGNAT, reserved or IPv4-mapped addresses in any notation). Names are resolved again at delivery.
 */
export function validateWebhookUrl(value: unknown, guard: UrlChecker): string {
  return parseRequest(z.object({ url: webhookUrl(guard) }), { url: value }, { refusals: { url: urlRefusal } }).url;
}

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

/**
 * Most names `events` may list, duplicates included: far more than there are events, and few enough that zod never
 * reads a million of them (zod checks an array's length before its elements).
 */
export const MAX_EVENT_NAMES = 100;

/** `events`: a non-empty array of subscribable event names (duplicates dropped, order kept). */
const eventsSchema = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(MAX_EVENT_NAMES)
  .transform((events) => [...new Set(events)]);

const EVENTS_DESCRIPTION = `The events to deliver: a non-empty array of event names, at most 100 (duplicates are dropped); unknown names are refused with 400 INVALID_EVENTS.`;

/**
 * INVALID_EVENTS for whatever was sent as `events`: not a non-empty array, or naming unknown events. Details name
 * the parameter, as the list filters' INVALID_EVENTS and every other field's refusal do.
 */
const eventsRefusal: Refuser = (value) => {
  const allowed = EVENT_TYPES as readonly string[];
  if (!Array.isArray(value) || value.length === 0) {
    return new ServiceError('INVALID_EVENTS', 'events must be a non-empty array of event names, e.g. ["job.completed", "job.failed"].', { parameter: 'events', allowed: EVENT_TYPES });
  }
  if (value.length > MAX_EVENT_NAMES) {
    return new ServiceError('INVALID_EVENTS', `events lists ${value.length} names; at most ${MAX_EVENT_NAMES} are accepted (there are ${allowed.length} events, see details.allowed).`, {
      parameter: 'events',
      max_events: MAX_EVENT_NAMES,
      allowed: EVENT_TYPES,
    });
  }
  const invalid = value.filter((e) => typeof e !== 'string' || !allowed.includes(e));
  return new ServiceError('INVALID_EVENTS', `Unknown event name${invalid.length > 1 ? 's' : ''}: ${invalid.map((e) => JSON.stringify(e)).join(', ')}. See details.allowed.`, {
    parameter: 'events',
    invalid,
    allowed: EVENT_TYPES,
  });
};

/** `events` on its own: the event names, deduplicated in order, or 400 INVALID_EVENTS. */
export function parseEvents(value: unknown): EventType[] {
  return parseRequest(z.object({ events: eventsSchema }), { events: value }, { refusals: { events: eventsRefusal } }).events;
}

/** `name`: a label (trimmed, 1 to 100 characters of text). */
const nameSchema = labelSchema(MAX_NAME_LENGTH);
const nameRefusal: Refuser = () => invalidParameter('name', `name must be ${labelRule(MAX_NAME_LENGTH)}.`);
const activeRefusal: Refuser = () => invalidParameter('is_active', 'is_active must be true or false.');

const bodyRefusals = { url: urlRefusal, name: nameRefusal, events: eventsRefusal, is_active: activeRefusal };
/** On update a null url is no missing one: it is refused as null, like the other fields (it could mean "clear it"). */
const updateNullUrl: Refuser = (value, issue) => (value === null ? badUrl('url cannot be null; leave it out to keep the current URL') : urlRefusal(value, issue));
const updateRefusals = { ...bodyRefusals, url: updateNullUrl };

/** Body of POST /accounts/me/webhooks. Problems are reported in this order: url, name, events, is_active. */
function createWebhookBody(guard?: UrlChecker) {
  return z.object({
    url: webhookUrl(guard),
    name: optional(nameSchema).meta({
      description: `A label for the webhook: ${labelRule(MAX_NAME_LENGTH)}. Default (absent or null): the URL's host name.`,
    }),
    events: optional(eventsSchema).meta({ description: `${EVENTS_DESCRIPTION} Default (absent or null): ["job.completed"].`, default: [...DEFAULT_EVENTS] }),
    is_active: optional(z.boolean()).meta({ description: 'Whether events are delivered; false pauses the webhook. Default (absent or null): true.', default: true }),
  });
}

const UPDATABLE_FIELDS = ['name', 'url', 'events', 'is_active'] as const;

/** Body of PUT /accounts/me/webhooks/{webhook_id}: any of the fields, at least one; null is refused. */
function updateWebhookBody(guard?: UrlChecker) {
  return z
    .object({
      name: nameSchema
        .optional()
        .meta({ description: `A new label: ${labelRule(MAX_NAME_LENGTH)}. Absent: unchanged.` }),
      url: webhookUrl(guard).optional(),
      events: eventsSchema.optional().meta({ description: `${EVENTS_DESCRIPTION} Replaces the current list. Absent: unchanged.` }),
      is_active: z.boolean().optional().meta({ description: 'true delivers events, false pauses the webhook. Absent: unchanged.' }),
    })
    .superRefine((body, ctx) => {
      if (Object.values(body).every((value) => value === undefined)) refuse(ctx, invalidParameter('body', 'Send at least one of name, url, events, is_active.'));
    })
    .meta({
      description: 'Send at least one of the fields; the others stay as they are. null is refused (leave the field out instead).',
      // At least one of the fields (other keys are ignored, so they do not count).
      minProperties: 1,
      anyOf: UPDATABLE_FIELDS.map((field) => ({ required: [field] })),
    });
}

/** The documented bodies (the URL's host rules run when a request is parsed: they need the network guard). */
export const createWebhookBodySchema = createWebhookBody();
export const updateWebhookBodySchema = updateWebhookBody();

/** The schemas that validate requests, with the guard's host check inside the `url` field; built once per guard. */
const guarded = new WeakMap<UrlChecker, { create: typeof createWebhookBodySchema; update: typeof updateWebhookBodySchema }>();

function schemasFor(guard: UrlChecker) {
  let schemas = guarded.get(guard);
  if (!schemas) guarded.set(guard, (schemas = { create: createWebhookBody(guard), update: updateWebhookBody(guard) }));
  return schemas;
}

export interface CreateWebhookRequest {
  name: string;
  url: string;
  events: EventType[];
  is_active: boolean;
}

/** POST /accounts/me/webhooks. `name` defaults to the URL's host. */
export function parseCreateWebhook(body: unknown, guard: UrlChecker): CreateWebhookRequest {
  const b = parseRequest(schemasFor(guard).create, body, {
    refusals: bodyRefusals,
    example: '{"url": "https://example.com/hooks/pdf", "events": ["job.completed"]}',
  });
  return {
    url: b.url,
    name: b.name ?? new URL(b.url).hostname,
    events: b.events ?? [...DEFAULT_EVENTS],
    is_active: b.is_active ?? true,
  };
}

/** PUT /accounts/me/webhooks/{id}: any of name, url, events, is_active (at least one). */
export function parseUpdateWebhook(body: unknown, guard: UrlChecker): Partial<CreateWebhookRequest> {
  const b = parseRequest(schemasFor(guard).update, body, { refusals: updateRefusals, example: '{"is_active": false}' });
  return Object.fromEntries(Object.entries(b).filter(([, value]) => value !== undefined));
}

/** Body of POST …/rotate-secret (the body itself may be left out). */
export const rotateSecretBodySchema = z.object({
  grace_period_seconds: optional(z.number().int().min(0).max(MAX_GRACE_SECONDS)).meta({
    description: `How long the old secret keeps signing deliveries (a second v1 signature), in whole seconds from 0 (revoke it now) to ${MAX_GRACE_SECONDS} (7 days). Default (absent or null): ${DEFAULT_GRACE_SECONDS} (1 day).`,
    default: DEFAULT_GRACE_SECONDS,
  }),
});

/** POST …/rotate-secret: optional `grace_period_seconds`, a whole number 0 to 604800 (default 86400). */
export function parseRotation(body: unknown): { graceSeconds: number } {
  // A body of JSON null is no body, as for POST /accounts/me/api-keys.
  if (body === undefined || body === null) return { graceSeconds: DEFAULT_GRACE_SECONDS };
  const b = parseRequest(rotateSecretBodySchema, body, {
    example: '{"grace_period_seconds": 3600}',
    refusals: {
      grace_period_seconds: () =>
        invalidParameter(
          'grace_period_seconds',
          `grace_period_seconds must be a whole number from 0 (revoke the old secret now) to ${MAX_GRACE_SECONDS} (7 days); default ${DEFAULT_GRACE_SECONDS}.`,
          { min: 0, max: MAX_GRACE_SECONDS },
        ),
    },
  });
  return { graceSeconds: b.grace_period_seconds ?? DEFAULT_GRACE_SECONDS };
}

const limitQuery = queryInteger(1, MAX_PAGE_SIZE)
  .optional()
  .meta({ description: `Rows per page, a whole number from 1 to ${MAX_PAGE_SIZE}. Default ${DEFAULT_PAGE_SIZE}.`, default: DEFAULT_PAGE_SIZE });

const nextTokenQuery = z
  .string()
  .optional()
  .transform((token) => token || undefined)
  .meta({ description: "The previous page's next_token, unchanged, with the same filters; absent or empty for the first page." });

const limitRefusal: Refuser = () =>
  invalidParameter('limit', `limit must be a whole number from 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`, { min: 1, max: MAX_PAGE_SIZE });

/** An unknown event name in a filter is an invalid event name too (document 2's INVALID_EVENTS), naming the parameter. */
const eventFilterRefusal =
  (name: string): Refuser =>
  (value) =>
    new ServiceError('INVALID_EVENTS', `${name} must be one of ${EVENT_TYPES.join(', ')}.`, { parameter: name, invalid: [value], allowed: EVENT_TYPES });

/** Query of GET /accounts/me/webhooks. */
export const webhookListQuerySchema = z.object({
  limit: limitQuery,
  is_active: z
    .enum(['true', 'false'])
    .optional()
    .transform((value) => (value === undefined ? undefined : value === 'true'))
    .meta({ description: 'true lists only active webhooks, false only paused ones. Default: all.' }),
  event: z.enum(EVENT_TYPES).optional().meta({ description: 'Lists only webhooks subscribed to this event. Default: all.' }),
  next_token: nextTokenQuery,
});

export interface WebhookListRequest {
  limit: number;
  isActive?: boolean;
  event?: EventType;
  nextToken?: string;
}

/** GET /accounts/me/webhooks query: `is_active`, `event`, `limit`, `next_token`. */
export function parseWebhookListQuery(query: Record<string, string>): WebhookListRequest {
  const q = parseRequest(webhookListQuerySchema, query, {
    refusals: { limit: limitRefusal, is_active: activeRefusal, event: eventFilterRefusal('event') },
  });
  const out: WebhookListRequest = { limit: q.limit ?? DEFAULT_PAGE_SIZE, nextToken: q.next_token, event: q.event };
  if (q.is_active !== undefined) out.isActive = q.is_active;
  return out;
}

/** Query of GET /accounts/me/webhooks/{webhook_id}/history and GET /jobs/{job_id}/webhooks/history. */
export const historyQuerySchema = z.object({
  limit: limitQuery,
  status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .meta({ description: 'Lists only deliveries that ended this way: success, failed (refused, an error or a non-2xx answer) or timeout. Default: all.' }),
  event_type: z.enum(EVENT_TYPES).optional().meta({ description: 'Lists only deliveries of this event. Default: all.' }),
  next_token: nextTokenQuery,
});

export interface HistoryRequest {
  limit: number;
  status?: DeliveryRecord['status'];
  eventType?: EventType;
  nextToken?: string;
}

/** History query (webhook and job routes): `status`, `event_type`, `limit`, `next_token`. */
export function parseHistoryQuery(query: Record<string, string>): HistoryRequest {
  const q = parseRequest(historyQuerySchema, query, {
    refusals: {
      limit: limitRefusal,
      status: () => invalidParameter('status', `status must be one of ${DELIVERY_STATUSES.join(', ')}.`, { allowed: DELIVERY_STATUSES }),
      event_type: eventFilterRefusal('event_type'),
    },
  });
  const out: HistoryRequest = { limit: q.limit ?? DEFAULT_PAGE_SIZE, nextToken: q.next_token };
  if (q.status !== undefined) out.status = q.status;
  out.eventType = q.event_type;
  return out;
}
