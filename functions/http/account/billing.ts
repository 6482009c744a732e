import { planOf } from '../../core/accounts/entitlements';
import { billingSummary } from '../../core/billing/summary';
import { json } from '../responses';
import { authedRoute } from '../route';

/** GET /accounts/me/billing → { billing: <billing summary> } */
export const handler = authedRoute('account.billing', async ({ account, services }) => {
  const plan = await planOf(services.plans, account);
  return json(200, { billing: billingSummary(account, plan, services.clock.now()) });
});
