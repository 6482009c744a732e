import { type Account, subscriptionIsUsable, usableAllowanceMicros } from '../accounts/account';
import type { AccountRepository } from '../accounts/ports';
import type { Clock } from '../clock';
import { ServiceError } from '../errors';
import type { OutboxEvent } from '../events/events';
import type { Job } from '../jobs/job';
import { readBack } from '../lost-replies';
import { type Micros, microsToUsd } from './money';

/** Where a charge is taken from, in the order the charging rules try them. */
export type Bucket = 'subscription' | 'free_credits' | 'credits';

/**
 * One chargeable unit of work. `(job_id, unit)` is the exactly-once key: a unit is e.g. `pdf`
 * for a quick job, `file#12` for a bulk file, `row#40` for a mail-merge row, `save#<token>` for an edit.
 */
export interface Charge {
  account_id: string;
  job_id: string;
  unit: string;
  operation: 'pdf' | 'pdf_operation' | 'edit' | 'email';
  amount_micros: Micros;
  /** How much `total_pdf_count` rises (a split into 24 files adds 24). */
  pdf_count: number;
}

export type CommitOutcome = 'charged' | 'already_charged' | 'bucket_changed' | 'job_finished';

/** What else a charge writes in its transaction: the job's new state and the events it causes. */
export interface ChargeEffects {
  job?: Job;
  events?: OutboxEvent[];
  /**
   * The job is written only while it is processing under this lease (a worker's claim): a worker whose lease ran out
   * and whose job another worker took over must not complete it under that worker's claim.
   */
  leaseUntil?: string;
}

/** A charge as the ledger holds it: the bucket it was taken from, and when it was given back, if it was. */
export interface LedgerEntry extends Charge {
  bucket: Bucket;
  created_at: string;
  refunded_at?: string | null;
}

/** Persistence for charges: one atomic write of the ledger entry, the debit, the usage counters and the effects. */
export interface ChargeStore {
  /**
   * `charged` only when this call's write committed, also when its reply was lost (the store finds out);
   * `already_charged` when an earlier call charged the unit; `job_finished` (nothing written) when `effects.job`
   * exists and is no longer queued or processing (another task finished it: failed, timed out or completed), or, with
   * `effects.leaseUntil`, no longer processing under that lease (another worker took it over).
   */
  commit(charge: Charge, bucket: Bucket, now: Date, effects?: ChargeEffects): Promise<CommitOutcome>;
  /**
   * Several charges of one account in one atomic write: every ledger entry must be new and every bucket
   * must still cover its share, else nothing is written (`conflict`). At most `MAX_BATCH` charges.
   */
  commitMany(charges: { charge: Charge; bucket: Bucket }[], now: Date): Promise<'charged' | 'conflict'>;
  /** The job's ledger entries, refunded ones included. */
  chargesOf(accountId: string, jobId: string): Promise<LedgerEntry[]>;
  /**
   * Gives one charge back, once: the entry is marked refunded in the same write that returns the amount to its bucket
   * (an allowance whose subscription is gone: to one-off credits) and takes it off the usage counters.
   */
  refund(entry: LedgerEntry, now: Date): Promise<'refunded' | 'already_refunded'>;
}

/** Charges per batch: a DynamoDB transaction holds 100 items, one of which is the account's debit. */
export const MAX_BATCH = 50;

/** The account as it is after `amount` was taken from `bucket` (what the store's debit does). */
export function afterDebit(account: Account, bucket: Bucket, amount: Micros): Account {
  if (bucket === 'subscription') return { ...account, subscription: { ...account.subscription!, allowance_micros: account.subscription!.allowance_micros - amount } };
  if (bucket === 'free_credits') return { ...account, free_credits_micros: account.free_credits_micros - amount };
  return { ...account, credits_micros: account.credits_micros - amount };
}

/** Rule 1: subscription allowance (while usable), then free credits, then one-off credits; one bucket covers the whole charge. */
export function chooseBucket(account: Account, amount: Micros, now: Date): Bucket | null {
  if (subscriptionIsUsable(account.subscription, now) && account.subscription.allowance_micros >= amount) return 'subscription';
  if (account.free_credits_micros >= amount) return 'free_credits';
  if (account.credits_micros >= amount) return 'credits';
  return null;
}

export function insufficientCredits(account: Account, required: Micros, now: Date): ServiceError {
  return new ServiceError(
    'INSUFFICIENT_CREDITS',
    `This needs ${microsToUsd(required)} USD and no balance can cover it. Buy a credit pack or upgrade the subscription, then retry.`,
    {
      current_balance: microsToUsd(account.credits_micros),
      required_amount: microsToUsd(required),
      subscription_credits_remaining: microsToUsd(usableAllowanceMicros(account, now)),
      free_credits_remaining: microsToUsd(account.free_credits_micros),
      action_required: 'purchase_credits',
    },
  );
}

/** Rule 3 pre-check: refuse before doing work when no single bucket could cover `amount`. */
export function assertCanCover(account: Account, amount: Micros, now: Date): void {
  if (chooseBucket(account, amount, now) === null) throw insufficientCredits(account, amount, now);
}

const MAX_ATTEMPTS = 100;

/**
 * The one entry point every charging feature uses. Exactly-once per (job, unit): a retried step or a
 * redelivered message finds the ledger entry and charges nothing. Never negative: the debit is
 * conditional on the chosen bucket still covering the amount; if a concurrent charge got there first,
 * the account is re-read and the next bucket tried, until none covers it (403 INSUFFICIENT_CREDITS).
 */
export class Billing {
  constructor(
    private readonly accounts: AccountRepository,
    private readonly store: ChargeStore,
    private readonly clock: Clock,
  ) {}

  /**
   * `effects` are written in the same transaction. `known` is the account as the caller last read it:
   * the first attempt trusts it (the write's conditions catch a stale copy), later attempts re-read.
   */
  async charge(charge: Charge, effects: ChargeEffects = {}, known?: Account): Promise<{ outcome: 'charged' | 'already_charged'; bucket: Bucket | null }> {
    if (!Number.isSafeInteger(charge.amount_micros) || charge.amount_micros < 0) throw new TypeError('charge amount must be non-negative integer micros');
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const account = attempt === 0 && known?.account_id === charge.account_id ? known : await this.accounts.get(charge.account_id);
      if (!account) throw new ServiceError('ACCOUNT_NOT_FOUND', 'The credential is valid but no account exists for it. Finish sign-up in the dashboard first.');
      const now = this.clock.now();
      const bucket = chooseBucket(account, charge.amount_micros, now);
      if (!bucket) {
        if (account === known) continue; // maybe topped up since it was read
        // A retry of a unit whose first charge committed (its reply lost, or a step run again) finds it here even when
        // that charge took the last of the balance: it is charged, not refused.
        if ((await this.store.chargesOf(charge.account_id, charge.job_id)).some((entry) => entry.unit === charge.unit)) return { outcome: 'already_charged', bucket: null };
        throw insufficientCredits(account, charge.amount_micros, now);
      }
      const outcome = await this.store.commit(charge, bucket, now, effects);
      if (outcome === 'charged') return { outcome, bucket };
      if (outcome === 'already_charged') return { outcome, bucket: null };
      if (outcome === 'job_finished') {
        throw new ServiceError('JOB_ALREADY_FINISHED', `Job ${charge.job_id} was finished by another task meanwhile; nothing was charged.`, { job_id: charge.job_id });
      }
    }
    throw new Error(`charge for ${charge.job_id}/${charge.unit} kept conflicting after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * Charges of one account in order, with the same outcome as charging them one by one (each unit once,
   * each from the first bucket covering it), written in batches of up to `MAX_BATCH`. Stops at the first
   * charge no balance covers and answers how many leading charges are done (charged now or before).
   * A batch that meets an existing ledger entry or a concurrent debit is done one charge at a time.
   */
  async chargeInOrder(charges: Charge[], known?: Account): Promise<number> {
    if (charges.length === 0) return 0;
    const accountId = charges[0].account_id;
    if (charges.some((c) => c.account_id !== accountId)) throw new TypeError('chargeInOrder takes the charges of one account');
    let account = known?.account_id === accountId ? known : await this.accounts.get(accountId);
    let done = 0;
    while (done < charges.length) {
      const now = this.clock.now();
      const batch: { charge: Charge; bucket: Bucket }[] = [];
      let after = account;
      for (const charge of charges.slice(done, done + MAX_BATCH)) {
        const bucket = after ? chooseBucket(after, charge.amount_micros, now) : null;
        if (!bucket || !after) break;
        batch.push({ charge, bucket });
        after = afterDebit(after, bucket, charge.amount_micros);
      }
      if (batch.length > 1 && (await this.store.commitMany(batch, now)) === 'charged') {
        done += batch.length;
        account = after;
        continue;
      }
      // One at a time: the single path re-reads the account, skips units already charged and says when nothing covers one.
      for (const { charge } of batch.length > 1 ? batch : [{ charge: charges[done] }]) {
        try {
          await this.charge(charge);
        } catch (err) {
          if (err instanceof ServiceError && err.code === 'INSUFFICIENT_CREDITS') return done;
          throw err;
        }
        done++;
      }
      account = await this.accounts.get(accountId);
    }
    return done;
  }

  /** How many charges of a job made at or after `since` (an ISO time) stand, refunded ones left out. */
  async chargesSince(accountId: string, jobId: string, since: string): Promise<number> {
    return (await this.store.chargesOf(accountId, jobId)).filter((entry) => !entry.refunded_at && entry.created_at >= since).length;
  }

  /**
   * Gives back everything a job was charged, each charge once however often this runs: for work that was charged
   * and then did not reach the customer (a bulk job that failed after its files were paid for, a commit whose reply
   * was lost before its job was recorded as failed). Returns the micro-USD given back by this call.
   */
  async refundJob(accountId: string, jobId: string): Promise<Micros> {
    let refunded = 0;
    for (const entry of await this.store.chargesOf(accountId, jobId)) {
      if (entry.refunded_at) continue;
      if ((await this.store.refund(entry, this.clock.now())) === 'refunded') refunded += entry.amount_micros;
    }
    return refunded;
  }
}

/**
 * After a charge-and-complete write (`charge` with `effects.job`) failed with an unexpected error: whether it
 * committed and only its reply was lost. The write completes the job in the same transaction as the charge, so the
 * job says it: `committed` (completed, and charged), `not_committed` (nothing was charged), or `unknown` when the job
 * cannot be read now (three tries, see lost-replies.ts), in which case the caller leaves everything as the write left it.
 */
export async function completionCommitted(jobs: { get(jobId: string): Promise<Job | null> }, jobId: string): Promise<'committed' | 'not_committed' | 'unknown'> {
  const job = await readBack(() => jobs.get(jobId));
  if (job === undefined) return 'unknown';
  return job?.status === 'completed' ? 'committed' : 'not_committed';
}

/**
 * Charges for a finished job and completes it (with its events) in one write, for a caller that answers a request. Resolves when the
 * write committed, also when only its reply was lost (the job then reads completed). When it did not commit,
 * `undo(err)` removes and records what the failed job left, and the error is rethrown; when that cannot be known now
 * (the job cannot be read), the error is rethrown and everything stays as the write left it.
 */
export async function chargeCompletion(
  deps: { billing: Pick<Billing, 'charge'>; jobs: { get(jobId: string): Promise<Job | null> } },
  charge: Charge,
  completion: ChargeEffects & { job: Job },
  account: Account,
  undo: (err: unknown) => Promise<void>,
): Promise<void> {
  try {
    await deps.billing.charge(charge, completion, account);
  } catch (first) {
    let err = first;
    if (!(first instanceof ServiceError)) {
      // The outcome is unknown (a reply lost, maybe a read-back that failed too). The charge is exactly-once per
      // (job, unit), so it is simply made again: it charges now if the first did not commit, and finds the first's
      // ledger entry (nothing more charged) if it did. Either way the job is then completed and charged once.
      try {
        await deps.billing.charge(charge, completion, account);
        return;
      } catch (again) {
        err = again;
      }
    }
    // A refusal wrote nothing.
    const outcome = err instanceof ServiceError ? 'not_committed' : await completionCommitted(deps.jobs, completion.job.job_id);
    if (outcome === 'committed') return;
    if (outcome === 'not_committed') await undo(err);
    throw err;
  }
}
