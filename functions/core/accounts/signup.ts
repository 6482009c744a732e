import { type Account, newAccount } from './account';
import type { AccountRepository } from './ports';

/**
 * A confirmed sign-up becomes a pending account (no plan: conversions answer 402 until a pack or a
 * subscription is bought). The account id is the user pool's `sub`, so an ID token maps to its account
 * without a lookup. Running twice (Cognito retries triggers) is harmless.
 */
export async function openPendingAccount(accounts: AccountRepository, input: { sub: string; email: string; now: Date }): Promise<Account> {
  const account = newAccount({ account_id: input.sub, email: input.email, plan_id: null, now: input.now });
  if (!(await accounts.create(account))) return (await accounts.get(input.sub)) ?? account;
  return account;
}
