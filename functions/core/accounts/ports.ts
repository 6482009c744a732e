import type { Plan } from '../billing/plans';
import type { Account } from './account';

export interface AccountRepository {
  get(accountId: string): Promise<Account | null>;
  /** Creates the account; false when one with that id already exists. */
  create(account: Account): Promise<boolean>;
}

export interface PlanRepository {
  get(planId: string): Promise<Plan | null>;
  list(): Promise<Plan[]>;
  /** Writes plans from the catalogue (deploy/start-up seeding); existing ones are replaced. */
  put(plans: Plan[]): Promise<void>;
}

export interface RateLimiter {
  /** Counts one request in the current minute; refuses when `limitPerMinute` is already reached. */
  consume(accountId: string, limitPerMinute: number, now: Date): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }>;
}
