import { DynamoWebhookRepository } from '../../../../functions/adapters/dynamodb/webhooks';
import type { Webhook } from '../../../../functions/core/webhooks/webhook';
import { withLocalTable } from '../../../support/local-table';

/** Against dynalite: the conditions that keep webhooks to their account, their limit and their latest secret. */
describe('DynamoWebhookRepository guards', () => {
  const table = withLocalTable('webhook-guards', (db) => ({ db, webhooks: new DynamoWebhookRepository(db) }));
  const at = '2026-11-23T10:00:00.000Z';
  const webhook = (webhookId: string, accountId: string): Webhook => ({
    webhook_id: webhookId, account_id: accountId, name: 'hook', url: 'https://hooks.example.com/pdf', events: ['job.completed'], is_active: true,
    secret_sealed: 'sealed_1', previous_secret_sealed: null, previous_secret_expires_at: null, created_at: at, updated_at: at,
    last_triggered_at: null, last_success_at: null, last_failure_at: null, success_count: 0, failure_count: 0,
  });

  it('creates exactly `maxAllowed` webhooks per account, then answers with the count', async () => {
    for (let i = 0; i < 3; i++) expect(await table.webhooks.create(webhook(`wh_max${i}`, 'acct_max'), 3)).toEqual({ created: true });
    expect(await table.webhooks.create(webhook('wh_max3', 'acct_max'), 3)).toEqual({ created: false, currentCount: 3 });
    expect(await table.webhooks.listForAccount('acct_max')).toHaveLength(3);
  });

  it("never deletes another account's webhook", async () => {
    await table.webhooks.create(webhook('wh_owned', 'acct_owner'), 5);
    expect(await table.webhooks.delete('acct_intruder', 'wh_owned')).toBe(false);
    expect(await table.webhooks.get('wh_owned')).toMatchObject({ account_id: 'acct_owner' });
    expect(await table.webhooks.delete('acct_owner', 'wh_owned')).toBe(true);
    expect(await table.webhooks.get('wh_owned')).toBeNull();
  });

  it('writes a rotation only over the secret it read: a second rotation from the same secret answers changed', async () => {
    await table.webhooks.create(webhook('wh_rot', 'acct_rot'), 5);
    const rotation = (secret: string) => ({ secret_sealed: secret, previous_secret_sealed: 'sealed_1', previous_secret_expires_at: at, updated_at: at });
    expect(await table.webhooks.updateSecrets('wh_rot', rotation('sealed_2'), 'sealed_1')).toMatchObject({ secret_sealed: 'sealed_2' });
    expect(await table.webhooks.updateSecrets('wh_rot', rotation('sealed_3'), 'sealed_1')).toBe('changed');
    expect(await table.webhooks.get('wh_rot')).toMatchObject({ secret_sealed: 'sealed_2' });
  });
});
