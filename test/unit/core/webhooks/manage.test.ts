import { type Account, newAccount } from '../../../../functions/core/accounts/account';
import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../../functions/core/net/guard';
import { ScopedPageTokens } from '../../../../functions/core/validation/page-tokens';
import { createWebhook, deleteWebhook, listWebhooks, loadOwnWebhook, rotateWebhookSecret } from '../../../../functions/core/webhooks/manage';
import type { SecretChanges, WebhookChanges, WebhookRepository } from '../../../../functions/core/webhooks/ports';
import { SecretBox } from '../../../../functions/core/webhooks/secret-box';
import type { Webhook } from '../../../../functions/core/webhooks/webhook';
import { rejection } from '../../../support/errors';
import { MemoryPlans } from '../../../support/memory';

describe('loadOwnWebhook', () => {
  const webhook = { webhook_id: 'wh_1', account_id: 'other' } as Webhook;
  const webhooks = { get: async (id: string) => (id === webhook.webhook_id ? webhook : null) } as unknown as WebhookRepository;

  it("refuses another account's webhook with 403 WEBHOOK_ACCESS_DENIED, saying where the caller's own are", async () => {
    const err = await rejection(loadOwnWebhook(webhooks, 'acc', 'wh_1'));
    expect(err).toMatchObject({ code: 'WEBHOOK_ACCESS_DENIED', details: { webhook_id: 'wh_1' } });
    expect(err.message).toMatch(/GET \/accounts\/me\/webhooks lists them/);
  });

  it('refuses an unknown id with 404 WEBHOOK_NOT_FOUND', async () => {
    expect(await rejection(loadOwnWebhook(webhooks, 'acc', 'wh_2'))).toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
  });

  it('refuses an id longer than a stored key may be with 404, without reading the table (DynamoDB would fail the read: a 500)', async () => {
    // As DynamoDB does for a partition key over 2048 bytes (dynalite does not, so the local stack cannot show it).
    const table = { get: async (id: string) => (id.length > 2000 ? Promise.reject(Object.assign(new Error('key too large'), { name: 'ValidationException' })) : null) } as unknown as WebhookRepository;
    expect(await rejection(loadOwnWebhook(table, 'acc', `wh_${'k'.repeat(3000)}`))).toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
  });
});

/** The repository contract of ports.ts in memory: conditional writes as the table makes them. */
class MemoryWebhooks implements WebhookRepository {
  hooks = new Map<string, Webhook>();
  /** Runs once, right after the next read hands a webhook out (another request's write landing then). */
  afterNextGet?: () => void;
  async get(id: string) {
    const hook = this.hooks.get(id);
    const copy = hook ? { ...hook } : null;
    const after = this.afterNextGet;
    this.afterNextGet = undefined;
    after?.();
    return copy;
  }
  async create(webhook: Webhook, maxAllowed: number) {
    const currentCount = [...this.hooks.values()].filter((h) => h.account_id === webhook.account_id).length;
    if (currentCount >= maxAllowed) return { created: false as const, currentCount };
    this.hooks.set(webhook.webhook_id, { ...webhook });
    return { created: true as const };
  }
  async update(id: string, changes: WebhookChanges) {
    const hook = this.hooks.get(id);
    return hook ? { ...Object.assign(hook, changes) } : null;
  }
  async updateSecrets(id: string, changes: SecretChanges, seenSecret: string | null) {
    const hook = this.hooks.get(id);
    if (!hook) return null;
    if (hook.secret_sealed !== seenSecret) return 'changed' as const;
    return { ...Object.assign(hook, changes) };
  }
  async markTriggered(): Promise<Webhook | null> {
    throw new Error('unused');
  }
  async delete(accountId: string, id: string) {
    return this.hooks.get(id)?.account_id === accountId && this.hooks.delete(id);
  }
  async listForAccount(accountId: string) {
    return [...this.hooks.values()].filter((h) => h.account_id === accountId).map((h) => ({ ...h }));
  }
}

describe('webhook management', () => {
  let ms = Date.parse('2026-05-01T10:00:00.000Z');
  const clock = { now: () => new Date((ms += 1000)) };
  const secrets = new SecretBox('a test key of sixteen characters or more');
  const guard = new NetworkGuard({ resolve: async () => [{ address: '93.184.216.34', family: 4 as const }] }, new PrivateTargetAllowlist(undefined));
  const account = newAccount({ account_id: 'acc_1', email: 'a@example.com', plan_id: 'standard', credits_micros: 0, now: new Date(ms) });
  const setup = () => {
    const webhooks = new MemoryWebhooks();
    return { webhooks, deps: { webhooks, plans: new MemoryPlans(), guard, clock, secrets } };
  };
  const create = (deps: ReturnType<typeof setup>['deps'], n: number, who = account) =>
    createWebhook(deps, who, { url: `https://hooks.example.com/${n}`, events: n % 2 ? ['job.failed'] : ['job.completed'] });

  it('allows 5 webhooks to an account without a plan (no max_webhooks to read)', async () => {
    const { deps } = setup();
    const planless = { ...account, account_id: 'acc_planless', plan_id: null } as Account;
    for (let n = 0; n < 5; n++) await create(deps, n, planless);
    expect(await rejection(create(deps, 5, planless))).toMatchObject({ code: 'WEBHOOK_LIMIT_EXCEEDED', details: { plan_id: null, current_count: 5, max_allowed: 5 } });
  });

  it('answers 404 to a delete that found the webhook gone (a delete at the same moment went first)', async () => {
    const { deps, webhooks } = setup();
    const { webhook_id } = await create(deps, 1);
    webhooks.afterNextGet = () => webhooks.hooks.delete(webhook_id);
    expect(await rejection(deleteWebhook(deps, account, webhook_id))).toMatchObject({ code: 'WEBHOOK_NOT_FOUND', details: { webhook_id } });
  });

  it('keeps a rotation that landed between its read and its write: its secret still signs, as the previous one', async () => {
    const { deps, webhooks } = setup();
    const { webhook_id } = await create(deps, 1);
    // Another rotation's write lands right after this one has read the webhook.
    const theirs = 'whsec_written_by_another_rotation';
    webhooks.afterNextGet = () => {
      const hook = webhooks.hooks.get(webhook_id)!;
      Object.assign(hook, { secret_sealed: secrets.seal(theirs, webhook_id), previous_secret_sealed: hook.secret_sealed, previous_secret_expires_at: '2026-06-01T00:00:00.000Z' });
    };
    const mine = await rotateWebhookSecret(deps, account, webhook_id, { grace_period_seconds: 3600 });
    const stored = webhooks.hooks.get(webhook_id)!;
    expect(secrets.open(stored.secret_sealed!, webhook_id)).toBe(mine.secret);
    expect(secrets.open(stored.previous_secret_sealed!, webhook_id)).toBe(theirs);
  });

  it('gives no next_token when the page holds exactly the last webhooks', async () => {
    const { deps } = setup();
    for (let n = 0; n < 3; n++) await create(deps, n);
    const tokens = new ScopedPageTokens('secret-for-tests', 'webhooks.v1');
    expect(await listWebhooks(deps, tokens, account.account_id, { limit: 3 })).toMatchObject({ count: 3, next_token: null });
    const first = await listWebhooks(deps, tokens, account.account_id, { limit: 2 });
    expect(first.next_token).toEqual(expect.any(String));
    expect(await listWebhooks(deps, tokens, account.account_id, { limit: 2, nextToken: first.next_token! })).toMatchObject({ count: 1, next_token: null });
  });

  it('refuses a page token replayed with another event filter', async () => {
    const { deps } = setup();
    for (let n = 0; n < 3; n++) await create(deps, n * 2); // all job.completed
    const tokens = new ScopedPageTokens('secret-for-tests', 'webhooks.v1');
    const first = await listWebhooks(deps, tokens, account.account_id, { limit: 1, event: 'job.completed' });
    await expect(listWebhooks(deps, tokens, account.account_id, { limit: 1, nextToken: first.next_token! })).rejects.toMatchObject({ code: 'INVALID_PARAMETER' });
    await expect(listWebhooks(deps, tokens, account.account_id, { limit: 1, event: 'job.failed', nextToken: first.next_token! })).rejects.toMatchObject({ code: 'INVALID_PARAMETER' });
  });
});
