import type { Principal } from '../auth/authenticate';
import { billingSummary } from '../billing/summary';
import { PENDING_PLAN_ID, type Plan } from '../billing/plans';
import type { Account } from './account';

/** GET /me and GET /accounts/me: who is calling, on which plan, with what balances. */
export function presentAccount(account: Account, plan: Plan | null, principal: Principal, now: Date) {
  return {
    account_id: account.account_id,
    email: account.email,
    status: account.status,
    // One representation in the whole body: a pending account's plan is "pending", as in billing.plan_id.
    plan_id: account.plan_id ?? PENDING_PLAN_ID,
    plan_name: plan?.name ?? null,
    created_at: account.created_at,
    credential: { type: principal.credential, api_key_id: principal.api_key_id },
    billing: billingSummary(account, plan, now),
    settings: { email_notifications: account.email_notifications },
    mailmerge: { max_rows: account.mailmerge_max_rows },
  };
}
