import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyRepository } from '../../../../functions/adapters/dynamodb/api-keys';
import type { Dynamo } from '../../../../functions/adapters/dynamodb/client';
import { DynamoWebhookRepository } from '../../../../functions/adapters/dynamodb/webhooks';
import { newAccount } from '../../../../functions/core/accounts/account';
import { lookupPrefix } from '../../../../functions/core/auth/api-keys';
import { createApiKey, revokeApiKey } from '../../../../functions/core/auth/manage-keys';
import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../../functions/core/net/guard';
import { createWebhook, deleteWebhook, rotateWebhookSecret } from '../../../../functions/core/webhooks/manage';
import { SecretBox } from '../../../../functions/core/webhooks/secret-box';
import { withLocalTable } from '../../../support/local-table';
import { MemoryPlans } from '../../../support/memory';

/**
 * Against dynalite, with the next transaction failing one of two ways: before it is sent (`failed`), or after it went
 * through with its reply lost (`lost`: a timeout, a dropped connection). What a client was told must match what the
 * table holds: a key or webhook that exists was shown (its secret included), one that was deleted is reported so.
 */
type Fault = 'failed' | 'lost' | null;
const table = withLocalTable('lost-replies', (db) => {
  /** The next write of `on`'s kind (a transaction unless said otherwise) fails as `next` says. */
  const faults: { next: Fault; on?: typeof UpdateCommand } = { next: null };
  const send = db.doc.send.bind(db.doc) as (command: unknown) => Promise<unknown>;
  const faulty = {
    ...db,
    doc: {
      send: async (command: unknown) => {
        const fault = faults.next;
        if (!fault || !(command instanceof (faults.on ?? TransactWriteCommand))) return send(command);
        faults.next = null;
        faults.on = undefined;
        if (fault === 'lost') await send(command);
        throw Object.assign(new Error(fault === 'lost' ? 'socket hang up' : 'Rate exceeded'), { name: fault === 'lost' ? 'TimeoutError' : 'ThrottlingException' });
      },
    },
  } as unknown as Dynamo;
  return { faults, keys: new DynamoApiKeyRepository(faulty), webhooks: new DynamoWebhookRepository(faulty) };
});

const now = new Date('2026-11-23T10:00:00Z');

describe('API keys with a lost reply', () => {
  it('shows a key whose write went through (it works), and fails one that was not written', async () => {
    // The account's first key starts its key count (a transaction of its own, failing as it should).
    await createApiKey(table.keys, 'acct_lost', 'first', now);
    table.faults.next = 'lost';
    const { record, plaintext } = await createApiKey(table.keys, 'acct_lost', 'production', now);
    expect(table.faults.next).toBeNull();
    expect((await table.keys.findByPrefix(lookupPrefix(plaintext))).map((r) => r.api_key_id)).toEqual([record.api_key_id]);

    table.faults.next = 'failed';
    await expect(createApiKey(table.keys, 'acct_lost', 'staging', now)).rejects.toThrow('Rate exceeded');
    expect((await table.keys.listForAccount('acct_lost')).map((r) => r.name).sort()).toEqual(['first', 'production']);
  });

  it('reports a key revoked when the delete went through, and the error when it did not', async () => {
    const { record } = await createApiKey(table.keys, 'acct_revoke', 'a', now);
    table.faults.next = 'failed';
    await expect(revokeApiKey(table.keys, 'acct_revoke', record.api_key_id)).rejects.toThrow('Rate exceeded');
    expect(await table.keys.listForAccount('acct_revoke')).toHaveLength(1);
    table.faults.next = 'lost';
    expect(await revokeApiKey(table.keys, 'acct_revoke', record.api_key_id)).toEqual({ api_key_id: record.api_key_id, revoked: true });
    expect(await table.keys.listForAccount('acct_revoke')).toEqual([]);
  });
});

describe('webhooks with a lost reply', () => {
  const account = newAccount({ account_id: 'acct_hooks', email: 'a@example.com', plan_id: 'standard', credits_micros: 0, now });
  const deps = () => ({
    webhooks: table.webhooks,
    plans: new MemoryPlans(),
    guard: new NetworkGuard({ resolve: async () => [{ address: '93.184.216.34', family: 4 as const }] }, new PrivateTargetAllowlist(undefined)),
    clock: { now: () => now },
    secrets: new SecretBox('a test key of sixteen characters or more'),
  });
  const body = { url: 'https://hooks.example.com/pdf', events: ['job.completed'] };

  it('shows a webhook (and its secret) whose write went through, and fails one that was not written', async () => {
    table.faults.next = 'lost';
    const shown = await createWebhook(deps(), account, body);
    expect(shown).toMatchObject({ webhook_id: expect.any(String), secret: expect.stringMatching(/^whsec_/) });
    expect(await table.webhooks.get(shown.webhook_id)).toMatchObject({ account_id: 'acct_hooks', url: body.url });

    table.faults.next = 'failed';
    await expect(createWebhook(deps(), account, body)).rejects.toThrow('Rate exceeded');
    expect((await table.webhooks.listForAccount('acct_hooks')).map((w) => w.webhook_id)).toEqual([shown.webhook_id]);
  });

  it('shows the new secret of a rotation whose write went through (it signs already), and fails one that was not written', async () => {
    const d = deps();
    const { webhook_id } = await createWebhook(d, account, body);
    Object.assign(table.faults, { next: 'lost', on: UpdateCommand });
    const rotated = await rotateWebhookSecret(d, account, webhook_id, { grace_period_seconds: 0 });
    expect(table.faults.next).toBeNull();
    expect(d.secrets.open((await table.webhooks.get(webhook_id))!.secret_sealed!, webhook_id)).toBe(rotated.secret);

    Object.assign(table.faults, { next: 'failed', on: UpdateCommand });
    await expect(rotateWebhookSecret(d, account, webhook_id, { grace_period_seconds: 0 })).rejects.toThrow('Rate exceeded');
    expect(d.secrets.open((await table.webhooks.get(webhook_id))!.secret_sealed!, webhook_id)).toBe(rotated.secret);
  });

  it('reports a webhook deleted when the delete went through, and the error when it did not', async () => {
    const { webhook_id } = await createWebhook(deps(), account, body);
    table.faults.next = 'failed';
    await expect(deleteWebhook(deps(), account, webhook_id)).rejects.toThrow('Rate exceeded');
    expect(await table.webhooks.get(webhook_id)).not.toBeNull();
    table.faults.next = 'lost';
    expect(await deleteWebhook(deps(), account, webhook_id)).toEqual({ webhook_id, deleted: true });
    expect(await table.webhooks.get(webhook_id)).toBeNull();
  });
});
