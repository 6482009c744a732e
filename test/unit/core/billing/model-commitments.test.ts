/**
 * Model-based test of whole-job commitments (rule 3 for jobs that charge after they run: bulk jobs and background
 * merge/split jobs). Random interleavings, one by one and at once (Promise.all), of: commits of new jobs (recorded
 * before the check as a bulk job is, or after it as a merge/split submission is), charges of running jobs' units
 * (partial progress), job ends with their release (also repeated, also lost so that the next check drops it, also of
 * a job that never committed), job refunds, credit-pack purchases and refunds (through SubscriptionService), and
 * quick-job charges that ignore commitments. The REAL commitWholeJob, Billing, DynamoCommitmentStore and job records
 * run on dynalite; after every step the stored balances, ledger and commitments are checked against a reference model.
 *
 * What the README promises, checked exactly: `commitWholeJob` passes only if the balance covers the job on top of what
 * the account's other running jobs will charge, simulated in bucket order, where a running job counts only what it has
 * not charged yet (units charged since its commitment and not refunded are already out of the balance). So an accepted
 * commit had, at the moment it was accepted, every kept commitment's uncharged part plus the new job fitting in the
 * buckets in some order of the jobs; and a commit that fits in commitment order must pass. A released (or ended and
 * dropped) job's commitment is gone from the account.
 *
 * Explore: COMMIT_MODEL_RUNS=500 COMMIT_MODEL_SEED=3 npx jest test/unit/core/billing/model-commitments.test.ts
 */
import fc from 'fast-check';
import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { DynamoBillingStateStore } from '../../../../functions/adapters/dynamodb/billing-state';
import { DynamoChargeStore } from '../../../../functions/adapters/dynamodb/charges';
import type { Dynamo } from '../../../../functions/adapters/dynamodb/client';
import { DynamoCommitmentStore } from '../../../../functions/adapters/dynamodb/commitments';
import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { DynamoPlanRepository } from '../../../../functions/adapters/dynamodb/plans';
import { newAccount } from '../../../../functions/core/accounts/account';
import { type Bucket, Billing } from '../../../../functions/core/billing/charging';
import { commitWholeJob, jobLiveness } from '../../../../functions/core/billing/commitments';
import { creditPacks } from '../../../../functions/core/billing/packs';
import { planCatalogue } from '../../../../functions/core/billing/plans';
import { ServiceError } from '../../../../functions/core/errors';
import { newJob } from '../../../../functions/core/jobs/job';
import type { CheckoutSession, PaymentEvent, PaymentProvider } from '../../../../functions/core/subscriptions/ports';
import { SubscriptionService } from '../../../../functions/core/subscriptions/service';
import { withLocalTable } from '../../../support/local-table';
import { permutations, runStats } from '../../../support/model-runs';

const RUNS = Number(process.env.COMMIT_MODEL_RUNS ?? 30);
const SEED = Number(process.env.COMMIT_MODEL_SEED ?? 20261122);

// ── the reference model ───────────────────────────────────────────────────────────────────────────────

interface Row {
  amount: number;
  bucket: Bucket;
  created_at: string;
  refunded: boolean;
}

interface MJob {
  id: string;
  /** new: not submitted; running: recorded and not ended; unrecorded: committed, record not written yet; ended. */
  status: 'running' | 'unrecorded' | 'ended' | 'refused';
  /** Units charged so far (file#0 … file#next-1 asked for). */
  next: number;
  charges: number;
  amount: number;
}

interface Commitment {
  charges: number;
  amount: number;
  at: string;
  /** Commitment order, for the bucket-order simulation. */
  seq: number;
}

interface Purchase {
  payment_ref: string;
  charge_ref: string;
  amount: number;
  paid_minor: number;
  refunded_minor: number;
  revoked: number;
  recovered: number;
}

interface Model {
  run: string;
  account: string;
  now: Date;
  credits: number;
  free: number;
  count: number;
  total: number;
  ledger: Map<string, Row>;
  jobs: MJob[];
  commitments: Map<string, Commitment>;
  seq: number;
  purchases: Purchase[];
  /** Stripe's side: what each charge has refunded. */
  refunded: Map<string, number>;
  sessions: Map<string, { session: CheckoutSession; items: { price_id: string; quantity: number }[] }>;
  n: number;
  /** Ids of jobs that charged (for reading the ledger back). */
  charged: Set<string>;
}

interface Real {
  billing: Billing;
  subs: SubscriptionService;
  accounts: DynamoAccountRepository;
  charges: DynamoChargeStore;
  commitments: DynamoCommitmentStore;
  jobs: DynamoJobRepository;
  clock: { now: () => Date };
}

const rowKey = (job: string, unit: string) => `${job}|${unit}`;

function chooseBucket(b: { free: number; credits: number }, amount: number): 'free_credits' | 'credits' | null {
  if (b.free >= amount) return 'free_credits';
  if (b.credits >= amount) return 'credits';
  return null;
}

function modelCharge(m: Model, job: string, unit: string, amount: number): 'charged' | 'already_charged' | 'insufficient' {
  if (m.ledger.has(rowKey(job, unit))) return 'already_charged';
  const bucket = chooseBucket(m, amount);
  if (!bucket) return 'insufficient';
  if (bucket === 'free_credits') m.free -= amount;
  else m.credits -= amount;
  m.ledger.set(rowKey(job, unit), { amount, bucket, created_at: m.now.toISOString(), refunded: false });
  m.count += 1;
  m.total += amount;
  return 'charged';
}

function modelRefund(m: Model, job: string): number {
  let back = 0;
  for (const [key, row] of m.ledger) {
    if (!key.startsWith(`${job}|`) || row.refunded) continue;
    if (row.bucket === 'free_credits') m.free += row.amount;
    else m.credits += row.amount;
    row.refunded = true;
    m.count -= 1;
    m.total -= row.amount;
    back += row.amount;
  }
  return back;
}

/** What a committed job has not charged yet: its commitment less its standing charges made since it was recorded. */
function uncharged(m: Model, jobId: string, c: Commitment): number {
  let taken = 0;
  for (const [key, row] of m.ledger) if (key.startsWith(`${jobId}|`) && !row.refunded && row.created_at >= c.at) taken++;
  return Math.max(0, c.charges - taken);
}

/** Whether every pledge (charges × amount) fits in the buckets, taken in bucket order in the given order. */
function fits(b: { free: number; credits: number }, pledges: { charges: number; amount: number }[]): boolean {
  const left = { free: b.free, credits: b.credits };
  for (const p of pledges) {
    for (let i = 0; i < p.charges; i++) {
      const bucket = chooseBucket(left, p.amount);
      if (!bucket) return false;
      if (bucket === 'free_credits') left.free -= p.amount;
      else left.credits -= p.amount;
    }
  }
  return true;
}

/** A job whose commitment the next check keeps: running, or committed and not recorded yet (within the grace). */
const kept = (m: Model, jobId: string) => ['running', 'unrecorded'].includes(m.jobs.find((j) => j.id === jobId)!.status);

/**
 * The model's answer to a commit: `must` when the new job fits on top of the kept commitments' uncharged parts in
 * commitment order; `may` when it fits in some order (the README promises the simulation, not an order).
 */
function modelCommit(m: Model, job: MJob): { must: boolean; may: boolean } {
  const others = [...m.commitments].filter(([id]) => id !== job.id && kept(m, id)).sort(([, a], [, b]) => a.seq - b.seq);
  const pledges = others.map(([id, c]) => ({ charges: uncharged(m, id, c), amount: c.amount })).filter((p) => p.charges > 0);
  const mine = { charges: job.charges, amount: job.amount };
  const must = fits(m, [...pledges, mine]);
  // Jobs of one amount are interchangeable: try the orders of the distinct amounts only.
  const byAmount = new Map<number, number>();
  for (const p of pledges) byAmount.set(p.amount, (byAmount.get(p.amount) ?? 0) + p.charges);
  const groups = [...byAmount].map(([amount, charges]) => ({ amount, charges }));
  const may = must || permutations([...groups, mine]).some((order) => fits(m, order));
  return { must, may };
}

/** The stored commitments after an accepted commit: the kept ones and the new one. */
function applyCommit(m: Model, job: MJob): void {
  for (const id of [...m.commitments.keys()]) if (!kept(m, id) && id !== job.id) m.commitments.delete(id);
  m.commitments.set(job.id, { charges: job.charges, amount: job.amount, at: m.now.toISOString(), seq: m.seq++ });
}

// ── checking the stored state ─────────────────────────────────────────────────────────────────────────

const isMicros = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

async function stored(m: Model, r: Real) {
  const a = (await r.accounts.get(m.account))!;
  const ledger: Record<string, { amount: number; bucket: Bucket; refunded: boolean }> = {};
  for (const job of [...m.charged].sort()) {
    for (const e of (await r.charges.chargesOf(m.account, job)).sort((x, y) => (x.unit < y.unit ? -1 : 1))) ledger[rowKey(job, e.unit)] = { amount: e.amount_micros, bucket: e.bucket, refunded: !!e.refunded_at };
  }
  const commitments = Object.fromEntries(Object.entries(a.commitments ?? {}).sort(([x], [y]) => (x < y ? -1 : 1)).map(([id, c]) => [id, { charges: c.charges, amount: c.amount_micros }]));
  return { a, shown: { credits: a.credits_micros, free: a.free_credits_micros, count: a.total_pdf_count, total: a.total_amount_micros, ledger, commitments } };
}

function expected(m: Model) {
  const ledger: Record<string, { amount: number; bucket: Bucket; refunded: boolean }> = {};
  for (const [k, row] of [...m.ledger].sort(([x], [y]) => (x < y ? -1 : 1))) ledger[k] = { amount: row.amount, bucket: row.bucket, refunded: row.refunded };
  const commitments = Object.fromEntries([...m.commitments].sort(([x], [y]) => (x < y ? -1 : 1)).map(([id, c]) => [id, { charges: c.charges, amount: c.amount }]));
  return { credits: m.credits, free: m.free, count: m.count, total: m.total, ledger, commitments };
}

/** Sorts the ledger keys the way `stored` reads them (job, then unit). */
const canonical = (x: ReturnType<typeof expected>) => JSON.stringify({ ...x, ledger: Object.fromEntries(Object.entries(x.ledger).sort(([a], [b]) => (a < b ? -1 : 1))) });

async function verify(m: Model, r: Real, step: string): Promise<void> {
  const { a, shown } = await stored(m, r);
  for (const [name, v] of Object.entries({ credits: a.credits_micros, free: a.free_credits_micros, count: a.total_pdf_count, total: a.total_amount_micros })) {
    if (!isMicros(v)) throw new Error(`after ${step}: ${name} is ${v}, not a non-negative integer`);
  }
  for (const [id, c] of Object.entries(a.commitments ?? {})) {
    if (!isMicros(c.amount_micros) || !isMicros(c.charges)) throw new Error(`after ${step}: commitment of ${id} is ${JSON.stringify(c)}`);
    const job = m.jobs.find((j) => j.id === id);
    if (!job || job.status === 'refused') throw new Error(`after ${step}: a commitment of ${id}, which never committed`);
  }
  if (canonical(shown) !== canonical(expected(m))) throw new Error(`after ${step}: stored state differs from the model\nstored ${canonical(shown)}\nmodel  ${canonical(expected(m))}`);
}

// ── the operations (one by one, or several at once) ───────────────────────────────────────────────────

type Op =
  | { kind: 'commit'; charges: number; amount: number; recordFirst: boolean }
  | { kind: 'progress'; pick: number; units: number }
  | { kind: 'end'; pick: number; how: 'complete' | 'fail_refund' | 'release_twice' | 'release_lost' }
  | { kind: 'release_stranger' }
  | { kind: 'refund'; pick: number }
  | { kind: 'quick'; amount: number }
  | { kind: 'buy'; usd: number }
  | { kind: 'reverse'; pick: number; share: number };

const show = (o: Op) => JSON.stringify(o);

/** A resolved operation: the job it acts on chosen, ready to run on the real services and on a copy of the model. */
interface Step {
  op: Op;
  job?: MJob;
  purchase?: Purchase;
  event?: PaymentEvent;
  quickId?: string;
}

const running = (m: Model) => m.jobs.filter((j) => j.status === 'running' || j.status === 'unrecorded');

function resolve(m: Model, op: Op, taken: Set<string>): Step | null {
  const free = (js: MJob[]) => js.filter((j) => !taken.has(j.id));
  switch (op.kind) {
    case 'commit': {
      const job: MJob = { id: `job_${m.run}_${m.n++}`, status: 'refused', next: 0, charges: op.charges, amount: op.amount };
      return { op, job };
    }
    case 'progress':
    case 'end':
    case 'refund': {
      const js = free(op.kind === 'refund' ? m.jobs.filter((j) => j.status !== 'refused') : running(m).filter((j) => op.kind !== 'progress' || j.next < j.charges));
      if (js.length === 0) return null;
      const job = js[op.pick % js.length];
      taken.add(job.id);
      return { op, job };
    }
    case 'release_stranger':
      return { op, job: { id: `never_${m.run}_${m.n++}`, status: 'refused', next: 0, charges: 0, amount: 0 } };
    case 'quick':
      return { op, quickId: `quick_${m.run}_${m.n++}` };
    case 'buy': {
      const k = m.n++;
      const session: CheckoutSession = { id: `cs_${m.run}_${k}`, mode: 'payment', payment_status: 'paid', account_ref: m.account, customer_id: `cus_${m.run}`, subscription_id: null, payment_ref: `pi_${m.run}_${k}`, amount_paid_minor: op.usd * 100 };
      m.sessions.set(session.id, { session, items: [{ price_id: `price_pack_${op.usd}_usd`, quantity: 1 }] });
      const purchase: Purchase = { payment_ref: session.payment_ref!, charge_ref: `ch_${m.run}_${k}`, amount: op.usd * 1_000_000, paid_minor: op.usd * 100, refunded_minor: 0, revoked: 0, recovered: 0 };
      const event = { id: `evt_${m.run}_${k}`, type: 'checkout.session.completed', created: m.now.toISOString(), kind: 'checkout_completed', session } as PaymentEvent;
      return { op, purchase, event };
    }
    case 'reverse': {
      const ps = m.purchases.filter((p) => !taken.has(p.payment_ref) && p.refunded_minor < p.paid_minor);
      if (ps.length === 0) return null;
      const p = ps[op.pick % ps.length];
      taken.add(p.payment_ref);
      // Stripe's side moves now; the event is a view of it.
      const refunded = Math.min(p.paid_minor, p.refunded_minor + Math.max(1, Math.floor(p.paid_minor * op.share)));
      m.refunded.set(p.charge_ref, refunded);
      const event = {
        id: `evt_${m.run}_${m.n++}`,
        type: 'charge.refunded',
        created: m.now.toISOString(),
        kind: 'payment_reversed',
        reversal: { kind: 'refund', payment_ref: p.payment_ref, reference: p.charge_ref, payment_amount_minor: p.paid_minor },
      } as PaymentEvent;
      return { op, purchase: p, event };
    }
  }
}

/** What the real services answer for a step (compared with the model's answer). */
type Outcome = string | number | null;

const unitCharge = (m: Model, job: MJob, i: number) => ({ account_id: m.account, job_id: job.id, unit: `file#${i}`, operation: 'pdf' as const, amount_micros: job.amount, pdf_count: 1 });

async function runReal(m: Model, r: Real, st: Step): Promise<Outcome> {
  const { op, job } = st;
  const record = (status: 'processing' | 'completed' | 'failed') =>
    r.jobs.put({ ...newJob({ job_id: job!.id, account_id: m.account, job_type: 'bulk', status: 'queued', now: m.now }), status });
  switch (op.kind) {
    case 'commit': {
      if (op.recordFirst) await record('processing');
      try {
        await commitWholeJob({ accounts: r.accounts, commitments: r.commitments, clock: r.clock, billing: r.billing }, { account_id: m.account, job_id: job!.id, charges: op.charges, amount_micros: op.amount }, jobLiveness(r.jobs));
      } catch (err) {
        if (!(err instanceof ServiceError) || err.code !== 'INSUFFICIENT_CREDITS') throw err;
        if (op.recordFirst) await record('failed');
        return 'refused';
      }
      if (!op.recordFirst) await record('processing');
      return 'committed';
    }
    case 'progress': {
      const charges = Array.from({ length: Math.min(op.units, job!.charges - job!.next) }, (_, i) => unitCharge(m, job!, job!.next + i));
      return r.billing.chargeInOrder(charges);
    }
    case 'end': {
      if (op.how === 'fail_refund') await r.billing.refundJob(m.account, job!.id);
      await record(op.how === 'fail_refund' ? 'failed' : 'completed');
      if (op.how === 'release_lost') return null;
      await Promise.all((op.how === 'release_twice' ? [0, 1] : [0]).map(() => r.commitments.release(m.account, job!.id)));
      return null;
    }
    case 'release_stranger':
      await r.commitments.release(m.account, job!.id);
      return null;
    case 'refund':
      return r.billing.refundJob(m.account, job!.id);
    case 'quick':
      try {
        return (await r.billing.charge({ account_id: m.account, job_id: st.quickId!, unit: 'pdf', operation: 'pdf', amount_micros: op.amount, pdf_count: 1 })).outcome;
      } catch (err) {
        if (err instanceof ServiceError && err.code === 'INSUFFICIENT_CREDITS') return 'insufficient';
        throw err;
      }
    case 'buy':
    case 'reverse': {
      const res = await r.subs.handleEvent(st.event!);
      if (res.result === 'ignored' && ['malformed_event', 'unknown_price', 'event_type_not_handled'].includes(res.reason ?? '')) throw new Error(`${st.event!.type} ignored: ${res.reason}`);
      return null;
    }
  }
}

/**
 * Applies a step to the model given what the real services answered; returns false when the answer is not one the
 * model allows in this state (for a commit: refused while it must pass, or passed while no order of the jobs fits).
 */
function runModel(m: Model, st: Step, got: Outcome): boolean {
  const { op } = st;
  const job = op.kind === 'commit' ? { ...st.job! } : st.job && (m.jobs.find((j) => j.id === st.job!.id) ?? st.job);
  switch (op.kind) {
    case 'commit': {
      const { must, may } = modelCommit(m, job!);
      tally(`commit ${got} (must ${must}, may ${may}, others ${m.commitments.size})`);
      if (got === 'refused' ? must : !may) return false;
      m.jobs.push(job!);
      if (got === 'committed') {
        job!.status = 'unrecorded';
        applyCommit(m, job!);
        job!.status = 'running';
      }
      return true;
    }
    case 'progress': {
      let done = 0;
      for (let i = job!.next; i < Math.min(job!.charges, job!.next + op.units); i++) {
        if (modelCharge(m, job!.id, `file#${i}`, job!.amount) === 'insufficient') break;
        done++;
      }
      job!.next += done;
      return got === done;
    }
    case 'end':
      job!.status = 'ended';
      if (op.how === 'fail_refund') modelRefund(m, job!.id);
      if (op.how !== 'release_lost') m.commitments.delete(job!.id);
      return true;
    case 'release_stranger':
      return true;
    case 'refund':
      return got === modelRefund(m, job!.id);
    case 'quick':
      return got === modelCharge(m, st.quickId!, 'pdf', op.amount);
    case 'buy':
      m.credits += st.purchase!.amount;
      m.purchases.push({ ...st.purchase! });
      return true;
    case 'reverse': {
      const p = m.purchases.find((x) => x.payment_ref === st.purchase!.payment_ref)!;
      const refunded = m.refunded.get(p.charge_ref)!;
      if (refunded === p.refunded_minor) return true;
      const revoked = refunded >= p.paid_minor ? p.amount : Math.floor((p.amount * refunded) / p.paid_minor);
      const debit = Math.min(revoked - p.revoked, Math.max(0, m.credits));
      m.credits -= debit;
      Object.assign(p, { refunded_minor: refunded, revoked, recovered: p.recovered + debit });
      return true;
    }
  }
}

const copy = (m: Model): Model => ({ ...structuredClone({ ...m, now: undefined }), now: m.now }) as Model;

type Cmd = fc.AsyncCommand<Model, Real>;

const { tally, print: printStats } = runStats('COMMIT_MODEL_STATS');

/**
 * Steps at once: whatever order the writes took, the answers and the stored state must be those of some order of
 * the same steps one by one (and each commit's answer one the model allows at its place in that order).
 */
function stepsCmd(ops: Op[]): Cmd {
  const name = ops.length === 1 ? show(ops[0]) : `at once(${ops.map(show).join(', ')})`;
  return {
    check: () => true,
    toString: () => name,
    run: async (m, r) => {
      m.now = new Date(m.now.getTime() + 1000);
      const taken = new Set<string>();
      const steps = ops.map((o) => resolve(m, o, taken)).filter((s): s is Step => s !== null);
      const got = await Promise.all(steps.map((st) => runReal(m, r, st)));
      for (const st of steps) m.charged.add(st.quickId ?? st.job?.id ?? '');
      const { shown } = await stored(m, r);
      const want = canonical(shown);
      for (const order of permutations(steps.map((st, i) => ({ st, i })))) {
        const trial = copy(m);
        if (order.every(({ st, i }) => runModel(trial, st, got[i])) && canonical(expected(trial)) === want) {
          Object.assign(m, trial);
          await verify(m, r, name);
          return;
        }
      }
      throw new Error(`${name}: answers ${JSON.stringify(got)} and the stored state ${want} match no order of the steps one by one (model before: ${canonical(expected(m))})`);
    },
  };
}

const amount = fc.constantFrom(2_500, 10_000, 1_000_000, 7_000_000);
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('commit' as const), charges: fc.integer({ min: 1, max: 12 }), amount, recordFirst: fc.boolean() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('progress' as const), pick: fc.nat(), units: fc.integer({ min: 1, max: 6 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('end' as const), pick: fc.nat(), how: fc.constantFrom('complete' as const, 'fail_refund' as const, 'release_twice' as const, 'release_lost' as const) }), weight: 3 },
  { arbitrary: fc.constant({ kind: 'release_stranger' as const }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('quick' as const), amount }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('buy' as const), usd: fc.constantFrom(10, 100) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat(), share: fc.constantFrom(0.5, 1) }), weight: 1 },
);
const one = op.map((o) => stepsCmd([o]));
const many = fc.array(op, { minLength: 2, maxLength: 3 }).map(stepsCmd);

// ── the Stripe double for packs ───────────────────────────────────────────────────────────────────────

function provider(m: Model): PaymentProvider {
  const unused = async () => {
    throw new Error('not used by the model');
  };
  return {
    checkoutLineItems: async (id) => m.sessions.get(id)!.items,
    checkoutForPayment: async (ref) => [...m.sessions.values()].find((s) => s.session.payment_ref === ref)?.session ?? null,
    refundedTotal: async (ch) => m.refunded.get(ch) ?? 0,
    getSubscription: unused,
    cancelAtPeriodEnd: unused,
    resume: unused,
    changePrice: unused,
    portalUrl: unused,
  };
}

let runs = 0;

async function start(db: Dynamo, free: number, credits: number): Promise<{ model: Model; real: Real }> {
  const run = `c${++runs}`;
  const at = new Date('2026-11-22T10:00:00.000Z');
  const model: Model = {
    run,
    account: `acct_${run}`,
    now: at,
    credits,
    free,
    count: 0,
    total: 0,
    ledger: new Map(),
    jobs: [],
    commitments: new Map(),
    seq: 0,
    purchases: [],
    refunded: new Map(),
    sessions: new Map(),
    n: 0,
    charged: new Set(),
  };
  const clock = { now: () => model.now };
  const accounts = new DynamoAccountRepository(db);
  const charges = new DynamoChargeStore(db);
  const real: Real = {
    accounts,
    charges,
    clock,
    commitments: new DynamoCommitmentStore(db),
    jobs: new DynamoJobRepository(db),
    billing: new Billing(accounts, charges, clock),
    subs: new SubscriptionService({ accounts, plans: new DynamoPlanRepository(db), store: new DynamoBillingStateStore(db), provider: provider(model), packs: creditPacks(), clock }),
  };
  await accounts.create(newAccount({ account_id: model.account, email: `${run}@example.com`, plan_id: 'standard', credits_micros: credits, free_credits_micros: free, now: at }));
  return { model, real };
}

async function replay(db: Dynamo, free: number, credits: number, steps: Op[][]): Promise<void> {
  const { model, real } = await start(db, free, credits);
  for (const ops of steps) await stepsCmd(ops).run(model, real);
}

describe('commitments model: whole-job checks never promise more than the balance held when they were accepted', () => {
  const table = withLocalTable('commitments-model', (db) => ({ db }));

  afterAll(() => {
    printStats();
  });
  beforeAll(async () => {
    await new DynamoPlanRepository(table.db).put(planCatalogue({ starter: 'price_s', business: 'price_b' }));
  });

  it('commits, progress, releases, refunds, packs and quick charges, one by one and at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 25_000, 3_000_000), fc.constantFrom(0, 45_000, 12_000_000), fc.commands([one, one, one, many], { maxCommands: 40, size: '+1' }), async (free, credits, cmds) => {
        const setup = await start(table.db, free, credits);
        await fc.asyncModelRun(() => setup, cmds);
      }),
      { seed: SEED, numRuns: RUNS, verbose: 1 },
    );
  }, 120_000);

  describe('shrunk counterexamples', () => {
    it('a running job whose commitment the balance no longer covers (a pack refund took part of it) leaves nothing for a new job, however small', async () => {
      await replay(table.db, 0, 0, [[{ kind: 'buy', usd: 10 }], [{ kind: 'commit', charges: 1, amount: 7_000_000, recordFirst: false }], [{ kind: 'reverse', pick: 0, share: 0.5 }], [{ kind: 'commit', charges: 1, amount: 2_500, recordFirst: false }]]);
    });
  });
});
