import { newAccount } from '../../../../functions/core/accounts/account';
import { Billing } from '../../../../functions/core/billing/charging';
import { commitWholeJob, jobLiveness } from '../../../../functions/core/billing/commitments';
import { type JobStatus, newJob } from '../../../../functions/core/jobs/job';
import { rejection } from '../../../support/errors';
import { MemoryAccounts, MemoryChargeStore, MemoryCommitments, MemoryJobs } from '../../../support/memory';

const PRICE = 10_000; // 0.01 USD

function world(opts: { credits?: number; allowance?: number } = {}) {
  let t = Date.parse('2026-11-22T10:00:00Z');
  const clock = { now: () => new Date(t) };
  const accounts = new MemoryAccounts();
  const jobs = new MemoryJobs();
  const commitments = new MemoryCommitments(accounts);
  const account = newAccount({ account_id: 'acct1', email: 'a@example.com', plan_id: 'standard', credits_micros: opts.credits ?? 10 * PRICE, now: clock.now() });
  if (opts.allowance !== undefined) {
    account.subscription = {
      subscription_id: 'sub_1', customer_id: null, status: 'active', name: 'Starter', price_id: null, price_micros: 20_000_000, monthly_pdfs: 2000,
      allowance_micros: opts.allowance, period_start: '2026-11-01T00:00:00Z', period_end: '2026-12-01T00:00:00Z', cancel_at_period_end: false, scheduled_change: null,
    };
  }
  accounts.accounts.set('acct1', account);
  const deps = { accounts, commitments, clock };
  const running = async (jobId: string, status: JobStatus = 'processing') =>
    jobs.put({ ...newJob({ job_id: jobId, account_id: 'acct1', job_type: 'bulk', status: 'queued', now: clock.now() }), status });
  const commit = (jobId: string, files: number) => commitWholeJob(deps, { account_id: 'acct1', job_id: jobId, charges: files, amount_micros: PRICE }, jobLiveness(jobs));
  return { accounts, jobs, commitments, deps, running, commit, advance: (ms: number) => (t += ms), stored: () => accounts.accounts.get('acct1')! };
}

describe('commitWholeJob (rule 3 for jobs that charge after they run)', () => {
  it("counts what the account's other running jobs will charge", async () => {
    const w = world({ credits: 10 * PRICE });
    await w.running('job_a');
    await w.commit('job_a', 6);
    const err = await rejection(w.commit('job_b', 6));
    expect(err.code).toBe('INSUFFICIENT_CREDITS');
    expect(err.details).toMatchObject({ required_amount: 0.06, current_balance: 0.1, committed_to_running_jobs: 0.06, running_jobs: ['job_a'], action_required: 'purchase_credits' });
    expect(err.message).toMatch(/set aside for 1 running job/);
    // What is left still fits a smaller job.
    await w.commit('job_b', 4);
    expect(Object.keys(w.stored().commitments!)).toEqual(['job_a', 'job_b']);
  });

  it('refuses without mentioning commitments when the balance alone cannot pay', async () => {
    const w = world({ credits: 3 * PRICE });
    const err = await rejection(w.commit('job_a', 4));
    expect(err.details).toEqual({ current_balance: 0.03, required_amount: 0.04, subscription_credits_remaining: 0, free_credits_remaining: 0, action_required: 'purchase_credits' });
    expect(w.stored().commitments).toBeUndefined();
  });

  it('follows the bucket order: one bucket covers each charge', async () => {
    // 2.5 PDFs of allowance plus 3.5 of credits: 2 + 3 = 5 charges fit, though the 6 PDFs pooled would pay for 6.
    const w = world({ allowance: 2.5 * PRICE, credits: 3.5 * PRICE });
    await w.running('job_a');
    expect((await rejection(w.commit('job_a', 6))).code).toBe('INSUFFICIENT_CREDITS');
    await w.commit('job_a', 5);
    // Half a PDF is left in each bucket: neither covers job_b's one charge (pooled, they would).
    const err = await rejection(w.commit('job_b', 1));
    expect(err.details).toMatchObject({ running_jobs: ['job_a'], committed_to_running_jobs: 0.05 });
    expect(err.code).toBe('INSUFFICIENT_CREDITS');
  });

  it('two checks at the same moment cannot both pass on the same balance', async () => {
    const w = world({ credits: 10 * PRICE });
    await w.running('job_a');
    await w.running('job_b');
    const outcomes = await Promise.allSettled([w.commit('job_a', 6), w.commit('job_b', 6)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(Object.keys(w.stored().commitments!)).toHaveLength(1);
  });

  it('drops the commitments of jobs that have ended, and of submissions that never wrote their job', async () => {
    const w = world({ credits: 10 * PRICE });
    await w.running('job_done');
    await w.commit('job_done', 8);
    await w.running('job_done', 'completed');
    await w.commit('job_unrecorded', 2); // a submission commits before it writes its job
    expect((await rejection(w.commit('job_b', 9))).details).toMatchObject({ running_jobs: ['job_unrecorded'] });
    w.advance(11 * 60_000);
    await w.commit('job_b', 9);
    expect(Object.keys(w.stored().commitments!)).toEqual(['job_b']);
  });

  // A bulk job that was cancelled or ended partly failed charges nothing more: its commitment must not keep refusing the next job.
  it.each<JobStatus>(['completed', 'partial_failed', 'failed', 'timeout', 'cancelled'])('frees the balance set aside for a job that ended %s', async (status) => {
    const w = world({ credits: 10 * PRICE });
    await w.running('job_a');
    await w.commit('job_a', 8);
    expect((await rejection(w.commit('job_b', 8))).code).toBe('INSUFFICIENT_CREDITS');
    await w.running('job_a', status);
    await w.commit('job_b', 8);
    expect(Object.keys(w.stored().commitments!)).toEqual(['job_b']);
  });

  it("is idempotent per job: a retried check replaces the job's own commitment", async () => {
    const w = world({ credits: 10 * PRICE });
    await w.running('job_a');
    await w.commit('job_a', 7);
    await w.commit('job_a', 7);
    expect(w.stored().commitments).toEqual({ job_a: { charges: 7, amount_micros: PRICE, at: expect.any(String) } });
  });

  it('release drops the commitment and moves the version on', async () => {
    const w = world({ credits: 10 * PRICE });
    await w.running('job_a');
    await w.commit('job_a', 10);
    const version = w.stored().commitments_version!;
    await w.commitments.release('acct1', 'job_a');
    expect(w.stored().commitments).toEqual({});
    expect(w.stored().commitments_version).toBe(version + 1);
    await w.commitments.release('acct1', 'job_a'); // twice is harmless
    await w.commit('job_b', 10);
  });

  it('does not count a running job that has charged all it committed: a refusal then is the balance alone', async () => {
    const w = world({ credits: 10 * PRICE });
    const billing = new Billing(w.accounts, new MemoryChargeStore(w.accounts, w.jobs), w.deps.clock);
    await w.running('job_a');
    await w.commit('job_a', 2);
    for (const unit of ['file-1', 'file-2']) await billing.charge({ account_id: 'acct1', job_id: 'job_a', unit, operation: 'pdf', amount_micros: PRICE, pdf_count: 1 });
    const err = await rejection(commitWholeJob({ ...w.deps, billing }, { account_id: 'acct1', job_id: 'job_b', charges: 9, amount_micros: PRICE }, jobLiveness(w.jobs)));
    expect(err.details).toEqual({ current_balance: 0.08, required_amount: 0.09, subscription_credits_remaining: 0, free_credits_remaining: 0, action_required: 'purchase_credits' });
    expect(err.message).not.toMatch(/set aside/);
  });

  it("counts a running job's charge once when it lands while the check reads the account and then the ledger", async () => {
    const w = world({ credits: 10 * PRICE });
    const billing = new Billing(w.accounts, new MemoryChargeStore(w.accounts, w.jobs), w.deps.clock);
    await w.running('job_a');
    await w.commit('job_a', 6);
    w.advance(1000);
    // job_a charges its first file between the check's two reads: the balance falls to 9 and job_a still owes 5,
    // so 4 are left for job_b. (Counted in neither read, the charge would let a job of 5 through.)
    let landed = false;
    const racing = {
      chargesSince: async (accountId: string, jobId: string, since: string) => {
        if (!landed) {
          landed = true;
          await billing.charge({ account_id: 'acct1', job_id: 'job_a', unit: 'file-1', operation: 'pdf', amount_micros: PRICE, pdf_count: 1 });
        }
        return billing.chargesSince(accountId, jobId, since);
      },
    };
    const check = (jobId: string, files: number) => commitWholeJob({ ...w.deps, billing: racing }, { account_id: 'acct1', job_id: jobId, charges: files, amount_micros: PRICE }, jobLiveness(w.jobs));
    const err = await rejection(check('job_b', 5));
    expect(err.details).toMatchObject({ current_balance: 0.09, committed_to_running_jobs: 0.05 });
    await check('job_b', 4);
  });
});
