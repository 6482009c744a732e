import { z } from 'zod';
import { newAccount } from '../../../../functions/core/accounts/account';
import { creditPacks } from '../../../../functions/core/billing/packs';
import { planCatalogue } from '../../../../functions/core/billing/plans';
import type { BillingStateStore, PaymentProvider } from '../../../../functions/core/subscriptions/ports';
import { SubscriptionService, changeSubscriptionBodySchema } from '../../../../functions/core/subscriptions/service';
import { rejection } from '../../../support/errors';

const now = new Date('2026-11-21T12:00:00Z');
const account = newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: null, now });

function service(provider: PaymentProvider | null) {
  return new SubscriptionService({
    accounts: { get: async () => account, create: async () => true },
    plans: { get: async () => null, list: async () => planCatalogue({ starter: 'price_s', business: 'price_b' }), put: async () => undefined },
    store: {} as BillingStateStore,
    provider,
    packs: creditPacks(),
    clock: { now: () => now },
  });
}

describe('POST /accounts/me/subscription/change body', () => {
  const withProvider = service({} as PaymentProvider);

  it('refuses a missing, empty or non-string price_id, and a body that is not an object, naming price_id with the plans on offer', async () => {
    for (const body of [undefined, null, 'price_s', ['price_s'], {}, { price_id: null }, { price_id: '' }, { price_id: 7 }]) {
      const err = await rejection(withProvider.change(account, body));
      expect(err.code).toBe('INVALID_PARAMETER');
      expect(err.details).toEqual({ parameter: 'price_id', allowed: ['price_s', 'price_b'] });
      expect(err.message).toContain('GET /accounts/me/subscription/plans');
    }
  });

  it('refuses a price that is not on offer the same way, and checks the body before the subscription', async () => {
    expect((await rejection(withProvider.change(account, { price_id: 'price_x' }))).details).toEqual({ parameter: 'price_id', allowed: ['price_s', 'price_b'] });
    expect((await rejection(withProvider.change(account, { price_id: 'price_b' }))).code).toBe('NO_ACTIVE_SUBSCRIPTION');
  });

  it('needs the provider only for a real change: the body and the subscription are checked first', async () => {
    expect((await rejection(service(null).change(account, {}))).code).toBe('INVALID_PARAMETER');
    expect((await rejection(service(null).change(account, { price_id: 'price_b' }))).code).toBe('NO_ACTIVE_SUBSCRIPTION');
    const subscribed = {
      ...account,
      subscription: { subscription_id: 'sub_1', status: 'active', price_id: 'price_s', price_micros: 20_000_000 },
    } as unknown as typeof account;
    expect((await rejection(service(null).change(subscribed, { price_id: 'price_b' }))).code).toBe('PAYMENTS_NOT_CONFIGURED');
  });

  it('documents price_id', () => {
    const json = z.toJSONSchema(changeSubscriptionBodySchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }>; required: string[] };
    expect(json.required).toEqual(['price_id']);
    expect(json.properties.price_id.description).toEqual(expect.any(String));
  });
});
