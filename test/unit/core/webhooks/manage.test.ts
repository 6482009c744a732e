import { loadOwnWebhook } from '../../../../functions/core/webhooks/manage';
import type { WebhookRepository } from '../../../../functions/core/webhooks/ports';
import type { Webhook } from '../../../../functions/core/webhooks/webhook';
import { rejection } from '../../../support/errors';

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
});
