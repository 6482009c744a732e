import { planOf } from '../../core/accounts/entitlements';
import { presentAccount } from '../../core/accounts/present';
import { json } from '../responses';
import { type AuthedRequest, authedRoute } from '../route';

/** GET /me (key or token) and GET /accounts/me (token only) share this handler. */
async function getAccount(req: AuthedRequest) {
  const { account, principal, services } = req;
  const plan = await planOf(services.plans, account);
  return json(200, presentAccount(account, plan, principal, services.clock.now()));
}

export const handler = authedRoute('me.get', getAccount);
export const accountHandler = authedRoute('account.get', getAccount);
