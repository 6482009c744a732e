import { planOf } from '../../core/accounts/entitlements';
import { creditsSummary } from '../../core/billing/summary';
import { json } from '../responses';
import { authedRoute } from '../route';

const RECENT_PURCHASES = 20;

/** GET /accounts/me/credits: balances in charging order, the packs on offer, the latest purchases. */
export const handler = authedRoute('account.credits', async ({ account, services }) => {
  const [plan, purchases] = await Promise.all([
    planOf(services.plans, account),
    services.billingState.purchases(account.account_id, RECENT_PURCHASES),
  ]);
  return json(200, creditsSummary(account, plan, services.clock.now(), services.creditPacks, purchases));
});
