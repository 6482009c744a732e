import type { Account, JobCommitment } from '../accounts/account';
import type { AccountRepository } from '../accounts/ports';
import type { Clock } from '../clock';
import { ServiceError } from '../errors';
import { FINISHED_STATUSES } from '../jobs/job';
import type { JobRepository } from '../jobs/ports';
import { type Billing, afterDebit, chooseBucket, insufficientCredits } from './charging';
import { type Micros, microsToUsd } from './money';

/**
 * Charging rule 3 for jobs that charge after they run (bulk files at Finish, a merge/split at its end): "the check
 * covers the whole job before it starts". Two such jobs of one account checked at the same moment would both see
 * the whole balance; a commitment records what a running job will charge, so the next job's check sees only what
 * is left. Commitments live on the account item and change only by a write conditional on `commitments_version`
 * (two checks cannot both pass on the same balance). Quick jobs and single charges ignore them: rule 3 refuses a
 * request only when no bucket can cover it.
 */
export interface CommitmentStore {
  /** Replaces the account's commitments if `commitments_version` is still `version`; false when another write came first. */
  replace(accountId: string, version: number, commitments: Record<string, JobCommitment>, at: Date): Promise<boolean>;
  /** Drops the commitment of `jobId` (no-op when there is none), moving the version on. */
  release(accountId: string, jobId: string): Promise<void>;
}

/** What the job will charge: `charges` charges of `amount_micros` each (one per bulk file; one for a merge/split). */
export interface WholeJob {
  account_id: string;
  job_id: string;
  charges: number;
  amount_micros: Micros;
}

/**
 * Whether a committed job still runs: true/false from its record, null when there is no record (yet: a submission
 * commits before it writes the job).
 */
export type JobLiveness = (jobId: string) => Promise<boolean | null>;

/** Liveness from the job records: a job runs until it reaches a finished status. */
export function jobLiveness(jobs: Pick<JobRepository, 'get'>): JobLiveness {
  return async (jobId) => {
    const job = await jobs.get(jobId);
    return job ? !FINISHED_STATUSES.has(job.status) : null;
  };
}

/** A commitment without a job record older than this is left over from a submission that never finished. */
const UNRECORDED_GRACE_MS = 10 * 60_000;
const MAX_ATTEMPTS = 20;

/** The account as it would be after `charges` charges of `amount`, taken in bucket order; null when they do not all fit. */
function afterCharges(account: Account, charges: number, amount: Micros, now: Date): Account | null {
  let after = account;
  for (let i = 0; i < charges; i++) {
    const bucket = chooseBucket(after, amount, now);
    if (!bucket) return null;
    after = afterDebit(after, bucket, amount);
  }
  return after;
}

/**
 * The balances left once every commitment in `commitments` is charged; null when they do not all fit (the running
 * jobs already need more than the balance holds, so nothing is left for another job, however small).
 */
function afterCommitments(account: Account, commitments: JobCommitment[], now: Date): Account | null {
  let after: Account | null = account;
  for (const c of commitments) {
    after = afterCharges(after, c.charges, c.amount_micros, now);
    if (!after) return null;
  }
  return after;
}

/**
 * Checks that the account can pay for the whole job on top of what its other running jobs will charge, and if so
 * records the job's commitment; otherwise 403 INSUFFICIENT_CREDITS (nothing recorded). Idempotent per job: a retried
 * check replaces the job's own commitment. Commitments of jobs that have ended are dropped on the way.
 */
export async function commitWholeJob(
  deps: { accounts: AccountRepository; commitments: CommitmentStore; clock: Clock; billing?: Pick<Billing, 'chargesSince'> },
  job: WholeJob,
  isRunning: JobLiveness,
): Promise<void> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const account = await deps.accounts.get(job.account_id);
    if (!account) throw new ServiceError('ACCOUNT_NOT_FOUND', 'The credential is valid but no account exists for it. Finish sign-up in the dashboard first.');
    const now = deps.clock.now();
    const kept: Record<string, JobCommitment> = {};
    // What the kept jobs still owe: a running job that has charged some of its commitment already (a bulk Finish charges
    // its files before it writes the job) has taken that part out of the balance, so it must not be counted twice.
    const others: JobCommitment[] = [];
    for (const [jobId, c] of Object.entries(account.commitments ?? {})) {
      if (jobId === job.job_id) continue;
      const running = await isRunning(jobId);
      if (!(running || (running === null && now.getTime() - Date.parse(c.at) < UNRECORDED_GRACE_MS))) continue;
      kept[jobId] = c;
      const taken = running && deps.billing ? await deps.billing.chargesSince(job.account_id, jobId, c.at) : 0;
      if (c.charges - taken > 0) others.push({ ...c, charges: c.charges - taken });
    }
    // The balance is read again after the ledger: a charge landing between the first read and the ledger's would
    // otherwise be in neither (the balance still has it, `taken` no longer owes it). Read in this order, such a
    // charge counts twice at worst, which refuses rather than over-commits.
    const balance = others.length === 0 || !deps.billing ? account : await deps.accounts.get(job.account_id);
    if (!balance || (balance.commitments_version ?? 0) !== (account.commitments_version ?? 0)) continue;
    const required = job.charges * job.amount_micros;
    const left = afterCommitments(balance, others, now);
    if (!left || !afterCharges(left, job.charges, job.amount_micros, now)) {
      const refusal = insufficientCredits(balance, required, now);
      if (others.length === 0) throw refusal;
      const committed = others.reduce((sum, c) => sum + c.charges * c.amount_micros, 0);
      throw new ServiceError(
        refusal.code,
        `This job needs ${microsToUsd(required)} USD, and ${microsToUsd(committed)} USD of the balance is already set aside for ${others.length} running job${others.length === 1 ? '' : 's'}. Wait for ${others.length === 1 ? 'it' : 'them'} to finish, or buy a credit pack, then retry.`,
        { ...refusal.details, committed_to_running_jobs: microsToUsd(committed), running_jobs: Object.keys(kept) },
      );
    }
    const next = { ...kept, [job.job_id]: { charges: job.charges, amount_micros: job.amount_micros, at: now.toISOString() } };
    if (await deps.commitments.replace(job.account_id, account.commitments_version ?? 0, next, now)) return;
  }
  throw new Error(`the commitment of job ${job.job_id} kept conflicting after ${MAX_ATTEMPTS} attempts`);
}
