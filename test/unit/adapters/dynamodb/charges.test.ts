import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { DynamoChargeStore } from '../../../../functions/adapters/dynamodb/charges';
import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { newAccount } from '../../../../functions/core/accounts/account';
import { completed, newJob } from '../../../../functions/core/jobs/job';
import { withLocalTable } from '../../../support/local-table';

/** Against the local table, whose transactions answer as DynamoDB's do (every failed condition named). */
describe('DynamoChargeStore.commit', () => {
  const table = withLocalTable('charges', (db) => ({ store: new DynamoChargeStore(db), accounts: new DynamoAccountRepository(db), jobs: new DynamoJobRepository(db) }));
  const at = new Date('2026-11-22T10:00:00Z');

  it('says the job finished meanwhile even when the bucket no longer covers the charge either', async () => {
    // DynamoDB cancels this with [None, ConditionalCheckFailed, ConditionalCheckFailed]: the job's answer, not a retry
    // that would end in INSUFFICIENT_CREDITS for a job another task already finished.
    await table.accounts.create(newAccount({ account_id: 'acct_f', email: 'f@example.com', plan_id: 'standard', credits_micros: 0, now: at }));
    const job = newJob({ job_id: 'job_f', account_id: 'acct_f', job_type: 'long', status: 'processing', now: at });
    await table.jobs.put(completed(job, at));
    const charge = { account_id: 'acct_f', job_id: 'job_f', unit: 'pdf', operation: 'pdf' as const, amount_micros: 5_000, pdf_count: 1 };
    await expect(table.store.commit(charge, 'credits', at, { job: completed(job, at) })).resolves.toBe('job_finished');
  });

  it("writes a worker's completion only while the job is processing under that worker's lease", async () => {
    await table.accounts.create(newAccount({ account_id: 'acct_l', email: 'l@example.com', plan_id: 'standard', credits_micros: 50_000, now: at }));
    const job = newJob({ job_id: 'job_l', account_id: 'acct_l', job_type: 'long', status: 'processing', now: at });
    // Taken over: the job is processing under the second worker's lease, not the first's.
    await table.jobs.put({ ...job, lease_until: '2026-11-22T10:03:00.000Z' });
    const charge = { account_id: 'acct_l', job_id: 'job_l', unit: 'pdf', operation: 'pdf' as const, amount_micros: 5_000, pdf_count: 1 };
    await expect(table.store.commit(charge, 'credits', at, { job: completed(job, at), leaseUntil: '2026-11-22T10:01:00.000Z' })).resolves.toBe('job_finished');
    expect((await table.accounts.get('acct_l'))!.credits_micros).toBe(50_000);
    expect(await table.store.chargesOf('acct_l', 'job_l')).toEqual([]);
    await expect(table.store.commit(charge, 'credits', at, { job: completed(job, at), leaseUntil: '2026-11-22T10:03:00.000Z' })).resolves.toBe('charged');
    expect(await table.jobs.get('job_l')).toMatchObject({ status: 'completed' });
  });

  it('answers bucket_changed when only the bucket no longer covers it', async () => {
    await table.accounts.create(newAccount({ account_id: 'acct_b', email: 'b@example.com', plan_id: 'standard', credits_micros: 0, now: at }));
    const job = newJob({ job_id: 'job_b', account_id: 'acct_b', job_type: 'long', status: 'processing', now: at });
    await table.jobs.put(job);
    const charge = { account_id: 'acct_b', job_id: 'job_b', unit: 'pdf', operation: 'pdf' as const, amount_micros: 5_000, pdf_count: 1 };
    await expect(table.store.commit(charge, 'credits', at, { job: completed(job, at) })).resolves.toBe('bucket_changed');
  });

  // A caller that chose the bucket from a stale read: the debit's own condition keeps every balance from going negative.
  it.each(['free_credits', 'subscription'] as const)('answers bucket_changed and writes nothing when %s no longer covers the charge', async (bucket) => {
    const account = newAccount({ account_id: `acct_${bucket}`, email: 'n@example.com', plan_id: 'standard', free_credits_micros: 4_999, credits_micros: 50_000, now: at });
    account.subscription = {
      subscription_id: 'sub_1', customer_id: 'cus_1', status: 'active', name: 'Starter', price_id: 'price_s', price_micros: 20_000_000, monthly_pdfs: 2000,
      allowance_micros: 4_999, period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z', cancel_at_period_end: false, scheduled_change: null,
    };
    await table.accounts.create(account);
    const charge = { account_id: account.account_id, job_id: 'job_n', unit: 'pdf', operation: 'pdf' as const, amount_micros: 5_000, pdf_count: 1 };
    await expect(table.store.commit(charge, bucket, at)).resolves.toBe('bucket_changed');
    expect(await table.accounts.get(account.account_id)).toMatchObject({ free_credits_micros: 4_999, subscription: { allowance_micros: 4_999 }, total_amount_micros: 0 });
    expect(await table.store.chargesOf(account.account_id, 'job_n')).toEqual([]);
  });
});

/** The refund's conditions as DynamoDB evaluates them, mirroring allowanceTakesRefund. */
describe('DynamoChargeStore.refund of an allowance charge', () => {
  const table = withLocalTable('refunds', (db) => ({ store: new DynamoChargeStore(db), accounts: new DynamoAccountRepository(db) }));
  const chargedAt = new Date('2026-12-05T00:00:00Z');
  const refundAt = new Date('2026-12-06T00:00:00Z');

  async function chargedFromAllowance(accountId: string, allowancePeriodStart: string) {
    const account = newAccount({ account_id: accountId, email: `${accountId}@example.com`, plan_id: 'standard', credits_micros: 0, now: chargedAt });
    account.subscription = {
      subscription_id: 'sub_1', customer_id: 'cus_1', status: 'active', name: 'Starter', price_id: 'price_s', price_micros: 20_000_000, monthly_pdfs: 2000,
      allowance_micros: 50_000, period_start: '2026-12-01T00:00:00.000Z', period_end: '2026-12-31T00:00:00.000Z', allowance_period_start: allowancePeriodStart,
      cancel_at_period_end: false, scheduled_change: null,
    };
    await table.accounts.create(account);
    const charge = { account_id: accountId, job_id: 'job_r', unit: 'pdf', operation: 'pdf' as const, amount_micros: 10_000, pdf_count: 1 };
    await expect(table.store.commit(charge, 'subscription', chargedAt)).resolves.toBe('charged');
    const [entry] = await table.store.chargesOf(accountId, 'job_r');
    await expect(table.store.refund(entry, refundAt)).resolves.toBe('refunded');
    return table.accounts.get(accountId);
  }

  it("gives it back to this period's allowance", async () => {
    expect(await chargedFromAllowance('acct_now', '2026-12-01T00:00:00.000Z')).toMatchObject({ subscription: { allowance_micros: 50_000 }, credits_micros: 0, total_amount_micros: 0 });
  });

  it("gives it to credits while the allowance is still last period's (this period's invoice would overwrite it)", async () => {
    expect(await chargedFromAllowance('acct_old', '2026-11-01T00:00:00.000Z')).toMatchObject({ subscription: { allowance_micros: 40_000 }, credits_micros: 10_000, total_amount_micros: 0 });
  });
});

/**
 * A transaction that committed but whose reply was lost is sent again (by the SDK's retry, or by ours); the second
 * send finds its own ledger entry. That is this call's charge, not someone else's: `charged`, once.
 */
describe('DynamoChargeStore.commit sent twice', () => {
  const table = withLocalTable('charges-twice', (db) => {
    let resend = false;
    const send = db.doc.send.bind(db.doc) as (cmd: unknown) => Promise<unknown>;
    // The first send commits; its reply is dropped and the same command goes again, as a retry after a lost reply does.
    const twice = Object.assign(Object.create(db.doc), {
      send: async (cmd: { constructor: { name: string } }) => {
        if (!resend || cmd.constructor.name !== 'TransactWriteCommand') return send(cmd);
        await send(cmd);
        return send(cmd);
      },
    });
    return { store: new DynamoChargeStore(db), resending: new DynamoChargeStore({ ...db, doc: twice }), accounts: new DynamoAccountRepository(db), resend: (on: boolean) => (resend = on) };
  });
  const at = new Date('2026-11-22T10:00:00Z');

  it('answers charged when the entry it meets is its own, and already_charged when another call wrote it', async () => {
    await table.accounts.create(newAccount({ account_id: 'acct_t', email: 't@example.com', plan_id: 'standard', credits_micros: 50_000, now: at }));
    const charge = (unit: string) => ({ account_id: 'acct_t', job_id: 'job_t', unit, operation: 'pdf' as const, amount_micros: 5_000, pdf_count: 1 });
    table.resend(true);
    await expect(table.resending.commit(charge('a'), 'credits', at)).resolves.toBe('charged');
    table.resend(false);
    await expect(table.store.commit(charge('a'), 'credits', at)).resolves.toBe('already_charged');
    expect((await table.accounts.get('acct_t'))!.credits_micros).toBe(45_000);
    expect(await table.store.chargesOf('acct_t', 'job_t')).toHaveLength(1);
  });
});
