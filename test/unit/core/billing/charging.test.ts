import { type Account, newAccount, usableAllowanceMicros } from '../../../../functions/core/accounts/account';
import type { AccountRepository } from '../../../../functions/core/accounts/ports';
import { type Bucket, Billing, type Charge, type ChargeStore, type CommitOutcome, type LedgerEntry, MAX_BATCH, afterDebit, chargeCompletion, chooseBucket } from '../../../../functions/core/billing/charging';
import { completed, newJob } from '../../../../functions/core/jobs/job';
import { usdToMicros } from '../../../../functions/core/billing/money';
import { ServiceError } from '../../../../functions/core/errors';
import { MemoryAccounts, MemoryChargeStore, MemoryJobs } from '../../../support/memory';

const now = new Date('2026-11-21T12:00:00Z');
const cent = usdToMicros(0.01);

function account(overrides: Partial<Account> = {}): Account {
  return { ...newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: 'standard', now }), ...overrides };
}

function subscription(allowanceUsd: number, status: 'active' | 'past_due' | 'canceled' = 'active', periodEnd = '2026-12-01T00:00:00.000Z') {
  return {
    subscription_id: 'sub_1', customer_id: null, status, name: 'Starter', price_id: 'price_s', price_micros: usdToMicros(20), monthly_pdfs: 2000,
    allowance_micros: usdToMicros(allowanceUsd), period_start: '2026-11-01T00:00:00.000Z', period_end: periodEnd, cancel_at_period_end: false, scheduled_change: null,
  };
}

describe('chooseBucket (charging rule 1)', () => {
  it('takes the subscription allowance first, then free credits, then one-off credits', () => {
    const a = account({ subscription: subscription(1), free_credits_micros: cent, credits_micros: cent });
    expect(chooseBucket(a, cent, now)).toBe('subscription');
    expect(chooseBucket({ ...a, subscription: subscription(0) }, cent, now)).toBe('free_credits');
    expect(chooseBucket({ ...a, subscription: null, free_credits_micros: 0 }, cent, now)).toBe('credits');
    expect(chooseBucket(account(), cent, now)).toBeNull();
  });

  it('skips an allowance whose subscription is not active or whose period ended', () => {
    const credits = { credits_micros: cent };
    expect(chooseBucket(account({ ...credits, subscription: subscription(5, 'past_due') }), cent, now)).toBe('credits');
    expect(chooseBucket(account({ ...credits, subscription: subscription(5, 'canceled') }), cent, now)).toBe('credits');
    expect(chooseBucket(account({ ...credits, subscription: subscription(5, 'active', '2026-11-21T11:59:59.000Z') }), cent, now)).toBe('credits');
  });

  it('never splits a charge across buckets', () => {
    const a = account({ free_credits_micros: cent / 2, credits_micros: cent / 2 });
    expect(chooseBucket(a, cent, now)).toBeNull();
  });
});

/** An in-memory store with the same contract as the DynamoDB one, to test the retry loop. */
class MemoryStore implements ChargeStore {
  ledger = new Set<string>();
  constructor(private readonly accounts: Map<string, Account>) {}
  async commit(charge: Charge, bucket: Bucket, at: Date): Promise<CommitOutcome> {
    const key = `${charge.job_id}#${charge.unit}`;
    if (this.ledger.has(key)) return 'already_charged';
    const a = this.accounts.get(charge.account_id)!;
    if (chooseBucket(a, charge.amount_micros, at) !== bucket) return 'bucket_changed';
    this.ledger.add(key);
    const next = { ...a, total_pdf_count: a.total_pdf_count + charge.pdf_count, total_amount_micros: a.total_amount_micros + charge.amount_micros };
    if (bucket === 'subscription') next.subscription = { ...a.subscription!, allowance_micros: a.subscription!.allowance_micros - charge.amount_micros };
    if (bucket === 'free_credits') next.free_credits_micros -= charge.amount_micros;
    if (bucket === 'credits') next.credits_micros -= charge.amount_micros;
    this.accounts.set(a.account_id, next);
    return 'charged';
  }
  batches: number[] = [];
  /** Before a batch is checked: lets a test change the account under it (a concurrent charge). */
  beforeBatch: () => void = () => undefined;
  async commitMany(charges: { charge: Charge; bucket: Bucket }[], at: Date): Promise<'charged' | 'conflict'> {
    this.beforeBatch();
    let a = this.accounts.get(charges[0].charge.account_id)!;
    for (const { charge, bucket } of charges) {
      const covers = bucket === 'subscription' ? usableAllowanceMicros(a, at) : bucket === 'free_credits' ? a.free_credits_micros : a.credits_micros;
      if (this.ledger.has(`${charge.job_id}#${charge.unit}`) || covers < charge.amount_micros) return 'conflict';
      a = { ...afterDebit(a, bucket, charge.amount_micros), total_pdf_count: a.total_pdf_count + charge.pdf_count, total_amount_micros: a.total_amount_micros + charge.amount_micros };
    }
    for (const { charge } of charges) this.ledger.add(`${charge.job_id}#${charge.unit}`);
    this.accounts.set(a.account_id, a);
    this.batches.push(charges.length);
    return 'charged';
  }
  // Refunds are tested on the shared memory world (test/support/memory.ts) and against dynalite.
  async chargesOf(accountId: string, jobId: string): Promise<LedgerEntry[]> {
    return [...this.ledger]
      .filter((key) => key.startsWith(`${jobId}#`))
      .map((key) => ({ account_id: accountId, job_id: jobId, unit: key.slice(jobId.length + 1), operation: 'pdf', amount_micros: cent, pdf_count: 1, bucket: 'credits', created_at: now.toISOString() }));
  }
  async refund() {
    return 'already_refunded' as const;
  }
}

function setup(a: Account) {
  const accounts = new Map([[a.account_id, a]]);
  const repo: AccountRepository = { get: async (id) => accounts.get(id) ?? null, create: async () => true };
  const store = new MemoryStore(accounts);
  return { accounts, store, billing: new Billing(repo, store, { now: () => now }) };
}

describe('Billing.charge', () => {
  const charge = (job: string): Charge => ({ account_id: 'a1', job_id: job, unit: 'pdf', operation: 'pdf', amount_micros: cent, pdf_count: 1 });

  it('charges once per (job, unit) and moves the usage counters', async () => {
    const { billing, accounts } = setup(account({ credits_micros: usdToMicros(1) }));
    expect((await billing.charge(charge('j1'))).outcome).toBe('charged');
    expect((await billing.charge(charge('j1'))).outcome).toBe('already_charged');
    const a = accounts.get('a1')!;
    expect(a.credits_micros).toBe(usdToMicros(0.99));
    expect(a.total_pdf_count).toBe(1);
    expect(a.total_amount_micros).toBe(cent);
  });

  it('falls through to the next bucket when the first runs dry', async () => {
    const { billing, accounts } = setup(account({ free_credits_micros: cent, credits_micros: cent }));
    await billing.charge(charge('j1'));
    await billing.charge(charge('j2'));
    expect(accounts.get('a1')).toMatchObject({ free_credits_micros: 0, credits_micros: 0 });
  });

  it('refuses with the spec details when nothing covers the charge', async () => {
    const { billing } = setup(account({ credits_micros: 5000, subscription: subscription(0) }));
    const err = (await billing.charge(charge('j1')).catch((e) => e)) as ServiceError;
    expect(err.code).toBe('INSUFFICIENT_CREDITS');
    expect(err.details).toMatchObject({ current_balance: 0.005, required_amount: 0.01, subscription_credits_remaining: 0, action_required: 'purchase_credits' });
  });

  it('refuses with the one-off balance as current_balance and only a usable allowance as subscription_credits_remaining', async () => {
    // Free credits are a bucket of their own (not the one-off balance), and an allowance whose period ended is not usable.
    const { billing } = setup(account({ credits_micros: 3000, free_credits_micros: 4000, subscription: subscription(5, 'active', '2026-11-21T11:00:00.000Z') }));
    const err = (await billing.charge(charge('j1')).catch((e) => e)) as ServiceError;
    expect(err.details).toEqual({ current_balance: 0.003, required_amount: 0.01, subscription_credits_remaining: 0, free_credits_remaining: 0.004, action_required: 'purchase_credits' });
  });

  it('re-reads a caller-read account that covers nothing before refusing: credits bought since are charged', async () => {
    const { billing, accounts } = setup(account({ credits_micros: cent }));
    const stale = account({ credits_micros: 0 });
    expect(await billing.charge(charge('j1'), {}, stale)).toEqual({ outcome: 'charged', bucket: 'credits' });
    expect(accounts.get('a1')!.credits_micros).toBe(0);
  });

  it('refuses a negative or fractional amount before writing anything (a charge never credits a balance)', async () => {
    const { billing, accounts } = setup(account({ credits_micros: cent }));
    await expect(billing.charge({ ...charge('j1'), amount_micros: -cent })).rejects.toThrow(TypeError);
    await expect(billing.charge({ ...charge('j2'), amount_micros: 0.5 })).rejects.toThrow(TypeError);
    expect(accounts.get('a1')!.credits_micros).toBe(cent);
  });
});

describe('Billing.chargeInOrder', () => {
  const files = (n: number, from = 0): Charge[] =>
    Array.from({ length: n }, (_, i) => ({ account_id: 'a1', job_id: 'bulk1', unit: `file#${from + i}`, operation: 'pdf' as const, amount_micros: cent, pdf_count: 1 }));

  it('charges in batches with the same buckets as one by one, across bucket boundaries', async () => {
    const start = account({ subscription: subscription(0.3), free_credits_micros: usdToMicros(0.25), credits_micros: usdToMicros(1) });
    const batched = setup(start);
    const single = setup(start);
    expect(await batched.billing.chargeInOrder(files(120), start)).toBe(120);
    for (const c of files(120)) await single.billing.charge(c);
    expect(batched.accounts.get('a1')).toEqual(single.accounts.get('a1'));
    expect(batched.accounts.get('a1')).toMatchObject({ free_credits_micros: 0, credits_micros: usdToMicros(0.35), total_pdf_count: 120, total_amount_micros: usdToMicros(1.2) });
    expect(batched.accounts.get('a1')!.subscription!.allowance_micros).toBe(0);
    expect(batched.store.batches).toEqual([MAX_BATCH, MAX_BATCH, 20]);
    expect(batched.store.ledger.size).toBe(120);
  });

  it('stops at the first charge nothing covers and says how many were done', async () => {
    const { billing, accounts, store } = setup(account({ credits_micros: usdToMicros(0.075) }));
    expect(await billing.chargeInOrder(files(10))).toBe(7);
    expect(accounts.get('a1')!.credits_micros).toBe(usdToMicros(0.005));
    expect(store.ledger.size).toBe(7);
    expect(await billing.chargeInOrder([])).toBe(0);
  });

  it('charges nothing twice when some units were charged before (a retried step)', async () => {
    const { billing, accounts } = setup(account({ credits_micros: usdToMicros(1) }));
    await billing.charge(files(1, 3)[0]);
    expect(await billing.chargeInOrder(files(8))).toBe(8);
    expect(accounts.get('a1')).toMatchObject({ credits_micros: usdToMicros(0.92), total_pdf_count: 8 });
  });

  it('counts units charged before as done also when they took the last of the balance (a Finish run twice at once)', async () => {
    const { billing, accounts } = setup(account({ credits_micros: usdToMicros(0.03) }));
    expect(await billing.chargeInOrder(files(3))).toBe(3);
    expect(await billing.chargeInOrder(files(4))).toBe(3);
    expect(await billing.charge(files(1)[0])).toEqual({ outcome: 'already_charged', bucket: null });
    expect(accounts.get('a1')).toMatchObject({ credits_micros: 0, total_pdf_count: 3 });
  });

  it('falls back to one at a time when a concurrent charge changed the balance under a batch', async () => {
    const { billing, accounts, store } = setup(account({ credits_micros: usdToMicros(0.05) }));
    let once = true;
    store.beforeBatch = () => {
      if (!once) return;
      once = false;
      const a = accounts.get('a1')!;
      accounts.set('a1', { ...a, credits_micros: a.credits_micros - usdToMicros(0.02) }); // spent elsewhere meanwhile
    };
    expect(await billing.chargeInOrder(files(5), account({ credits_micros: usdToMicros(0.05) }))).toBe(3);
    expect(accounts.get('a1')!.credits_micros).toBe(0);
    expect(store.batches).toEqual([]);
  });

  it('stops quietly only when nothing covers a charge: another refusal (the account is gone) is thrown', async () => {
    const { billing, accounts } = setup(account({ credits_micros: usdToMicros(1) }));
    accounts.delete('a1');
    await expect(billing.chargeInOrder(files(3))).rejects.toMatchObject({ code: 'ACCOUNT_NOT_FOUND' });
  });

  it('refuses charges of several accounts', async () => {
    const { billing } = setup(account({ credits_micros: usdToMicros(1) }));
    await expect(billing.chargeInOrder([...files(1), { ...files(1)[0], account_id: 'a2' }])).rejects.toThrow(TypeError);
  });
});

describe('chargeCompletion', () => {
  const done = completed(newJob({ job_id: 'job_1', account_id: 'a1', job_type: 'quick', status: 'processing', now }), now, { pages: 1, output: null });
  const unit: Charge = { account_id: 'a1', job_id: 'job_1', unit: 'pdf', operation: 'pdf', amount_micros: cent, pdf_count: 1 };
  const run = async (failure: Error, stored: 'completed' | 'processing' | 'unreadable' | 'unreadable once') => {
    const undone: unknown[] = [];
    const reads: string[] = [];
    const deps = {
      billing: { charge: async () => Promise.reject(failure) },
      jobs: {
        get: async (id: string) => {
          reads.push(id);
          if (stored === 'unreadable' || (stored === 'unreadable once' && reads.length === 1)) throw new Error('table unavailable');
          return { ...done, status: stored === 'unreadable once' ? 'completed' : stored };
        },
      },
    };
    const outcome = await chargeCompletion(deps, unit, { job: done }, account(), async (err) => void undone.push(err)).then(
      () => 'resolved',
      (err) => err,
    );
    return { outcome, undone, reads };
  };

  it('answers a write whose reply was lost but which completed the job as done, undoing nothing', async () => {
    expect(await run(new Error('socket hang up'), 'completed')).toEqual({ outcome: 'resolved', undone: [], reads: ['job_1'] });
  });

  it('undoes and rethrows a write that did not commit; a refusal without reading the job', async () => {
    const lost = new Error('socket hang up');
    expect(await run(lost, 'processing')).toEqual({ outcome: lost, undone: [lost], reads: ['job_1'] });
    const refusal = new ServiceError('INSUFFICIENT_CREDITS', 'no credits');
    expect(await run(refusal, 'completed')).toEqual({ outcome: refusal, undone: [refusal], reads: [] });
  });

  it('leaves everything as the write left it when the job cannot be read now (three tries)', async () => {
    const lost = new Error('socket hang up');
    expect(await run(lost, 'unreadable')).toEqual({ outcome: lost, undone: [], reads: ['job_1', 'job_1', 'job_1'] });
  });

  it('reads the job again when the first read-back fails too (a double fault): a completed job is done', async () => {
    expect(await run(new Error('socket hang up'), 'unreadable once')).toEqual({ outcome: 'resolved', undone: [], reads: ['job_1', 'job_1'] });
  });
});

describe('Billing.chargesSince and refundJob (on the shared memory store, which keeps refunds)', () => {
  function world() {
    const accounts = new MemoryAccounts();
    accounts.accounts.set('a1', account({ credits_micros: usdToMicros(1) }));
    const billing = new Billing(accounts, new MemoryChargeStore(accounts, new MemoryJobs()), { now: () => now });
    return { accounts, billing };
  }
  const unit = (u: string, amount = cent): Charge => ({ account_id: 'a1', job_id: 'bulk1', unit: u, operation: 'pdf', amount_micros: amount, pdf_count: 1 });

  // commitWholeJob subtracts these from a running job's commitment: a charge missed here is counted twice (a wrong 403),
  // a refunded one counted here lets the next job commit money the running job still needs.
  it('counts charges made at or after the time (one made in the same millisecond included), refunded ones left out', async () => {
    const w = world();
    await w.billing.charge(unit('file#0'));
    const since = now.toISOString();
    await w.billing.charge(unit('file#1'));
    expect(await w.billing.chargesSince('a1', 'bulk1', since)).toBe(2);
    expect(await w.billing.chargesSince('a1', 'bulk1', new Date(now.getTime() + 1).toISOString())).toBe(0);
    await w.billing.refundJob('a1', 'bulk1');
    expect(await w.billing.chargesSince('a1', 'bulk1', since)).toBe(0);
  });

  it('refundJob answers the total it gave back, once', async () => {
    const w = world();
    await w.billing.charge(unit('file#0', 3 * cent));
    await w.billing.charge(unit('file#1', 2 * cent));
    expect(await w.billing.refundJob('a1', 'bulk1')).toBe(5 * cent);
    expect(await w.billing.refundJob('a1', 'bulk1')).toBe(0);
    expect(w.accounts.accounts.get('a1')!.credits_micros).toBe(usdToMicros(1));
  });
});
