import type { Account } from '../../core/accounts/account';
import { pricePerPdfOf, presentSubscription } from '../../core/billing/summary';
import type { Services } from '../../composition';

/** `{ subscription: <subscription object or null> }`, the body of every subscription route. */
export async function subscriptionBody(services: Services, account: Account) {
  const plan = account.plan_id ? await services.plans.get(account.plan_id) : null;
  const sub = account.subscription;
  return { subscription: sub ? presentSubscription(sub, pricePerPdfOf(plan), services.clock.now()) : null };
}
