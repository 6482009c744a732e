import { planCatalogue } from '../../../../functions/core/billing/plans';
import { SubscriptionCatalog } from '../../../../functions/core/subscriptions/catalog';

const plans = planCatalogue({ starter: 'price_s', business: 'price_b' });
const byId = (id: string) => plans.find((p) => p.plan_id === id)!;

describe('SubscriptionCatalog', () => {
  it('offers the active plans cheapest first, whatever order the catalogue lists them in', () => {
    const catalog = SubscriptionCatalog.fromPlans([byId('business'), byId('starter')]);
    const prices = catalog.offered().map((t) => t.price_micros);
    expect(prices).toHaveLength(2);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
  });

  it('still finds a retired plan by its price (its subscribers keep their terms) but does not offer it', () => {
    const catalog = SubscriptionCatalog.fromPlans([{ ...byId('starter'), active: false }, byId('business')]);
    expect(catalog.forPrice('price_s')).toMatchObject({ plan_id: 'starter', active: false });
    expect(catalog.offered().map((t) => t.plan_id)).toEqual(['business']);
  });

  it('leaves out a subscription plan without a monthly price', () => {
    const catalog = SubscriptionCatalog.fromPlans([{ ...byId('starter'), monthly_price_micros: null }, byId('business')]);
    expect(catalog.forPrice('price_s')).toBeNull();
    expect(catalog.isSubscriptionPlan('starter')).toBe(false);
  });
});
