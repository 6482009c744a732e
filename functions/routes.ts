/**
 * The route table: the one list of every route of both spec documents. The CDK app builds API Gateway
 * resources and one Lambda per handler from it; the local gateway serves the same handlers from it.
 * A route whose `handler` is null answers 501 NOT_IMPLEMENTED, so this table is also the map of what is left.
 *
 * `handler` is "<file under functions/, without .ts>#<export>".
 * `access`: `key_or_token` (API key or dashboard ID token), `token` (ID token only), `none`.
 * `profile`: `render` functions get the Chromium layer and more memory; `standard` ones get 512 MB and the API's
 * 29 s; `light` ones are small; `pdf` ones (instant merge/split) get a full vCPU; `worker` ones run background work
 * for up to 15 minutes (sizes and timeouts in functions/profiles.ts, shared by the CDK app and the local stack).
 */
import type { RouteAccess } from './core/auth/authenticate';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
export type FunctionProfile = 'render' | 'standard' | 'light' | 'pdf' | 'worker';

export interface RouteDef {
  id: string;
  method: HttpMethod;
  path: string;
  access: RouteAccess;
  handler: string | null;
  profile: FunctionProfile;
  /** Lambda timeout in seconds; API Gateway itself stops waiting at 29 s unless raised (see lib/api.ts). */
  timeoutSeconds?: number;
  /** What the handler touches, so the CDK app grants exactly that (least privilege). */
  permissions: Permission[];
  summary: string;
}

/** `bucket:upload`: may put objects under uploads/ only (what the presigned upload URLs it signs can do).
 *  `bucket:read:outputs`: may read stored results only (outputs/, pdfop/, edits/): the webhook dispatcher links to them;
 *  it may also list the bucket's keys (without that, S3 answers a missing result 403, not 404).
 *  `stripe`: the function gets the Stripe secret key (only functions that call Stripe).
 *  `stripe:webhook`: gets the Stripe webhook signing secret (only the Stripe webhook route).
 *  `pagination`: gets PAGINATION_SECRET, the key that seals list page tokens (only the list routes).
 *  `workflow:start`: may start every Step Functions workflow (functions/workflows.ts) and gets their ARNs;
 *  `workflow:start:<name>`: that one workflow only (a submit route starts one kind of job).
 *  `workflow:watch`: may read the status of their executions (DescribeExecution; the start sweeper's watch).
 *  `queue:<name>`: may send to that queue of functions/queues.ts and gets its URL (`queue:webhooks`: functions
 *  that write outbox events announce them to the webhook dispatcher).
 *  `webhook:secrets`: gets WEBHOOK_SECRETS_KEY, the key that seals webhook signing secrets. */
export type Permission =
  | 'table:read' | 'table:write' | 'bucket:read' | 'bucket:read:outputs' | 'bucket:write' | 'bucket:upload' | 'bucket:delete' | 'stripe' | 'stripe:webhook' | 'workflow:start' | `workflow:start:${'pdfop' | 'bulk'}` | 'workflow:watch'
  | 'queue:render' | 'queue:webhooks' | 'webhook:secrets' | 'pagination';

const r = (
  id: string,
  method: HttpMethod,
  path: string,
  access: RouteAccess,
  handler: string | null,
  summary: string,
  profile: FunctionProfile = 'standard',
  timeoutSeconds?: number,
  permissions: Permission[] = [],
): RouteDef => ({ id, method, path, access, handler, profile, summary, permissions, ...(timeoutSeconds ? { timeoutSeconds } : {}) });

/** Permission sets used by the built routes. */
const READ: Permission[] = ['table:read'];
const READ_WRITE: Permission[] = ['table:read', 'table:write'];
const JOB_READ: Permission[] = ['table:read', 'bucket:read'];
/** A list with sealed page tokens (next_token). */
const LIST: Permission[] = ['table:read', 'pagination'];
const RENDER: Permission[] = ['table:read', 'table:write', 'bucket:read', 'bucket:write', 'bucket:delete'];
/** Merge/split: jobs, charges and file rows; stored outputs (read to sign links, delete on failure); the job event's notice. */
const PDF_OP: Permission[] = ['table:read', 'table:write', 'bucket:read', 'bucket:write', 'bucket:delete', 'queue:webhooks'];
const PDF_JOB_SUBMIT: Permission[] = [...PDF_OP, 'workflow:start:pdfop'];
const BULK_JOB_SUBMIT: Permission[] = [...PDF_OP, 'workflow:start:bulk'];
/** A presigned PUT can do what its signer may: puts under uploads/ only (bucket:upload), nothing else in the bucket. */
const UPLOAD_URL: Permission[] = ['table:read', 'bucket:upload'];
/** Cancel: the job and its event; a queued bulk job's staged inputs are read (index) and deleted. */
const JOB_CANCEL: Permission[] = ['table:read', 'table:write', 'bucket:read', 'bucket:delete', 'queue:webhooks'];
const STRIPE_READ: Permission[] = ['table:read', 'stripe'];
const STRIPE_WRITE: Permission[] = ['table:read', 'table:write', 'stripe'];
/** Webhook creation and rotation seal a new signing secret. */
const WEBHOOK_SEAL: Permission[] = ['table:read', 'table:write', 'webhook:secrets'];

const KT: RouteAccess = 'key_or_token';
const T: RouteAccess = 'token';
const NONE: RouteAccess = 'none';

export const ROUTES: readonly RouteDef[] = [
  // Conversion (document 1)
  r('quickjob.create', 'POST', '/quickjob', KT, 'http/quickjob/create#handler', 'Synchronous HTML/Markdown/URL/image conversion', 'render', 35, RENDER),
  r('longjob.create', 'POST', '/longjob', KT, 'http/longjob/create#handler', 'Asynchronous HTML/Markdown conversion', 'render', 35, [...RENDER, 'queue:render', 'queue:webhooks']),
  r('bulkjob.uploadUrl', 'POST', '/bulkjob/upload-url', KT, 'http/bulkjob/upload-url#handler', 'Presigned PUT for a bulk ZIP', 'light', undefined, UPLOAD_URL),
  r('bulkjob.create', 'POST', '/bulkjob', KT, 'http/bulkjob/create#handler', 'Start a bulk ZIP conversion', 'standard', undefined, BULK_JOB_SUBMIT),

  // Jobs
  r('jobs.list', 'GET', '/jobs', T, 'http/jobs/list#handler', 'List jobs, newest first', 'light', undefined, LIST),
  r('jobs.get', 'GET', '/jobs/{job_id}', KT, 'http/jobs/get#handler', 'One job', 'light', undefined, JOB_READ),
  r('jobs.files', 'GET', '/jobs/{job_id}/files', KT, 'http/jobs/files#handler', 'Per-file results of a bulk or merge/split job', 'light', undefined, READ),
  r('jobs.fileDownload', 'GET', '/jobs/{job_id}/files/{file_index}/download', KT, 'http/jobs/file-download#handler', 'Fresh link for one merge/split output', 'light', undefined, JOB_READ),
  r('jobs.download', 'GET', '/jobs/{job_id}/download', KT, 'http/jobs/download#handler', 'Fresh link for the stored output', 'light', undefined, JOB_READ),
  r('jobs.cancel', 'POST', '/jobs/{job_id}/cancel', KT, 'http/jobs/cancel#handler', 'Cancel a bulk job or mail-merge campaign', 'light', undefined, JOB_CANCEL),
  r('jobs.webhookHistory', 'GET', '/jobs/{job_id}/webhooks/history', T, 'http/webhooks/job-history#handler', 'Webhook deliveries triggered by a job', 'light', undefined, LIST),

  // Account, billing, keys, plans
  r('me.get', 'GET', '/me', KT, 'http/me/get#handler', 'The calling account', 'light', undefined, READ),
  r('account.get', 'GET', '/accounts/me', T, 'http/me/get#accountHandler', 'The signed-in account', 'light', undefined, READ),
  r('account.credits', 'GET', '/accounts/me/credits', T, 'http/account/credits#handler', 'Credit balances', 'light', undefined, READ),
  r('account.billing', 'GET', '/accounts/me/billing', T, 'http/account/billing#handler', 'Billing summary', 'light', undefined, READ),
  r('subscription.plans', 'GET', '/accounts/me/subscription/plans', NONE, 'http/subscription/plans#handler', 'Subscription plans on offer', 'light', undefined, READ),
  r('subscription.get', 'GET', '/accounts/me/subscription', T, 'http/subscription/get#handler', 'Current subscription', 'light', undefined, READ),
  r('subscription.cancel', 'POST', '/accounts/me/subscription/cancel', T, 'http/subscription/cancel#handler', 'Cancel at period end', 'standard', undefined, STRIPE_WRITE),
  r('subscription.resume', 'POST', '/accounts/me/subscription/resume', T, 'http/subscription/resume#handler', 'Undo a scheduled cancel', 'standard', undefined, STRIPE_WRITE),
  r('subscription.change', 'POST', '/accounts/me/subscription/change', T, 'http/subscription/change#handler', 'Change plan', 'standard', undefined, STRIPE_WRITE),
  r('subscription.portal', 'POST', '/accounts/me/subscription/portal', T, 'http/subscription/portal#handler', 'Customer portal link', 'standard', undefined, STRIPE_READ),
  r('apiKeys.create', 'POST', '/accounts/me/api-keys', T, 'http/apikeys/create#handler', 'Create an API key (shown once)', 'light', undefined, READ_WRITE),
  r('apiKeys.list', 'GET', '/accounts/me/api-keys', T, 'http/apikeys/list#handler', 'List API keys', 'light', undefined, READ),
  r('apiKeys.revoke', 'DELETE', '/accounts/me/api-keys/{api_key_id}', T, 'http/apikeys/revoke#handler', 'Revoke an API key', 'light', undefined, READ_WRITE),
  r('plans.list', 'GET', '/plans', T, 'http/plans/list#handler', 'Plans', 'light', undefined, READ),
  r('plans.get', 'GET', '/plans/{plan_id}', T, 'http/plans/get#handler', 'One plan', 'light', undefined, READ),
  r('stripe.webhook', 'POST', '/stripe/webhook', NONE, 'http/stripe/webhook#handler', 'Stripe events', 'standard', undefined, [...STRIPE_WRITE, 'stripe:webhook']),
  // Not in the spec: the description of this API, built from this table (see functions/http/openapi).
  r('openapi.get', 'GET', '/openapi.json', NONE, 'http/openapi/get#handler', 'This API as an OpenAPI 3.1 document', 'light', undefined, []),

  // PDF tools (document 2)
  r('pdf.merge', 'POST', '/pdf/merge', KT, 'http/pdf/merge#handler', 'Merge 2–20 PDFs', 'pdf', 29, PDF_OP),
  r('pdf.split', 'POST', '/pdf/split', KT, 'http/pdf/split#handler', 'Split a PDF', 'pdf', 29, PDF_OP),
  r('pdf.inspect', 'POST', '/pdf/inspect', KT, 'http/pdf/inspect#handler', 'Inspect a PDF (free)', 'pdf', 29, JOB_READ),
  r('pdf.uploadUrl', 'POST', '/pdf/upload-url', KT, 'http/pdf/upload-url#handler', 'Presigned PUT for a large PDF', 'light', undefined, UPLOAD_URL),
  r('pdf.jobs', 'POST', '/pdf/jobs', KT, 'http/pdf/jobs#handler', 'Background merge/split job', 'standard', undefined, PDF_JOB_SUBMIT),
  r('pdf.editPreflight', 'POST', '/pdf/edit/preflight', KT, null, 'Predict an edit recipe (free)'),
  r('pdf.edit', 'POST', '/pdf/edit', KT, null, 'Apply an edit recipe'),
  r('pdf.extract', 'POST', '/pdf/extract', KT, null, 'Extract text from a rectangle'),

  // Templates
  r('templates.render', 'POST', '/templates/{template_id}/render', KT, null, 'Render a saved template', 'render', 35),
  r('templates.list', 'GET', '/templates', T, null, 'Template library of the account', 'light'),
  r('templates.library', 'GET', '/templates/library', T, null, 'Starter templates', 'light'),
  r('templates.create', 'POST', '/templates', T, null, 'Create a template'),
  r('templates.preview', 'POST', '/templates/preview', T, null, 'Preview a template definition', 'render', 35),
  r('templates.assetUploadUrl', 'POST', '/templates/assets/upload-url', T, null, 'Presigned PUT for a template asset', 'light'),
  r('templates.get', 'GET', '/templates/{template_id}', T, null, 'One template definition', 'light'),
  r('templates.update', 'PUT', '/templates/{template_id}', T, null, 'Replace a template'),
  r('templates.delete', 'DELETE', '/templates/{template_id}', T, null, 'Delete a template', 'light'),

  // Mail merge
  r('mailmerge.connections.list', 'GET', '/mailmerge/connections', KT, null, 'Sender connections', 'light'),
  r('mailmerge.connections.create', 'POST', '/mailmerge/connections', KT, null, 'Add a sender connection'),
  r('mailmerge.connections.update', 'PUT', '/mailmerge/connections/{connection_id}', KT, null, 'Change a sender connection'),
  r('mailmerge.connections.delete', 'DELETE', '/mailmerge/connections/{connection_id}', KT, null, 'Remove a sender connection', 'light'),
  r('mailmerge.uploads', 'POST', '/mailmerge/uploads', KT, null, 'Presigned PUT for a large list', 'light'),
  r('mailmerge.campaigns.list', 'GET', '/mailmerge/campaigns', KT, null, 'Campaigns', 'light'),
  r('mailmerge.campaigns.create', 'POST', '/mailmerge/campaigns', KT, null, 'Create a campaign draft'),
  r('mailmerge.campaigns.get', 'GET', '/mailmerge/campaigns/{campaign_id}', KT, null, 'One campaign with its validation report', 'light'),
  r('mailmerge.campaigns.delete', 'DELETE', '/mailmerge/campaigns/{campaign_id}', KT, null, 'Delete a draft', 'light'),
  r('mailmerge.campaigns.preview', 'POST', '/mailmerge/campaigns/{campaign_id}/preview', KT, null, 'Preview one row', 'render', 35),
  r('mailmerge.campaigns.test', 'POST', '/mailmerge/campaigns/{campaign_id}/test', KT, null, 'Send a test email', 'render', 35),
  r('mailmerge.campaigns.start', 'POST', '/mailmerge/campaigns/{campaign_id}/start', KT, null, 'Start sending'),
  r('mailmerge.campaigns.recipients', 'GET', '/mailmerge/campaigns/{campaign_id}/recipients', KT, null, 'Per-row results', 'light'),
  r('mailmerge.campaigns.report', 'GET', '/mailmerge/campaigns/{campaign_id}/report', KT, null, 'CSV report link', 'light'),
  r('mailmerge.limitRequest', 'POST', '/mailmerge/limit-request', KT, null, 'Ask for a higher row limit', 'light'),

  // Webhooks
  r('webhooks.create', 'POST', '/accounts/me/webhooks', T, 'http/webhooks/create#handler', 'Create a webhook', 'light', undefined, WEBHOOK_SEAL),
  r('webhooks.list', 'GET', '/accounts/me/webhooks', T, 'http/webhooks/list#handler', 'List webhooks', 'light', undefined, LIST),
  r('webhooks.get', 'GET', '/accounts/me/webhooks/{webhook_id}', T, 'http/webhooks/get#handler', 'One webhook', 'light', undefined, READ),
  r('webhooks.update', 'PUT', '/accounts/me/webhooks/{webhook_id}', T, 'http/webhooks/update#handler', 'Change a webhook', 'light', undefined, READ_WRITE),
  r('webhooks.delete', 'DELETE', '/accounts/me/webhooks/{webhook_id}', T, 'http/webhooks/delete#handler', 'Delete a webhook', 'light', undefined, READ_WRITE),
  r('webhooks.rotateSecret', 'POST', '/accounts/me/webhooks/{webhook_id}/rotate-secret', T, 'http/webhooks/rotate-secret#handler', 'Rotate the signing secret', 'light', undefined, WEBHOOK_SEAL),
  r('webhooks.history', 'GET', '/accounts/me/webhooks/{webhook_id}/history', T, 'http/webhooks/history#handler', 'Delivery history', 'light', undefined, LIST),
];

export const NOT_IMPLEMENTED_HANDLER = 'http/not-implemented#handler';

export function routeById(id: string): RouteDef {
  const route = ROUTES.find((x) => x.id === id);
  if (!route) throw new Error(`no route with id ${id}`);
  return route;
}

/** The handler reference actually served for a route (501 stand-in when not built yet). */
export function handlerRef(route: RouteDef): string {
  return route.handler ?? NOT_IMPLEMENTED_HANDLER;
}

/** Finds the route for an API Gateway resource path and method (what the authorizer and gateway see). */
export function routeFor(method: string, resourcePath: string): RouteDef | undefined {
  return ROUTES.find((x) => x.method === method.toUpperCase() && x.path === resourcePath);
}

/**
 * Matches a concrete request path against the table. Literal segments win over parameters
 * (`/templates/library` before `/templates/{template_id}`), as in API Gateway. A known path with
 * another method is as unknown as any other route (API Gateway cannot tell them apart either).
 */
export function matchRoute(method: string, path: string): { route: RouteDef; params: Record<string, string> } | null {
  const best = bestMatch(method, path);
  return best ? { route: best.route, params: best.params } : null;
}

/** What a browser preflight (OPTIONS) of a route path is told: its methods, as API Gateway's resource for it answers. */
export function preflightMethods(routePath: string): string[] {
  return [...new Set(ROUTES.filter((r) => r.path === routePath).map((r) => r.method)), 'OPTIONS'];
}

/** The route path a concrete path resolves to for a preflight, whatever the method (null: no such resource). */
export function preflightRoutePath(path: string): string | null {
  let best: { route: RouteDef; score: number } | null = null;
  for (const method of new Set(ROUTES.map((r) => r.method))) {
    const hit = bestMatch(method, path);
    if (hit && (!best || hit.score > best.score)) best = hit;
  }
  return best?.route.path ?? null;
}

function bestMatch(method: string, path: string): { route: RouteDef; params: Record<string, string>; score: number } | null {
  let best: { route: RouteDef; params: Record<string, string>; score: number } | null = null;
  for (const route of ROUTES) {
    if (route.method !== method.toUpperCase()) continue;
    const hit = matchPath(route.path, path);
    if (hit && (!best || hit.score > best.score)) best = { route, ...hit };
  }
  return best;
}

/**
 * A concrete path against a route path ("/jobs/{job_id}"): the decoded parameters and how specific the match is
 * (literal segments count, earlier ones more), or null. A segment that is no valid percent-encoding matches nothing.
 */
export function matchPath(routePath: string, path: string): { params: Record<string, string>; score: number } | null {
  const segments = path.split('/').slice(1);
  // A trailing slash is forgiven; an empty segment elsewhere (`/jobs//files`) is no parameter and no route.
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  if (segments.includes('')) return null;
  const pattern = routePath.split('/').filter(Boolean);
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  let score = 0;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith('{') && p.endsWith('}')) {
      try {
        params[p.slice(1, -1)] = decodeURIComponent(segments[i]);
      } catch {
        return null;
      }
    } else if (p === segments[i]) {
      score += 1 << (pattern.length - i);
    } else {
      return null;
    }
  }
  return { params, score };
}
