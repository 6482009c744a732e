import { RESPONSE_SCHEMAS } from '../../../../functions/http/openapi/responses';
import { type Webhook, presentWebhook } from '../../../../functions/core/webhooks/webhook';

const now = new Date('2026-05-01T10:00:00.000Z');
const stored: Webhook = {
  webhook_id: 'wh_1', account_id: 'acc_1', name: 'orders', url: 'https://hooks.example.com/in', events: ['job.completed'], is_active: true,
  secret_sealed: 'sealed-new', previous_secret_sealed: null, previous_secret_expires_at: null,
  created_at: '2026-04-01T00:00:00.000Z', updated_at: '2026-04-01T00:00:00.000Z',
  last_triggered_at: null, last_success_at: null, last_failure_at: null, success_count: 0, failure_count: 0,
};
const inGrace = { ...stored, previous_secret_sealed: 'sealed-old', previous_secret_expires_at: '2026-05-01T11:00:00.000Z' };
const graceOver = { ...inGrace, previous_secret_expires_at: '2026-05-01T10:00:00.000Z' };

describe('the webhook resource', () => {
  it('shows previous_secret_expires_at only while a rotated-out secret still signs', () => {
    expect(presentWebhook(inGrace, now)).toMatchObject({ previous_secret_expires_at: '2026-05-01T11:00:00.000Z' });
    expect(presentWebhook(stored, now)).not.toHaveProperty('previous_secret_expires_at');
    expect(presentWebhook(graceOver, now)).not.toHaveProperty('previous_secret_expires_at');
    expect(presentWebhook(stored, now, 'whsec_x')).not.toHaveProperty('previous_secret_expires_at');
  });

  it('keeps to the strict response schema with and without a grace period, which refuses a null', () => {
    const schema = RESPONSE_SCHEMAS['webhooks.get'];
    for (const webhook of [stored, inGrace, graceOver]) expect(schema.safeParse({ webhook: presentWebhook(webhook, now) }).error).toBeUndefined();
    expect(RESPONSE_SCHEMAS['webhooks.rotateSecret'].safeParse({ webhook: presentWebhook(inGrace, now, 'whsec_x') }).success).toBe(true);
    expect(schema.safeParse({ webhook: { ...presentWebhook(stored, now), previous_secret_expires_at: null } }).success).toBe(false);
  });
});
