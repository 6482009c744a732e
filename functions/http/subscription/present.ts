import type { Account } from '../../core/accounts/account';
import { planOf } from '../../core/accounts/entitlements';
import { pricePerPdfOf, presentSubscription } from '../../core/billing/summary';
import type { Services } from '../../composition';

/** `{ subscription: <subscription object or null> }`, the body of every subscription route. */
export async function subscriptionBody(services: Services, account: Account) {
  const plan = await planOf(services.plans, account);
  const sub = account.subscription;
  return { subscription: sub ? presentSubscription(sub, pricePerPdfOf(plan), services.clock.now()) : null };
}
