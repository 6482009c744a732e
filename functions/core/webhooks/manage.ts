import type { Account } from '../accounts/account';
import { planOf } from '../accounts/entitlements';
import { DEFAULT_MAX_WEBHOOKS, type Plan } from '../billing/plans';
import type { Clock } from '../clock';
import { ServiceError } from '../errors';
import { newId } from '../ids';
import { writtenAfterAll } from '../lost-replies';
import type { NetworkGuard } from '../net/guard';
import type { ScopedPageTokens } from '../validation/page-tokens';
import type { DeliveryStore, HistoryQuery, WebhookRepository } from './ports';
import {
  type HistoryRequest,
  type WebhookListRequest,
  assertPublicWebhookHost,
  parseCreateWebhook,
  parseRotation,
  parseUpdateWebhook,
} from './requests';
import { type SecretBox, newSigningSecret } from './secret-box';
import { type Webhook, presentDelivery, presentWebhook } from './webhook';

export interface WebhookDeps {
  webhooks: WebhookRepository;
  plans: { get(planId: string): Promise<Plan | null>; list(): Promise<Plan[]> };
  guard: Pick<NetworkGuard, 'checkLiteral' | 'approve'>;
  clock: Clock;
}

/** The caller's webhook: another account's is 403 WEBHOOK_ACCESS_DENIED, an unknown id 404 WEBHOOK_NOT_FOUND. */
export async function loadOwnWebhook(webhooks: WebhookRepository, accountId: string, webhookId: string): Promise<Webhook> {
  const webhook = webhookId.length <= 64 ? await webhooks.get(webhookId) : null;
  if (!webhook) {
    throw new ServiceError('WEBHOOK_NOT_FOUND', `No webhook ${webhookId} exists. GET /accounts/me/webhooks lists yours.`, { webhook_id: webhookId });
  }
  if (webhook.account_id !== accountId) {
    throw new ServiceError('WEBHOOK_ACCESS_DENIED', `Webhook ${webhookId} belongs to another account. Use one of this account's webhooks: GET /accounts/me/webhooks lists them.`, { webhook_id: webhookId });
  }
  return webhook;
}

/** Rotations of one webhook that may lose a race to another before answering 409 CONFLICT. */
const ROTATION_ATTEMPTS = 10;

/** POST /accounts/me/webhooks: 201 with the plaintext secret (shown now and on rotation only). */
export async function createWebhook(deps: WebhookDeps & { secrets: SecretBox }, account: Account, body: unknown) {
  const request = parseCreateWebhook(body, deps.guard);
  await assertPublicWebhookHost(request.url, deps.guard);
  const plan = await planOf(deps.plans, account);
  const maxAllowed = plan?.max_webhooks ?? DEFAULT_MAX_WEBHOOKS;
  const now = deps.clock.now().toISOString();
  const webhookId = newId('wh');
  const secret = newSigningSecret();
  const webhook: Webhook = {
    webhook_id: webhookId,
    account_id: account.account_id,
    ...request,
    secret_sealed: deps.secrets.seal(secret, webhookId),
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    created_at: now,
    updated_at: now,
    last_triggered_at: null,
    last_success_at: null,
    last_failure_at: null,
    success_count: 0,
    failure_count: 0,
  };
  let result: Awaited<ReturnType<WebhookRepository['create']>>;
  try {
    result = await deps.webhooks.create(webhook, maxAllowed);
  } catch (err) {
    // Stored with its reply lost: the webhook is live, and this answer is the only time its secret is shown.
    if (!(await writtenAfterAll(async () => (await deps.webhooks.get(webhookId)) !== null))) throw err;
    result = { created: true };
  }
  if (!result.created) {
    const upgrade = (await deps.plans.list()).some((p) => p.active && p.max_webhooks > maxAllowed);
    throw new ServiceError(
      'WEBHOOK_LIMIT_EXCEEDED',
      `The ${plan?.name ?? 'current'} plan allows ${maxAllowed} webhooks and this account has ${result.currentCount}. Delete one you no longer use${upgrade ? ', or upgrade to a plan that allows more' : ''}.`,
      { plan_id: plan?.plan_id ?? null, plan_type: plan?.plan_type ?? null, current_count: result.currentCount, max_allowed: maxAllowed, upgrade_required: upgrade },
    );
  }
  return presentWebhook(webhook, deps.clock.now(), secret);
}

/** PUT /accounts/me/webhooks/{id}: changes name, url, events, is_active; counters and secrets stay. */
export async function updateWebhook(deps: WebhookDeps, account: Account, webhookId: string, body: unknown) {
  await loadOwnWebhook(deps.webhooks, account.account_id, webhookId);
  const changes = parseUpdateWebhook(body, deps.guard);
  if (changes.url !== undefined) await assertPublicWebhookHost(changes.url, deps.guard);
  const updated = await deps.webhooks.update(webhookId, { ...changes, updated_at: deps.clock.now().toISOString() });
  if (!updated) throw new ServiceError('WEBHOOK_NOT_FOUND', `Webhook ${webhookId} no longer exists. List yours with GET /accounts/me/webhooks or create a new one.`, { webhook_id: webhookId });
  return presentWebhook(updated, deps.clock.now());
}

/**
 * POST …/rotate-secret: a new secret signs from now on; the old one keeps signing (a second `v1`) for the
 * grace period, 0 revokes it at once. A webhook without a secret (made before signing) starts signing. Only
 * two secrets exist at a time: rotating again during a grace period retires the older one at once.
 */
export async function rotateWebhookSecret(deps: WebhookDeps & { secrets: SecretBox }, account: Account, webhookId: string, body: unknown) {
  let current = await loadOwnWebhook(deps.webhooks, account.account_id, webhookId);
  const { graceSeconds } = parseRotation(body);
  // Written only over the secret it was computed from: a rotation that lost a race to another is computed again from
  // what that one left, as if the two had come one after the other.
  for (let attempt = 0; attempt < ROTATION_ATTEMPTS; attempt++) {
    const now = deps.clock.now();
    const secret = newSigningSecret();
    const keepOld = current.secret_sealed !== null && graceSeconds > 0;
    const sealed = deps.secrets.seal(secret, webhookId);
    const changes = {
      secret_sealed: sealed,
      previous_secret_sealed: keepOld ? current.secret_sealed : null,
      previous_secret_expires_at: keepOld ? new Date(now.getTime() + graceSeconds * 1000).toISOString() : null,
      updated_at: now.toISOString(),
    };
    let updated: Awaited<ReturnType<WebhookRepository['updateSecrets']>>;
    try {
      updated = await deps.webhooks.updateSecrets(webhookId, changes, current.secret_sealed);
    } catch (err) {
      // Written with its reply lost: the new secret signs already, and this answer is the only time it can be shown.
      let stored: Webhook | null = null;
      if (!(await writtenAfterAll(async () => (stored = await deps.webhooks.get(webhookId))?.secret_sealed === sealed))) throw err;
      updated = stored!;
    }
    if (!updated) throw new ServiceError('WEBHOOK_NOT_FOUND', `Webhook ${webhookId} no longer exists. List yours with GET /accounts/me/webhooks or create a new one.`, { webhook_id: webhookId });
    if (updated !== 'changed') return presentWebhook(updated, now, secret);
    current = await loadOwnWebhook(deps.webhooks, account.account_id, webhookId);
  }
  throw new ServiceError('CONFLICT', `Webhook ${webhookId} was rotated by other requests at the same time; retry.`, { webhook_id: webhookId });
}

/** DELETE /accounts/me/webhooks/{id}. Its delivery records stay visible through GET /jobs/{id}/webhooks/history. */
export async function deleteWebhook(deps: Pick<WebhookDeps, 'webhooks'>, account: Account, webhookId: string) {
  await loadOwnWebhook(deps.webhooks, account.account_id, webhookId);
  if (!(await deps.webhooks.delete(account.account_id, webhookId))) {
    throw new ServiceError('WEBHOOK_NOT_FOUND', `Webhook ${webhookId} no longer exists (already deleted). List yours with GET /accounts/me/webhooks.`, { webhook_id: webhookId });
  }
  return { webhook_id: webhookId, deleted: true };
}

/** GET /accounts/me/webhooks: newest first, filtered by `is_active` and `event`, no secrets. */
export async function listWebhooks(deps: Pick<WebhookDeps, 'webhooks' | 'clock'>, tokens: ScopedPageTokens, accountId: string, req: WebhookListRequest) {
  const scope = [accountId, req.isActive ?? null, req.event ?? null];
  const after = req.nextToken ? tokens.open(scope, req.nextToken, 2) : null;
  const rows = (await deps.webhooks.listForAccount(accountId))
    .filter((w) => req.isActive === undefined || w.is_active === req.isActive)
    .filter((w) => req.event === undefined || w.events.includes(req.event))
    .sort((a, b) => (b.created_at + b.webhook_id).localeCompare(a.created_at + a.webhook_id))
    .filter((w) => !after || `${w.created_at}#${w.webhook_id}` < `${after[0]}#${after[1]}`);
  const page = rows.slice(0, req.limit);
  const last = page[page.length - 1];
  const now = deps.clock.now();
  return {
    webhooks: page.map((w) => presentWebhook(w, now)),
    count: page.length,
    next_token: rows.length > req.limit && last ? tokens.seal(scope, [last.created_at, last.webhook_id]) : null,
  };
}

/** The history routes: newest first, `status` and `event_type` filters, sealed page tokens. */
export async function listHistory(
  deliveries: DeliveryStore,
  tokens: ScopedPageTokens,
  accountId: string,
  parent: { webhookId: string } | { jobId: string },
  req: HistoryRequest,
) {
  const parentId = 'webhookId' in parent ? `webhook:${parent.webhookId}` : `job:${parent.jobId}`;
  const scope = [accountId, parentId, req.status ?? null, req.eventType ?? null];
  const query: HistoryQuery = { limit: req.limit, status: req.status, eventType: req.eventType };
  if (req.nextToken) query.after = tokens.open(scope, req.nextToken, 1)[0];
  const page = 'webhookId' in parent ? await deliveries.listForWebhook(parent.webhookId, query) : await deliveries.listForJob(parent.jobId, query);
  // A job's history holds only the job owner's deliveries; the filter is defence in depth.
  const records = page.records.filter((r) => r.account_id === accountId);
  return {
    history: records.map(presentDelivery),
    count: records.length,
    next_token: page.last ? tokens.seal(scope, [page.last]) : null,
  };
}
