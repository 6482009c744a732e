/**
 * Model-based test of the money logic: random interleavings of job charges (single, batched as a bulk Finish does,
 * retried, concurrent), job refunds, credit-pack checkouts, refunds and lost disputes of them, and subscription
 * events (out of order, duplicated, late), with time moving across period ends. The REAL services (Billing,
 * SubscriptionService) run over the real DynamoDB adapters on dynalite with the transaction emulator; only Stripe is
 * a double (an in-memory world whose events are delivered in any order). After every step the stored account, its
 * ledger and counters are checked against a simple reference model of the buckets, and against the ledger itself.
 *
 * Explore locally with more runs: BILLING_MODEL_RUNS=2000 BILLING_MODEL_SEED=7 npx jest test/unit/core/billing/model.test.ts
 */
import fc from 'fast-check';
import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { DynamoBillingStateStore } from '../../../../functions/adapters/dynamodb/billing-state';
import { DynamoChargeStore } from '../../../../functions/adapters/dynamodb/charges';
import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { DynamoPlanRepository } from '../../../../functions/adapters/dynamodb/plans';
import { type SubscriptionStatus, newAccount } from '../../../../functions/core/accounts/account';
import { type Bucket, Billing, type Charge, type LedgerEntry } from '../../../../functions/core/billing/charging';
import { creditPacks } from '../../../../functions/core/billing/packs';
import { planCatalogue } from '../../../../functions/core/billing/plans';
import { ServiceError } from '../../../../functions/core/errors';
import { newJob } from '../../../../functions/core/jobs/job';
import type { CheckoutSession, PaymentEvent, PaymentProvider, ProviderSubscription } from '../../../../functions/core/subscriptions/ports';
import { SubscriptionService } from '../../../../functions/core/subscriptions/service';
import { withLocalTable } from '../../../support/local-table';
import { commandsVerifiedBy, eventDeliveryCommands, handleChecked, permutations, replaySteps, runStats } from '../../../support/model-runs';
import type { Dynamo } from '../../../../functions/adapters/dynamodb/client';

const PRICES: Record<string, number> = { price_s: 20_000_000, price_b: 100_000_000 };
const PERIOD_MS = 30 * 86_400_000;
const JOB_POOL = 5;
const RUNS = Number(process.env.BILLING_MODEL_RUNS ?? 100);
const SEED = Number(process.env.BILLING_MODEL_SEED ?? 20261121);

// ── the reference model ───────────────────────────────────────────────────────────────────────────────

interface ModelSub {
  id: string;
  /** The provider's raw status and pause flag, as last applied. */
  provider_status: string;
  pause: boolean;
  status: SubscriptionStatus;
  price: number;
  period_start: string;
  period_end: string;
  allowance: number;
  allowance_period: string | null;
  event_at: string | null;
}

interface Row {
  amount: number;
  bucket: Bucket;
  created_at: string;
  /** The allowance period a subscription charge drew from. */
  period: string | null;
  refunded_to: Bucket | null;
}

interface ModelPurchase {
  session: string;
  payment_ref: string;
  charge_ref: string;
  amount: number;
  paid_minor: number;
  applied: boolean;
  refunded_minor: number;
  disputes: Record<string, number>;
  revoked: number;
  recovered: number;
}

/** What Stripe holds: the truth the events are views of. */
interface StripeWorld {
  sub: { id: string; status: string; price_id: string; start: number; k: number; pause: boolean } | null;
  sessions: Map<string, { session: CheckoutSession; items: { price_id: string; quantity: number }[] }>;
  refunded: Map<string, number>;
  n: number;
}

interface Money {
  credits: number;
  free: number;
  sub: ModelSub | null;
  count: number;
  total: number;
  ledger: Map<string, Row>;
  purchases: Map<string, ModelPurchase>;
  customerLinked: boolean;
  applied: Set<string>;
}

interface Model extends Money {
  run: string;
  account: string;
  customer: string;
  initialCredits: number;
  initialFree: number;
  now: Date;
  stripe: StripeWorld;
  pending: PaymentEvent[];
  delivered: PaymentEvent[];
  /** Every job id used, for reading the ledger back. */
  jobs: Set<string>;
}

interface Real {
  billing: Billing;
  subs: SubscriptionService;
  accounts: DynamoAccountRepository;
  charges: DynamoChargeStore;
  state: DynamoBillingStateStore;
  jobs: DynamoJobRepository;
}

const iso = (ms: number) => new Date(ms).toISOString();
const mapStatus = (s: string): SubscriptionStatus =>
  (({ active: 'active', trialing: 'trialing', past_due: 'past_due', unpaid: 'past_due', incomplete: 'past_due', paused: 'paused', canceled: 'canceled', incomplete_expired: 'canceled' }) as Record<string, SubscriptionStatus>)[s] ?? 'past_due';
const live = (s: string) => ['active', 'trialing'].includes(mapStatus(s));

function usable(sub: ModelSub | null, now: Date): sub is ModelSub {
  return !!sub && (sub.status === 'active' || sub.status === 'trialing') && now.toISOString() < sub.period_end;
}

function chooseBucket(m: Money, amount: number, now: Date): Bucket | null {
  if (usable(m.sub, now) && m.sub.allowance >= amount) return 'subscription';
  if (m.free >= amount) return 'free_credits';
  if (m.credits >= amount) return 'credits';
  return null;
}

const rowKey = (job: string, unit: string) => `${job}|${unit}`;

/** Rule 1 and exactly-once: the model's answer to one charge. */
function modelCharge(m: Money, job: string, unit: string, amount: number, now: Date): 'charged' | 'already_charged' | 'insufficient' {
  if (m.ledger.has(rowKey(job, unit))) return 'already_charged';
  const bucket = chooseBucket(m, amount, now);
  if (!bucket) return 'insufficient';
  if (bucket === 'subscription') m.sub!.allowance -= amount;
  else if (bucket === 'free_credits') m.free -= amount;
  else m.credits -= amount;
  tally(`charge from ${bucket}`);
  m.ledger.set(rowKey(job, unit), { amount, bucket, created_at: now.toISOString(), period: bucket === 'subscription' ? m.sub!.allowance_period : null, refunded_to: null });
  m.count += 1;
  m.total += amount;
  return 'charged';
}

/**
 * Each charge once, back to its bucket; an allowance charge goes back to the allowance only while the subscription is
 * usable and still in the period whose allowance the charge drew from (README: "after a cancel or a renewal it goes
 * to one-off credits, so nothing is lost and nothing rolls over").
 */
function modelRefund(m: Money, job: string, now: Date): number {
  let back = 0;
  for (const [key, row] of m.ledger) {
    if (!key.startsWith(`${job}|`) || row.refunded_to) continue;
    let to: Bucket = row.bucket;
    if (row.bucket === 'subscription') {
      const s = m.sub;
      const samePeriod = usable(s, now) && s.allowance_period !== null && s.allowance_period === row.period && s.period_start === s.allowance_period;
      to = samePeriod ? 'subscription' : 'credits';
    }
    if (to === 'subscription') m.sub!.allowance += row.amount;
    else if (to === 'free_credits') m.free += row.amount;
    else m.credits += row.amount;
    row.refunded_to = to;
    tally(`refund ${row.bucket} → ${to}`);
    m.count -= 1;
    m.total -= row.amount;
    back += row.amount;
  }
  return back;
}

function derive(sub: ModelSub): ModelSub {
  let status = mapStatus(sub.provider_status);
  if (status === 'active' && sub.pause && sub.allowance_period !== sub.period_start) status = 'paused';
  return { ...sub, status, allowance: status === 'canceled' ? 0 : sub.allowance };
}

/** The stored subscription after the provider's view `p` is applied (README: Stripe events, allowance per period). */
function modelApplySub(m: Model, p: ProviderSubscription, o: { eventId?: string; eventAt: string | null; paid?: boolean; creation?: boolean; viewAt?: string }): void {
  const same = m.sub && m.sub.id === p.id ? m.sub : null;
  if (m.sub && !same) throw new Error('the model has one subscription per run');
  if (same?.status === 'canceled' && mapStatus(p.status) !== 'canceled') return;
  if (same && o.creation) return;
  if (same && p.period_start < same.period_start) return;
  if (same && o.eventAt && same.event_at && o.eventAt < same.event_at) return;
  const price = PRICES[p.price_id!];
  let next: ModelSub;
  if (!same) {
    next = { id: p.id, provider_status: p.status, pause: p.pause_collection, status: 'active', price, period_start: p.period_start, period_end: p.period_end, allowance: 0, allowance_period: null, event_at: o.eventAt };
  } else {
    next = { ...same, provider_status: p.status, pause: p.pause_collection, event_at: o.eventAt ?? same.event_at };
    if (p.period_start > same.period_start) {
      next = { ...next, price, period_start: p.period_start, period_end: p.period_end };
      if (next.allowance_period !== p.period_start) {
        if (live(p.status) && !p.pause_collection) next = { ...next, allowance: price, allowance_period: p.period_start };
        else next = { ...next, allowance: 0 };
      }
    } else {
      next.period_end = p.period_end;
      if (price > same.price) next = { ...next, price, allowance: same.allowance + (price - same.price) };
    }
  }
  if (o.viewAt && (!next.event_at || next.event_at < o.viewAt)) next.event_at = o.viewAt;
  if (o.paid && live(p.status) && p.period_start >= next.period_start && next.allowance_period !== p.period_start) {
    next = { ...next, allowance: next.price, allowance_period: next.period_start };
  }
  m.sub = derive(next);
  m.customerLinked = true;
  if (o.eventId) m.applied.add(o.eventId);
}

function modelPurchase(m: Model, paymentRef: string, eventId?: string): void {
  const pur = m.purchases.get(paymentRef)!;
  if (pur.applied) return;
  pur.applied = true;
  m.credits += pur.amount;
  m.customerLinked = true;
  if (eventId) m.applied.add(eventId);
}

function modelDeliver(m: Model, e: PaymentEvent): void {
  if (m.applied.has(e.id)) return;
  switch (e.kind) {
    case 'checkout_completed':
      if (e.session.mode === 'payment') return modelPurchase(m, e.session.payment_ref!, e.id);
      return modelApplySub(m, stripeView(m)!, { eventId: e.id, eventAt: null, paid: true, viewAt: iso(Date.parse(e.created) - 1000) });
    case 'subscription_changed':
      return modelApplySub(m, e.subscription, { eventId: e.id, eventAt: e.created, creation: e.type === 'customer.subscription.created' });
    case 'invoice_paid': {
      const inv = e.invoice;
      const sub = m.sub;
      if (!m.customerLinked || !sub || sub.id !== inv.subscription_id) return;
      if (inv.period_start! < sub.period_start || sub.allowance_period === inv.period_start) return;
      let next = sub;
      if (inv.period_start! > sub.period_start) next = { ...sub, price: PRICES[inv.price_id!], period_start: inv.period_start!, period_end: inv.period_end! };
      m.sub = derive({ ...next, allowance: next.price, allowance_period: next.period_start });
      m.applied.add(e.id);
      return;
    }
    case 'payment_reversed': {
      const r = e.reversal;
      const pur = m.purchases.get(r.payment_ref!);
      if (!pur) return;
      modelPurchase(m, pur.payment_ref);
      let refunded = pur.refunded_minor;
      let disputes = pur.disputes;
      if (r.kind === 'refund') {
        refunded = m.stripe.refunded.get(r.reference) ?? 0;
        if (refunded === pur.refunded_minor) return;
      } else {
        if (Object.hasOwn(pur.disputes, r.reference)) return;
        disputes = { ...disputes, [r.reference]: r.amount_minor };
      }
      const givenBack = Math.min(pur.paid_minor, refunded + Object.values(disputes).reduce((a, b) => a + b, 0));
      const revoked = givenBack >= pur.paid_minor ? pur.amount : Math.floor((pur.amount * givenBack) / pur.paid_minor);
      if (revoked < pur.revoked) {
        const restore = Math.max(0, pur.recovered - revoked);
        m.credits += restore;
        pur.recovered -= restore;
      } else {
        const debit = Math.min(revoked - pur.revoked, Math.max(0, m.credits));
        m.credits -= debit;
        pur.recovered += debit;
      }
      Object.assign(pur, { refunded_minor: refunded, disputes, revoked });
      m.applied.add(e.id);
      return;
    }
    default:
      return;
  }
}

// ── the Stripe double ─────────────────────────────────────────────────────────────────────────────────

function stripeView(m: Model): ProviderSubscription | null {
  const s = m.stripe.sub;
  if (!s) return null;
  return {
    id: s.id,
    customer_id: m.customer,
    status: s.status,
    price_id: s.price_id,
    item_id: `si_${s.id}`,
    period_start: iso(s.start + s.k * PERIOD_MS),
    period_end: iso(s.start + (s.k + 1) * PERIOD_MS),
    cancel_at_period_end: false,
    cancel_at: null,
    pause_collection: s.pause,
    account_ref: m.account,
  };
}

function provider(m: Model): PaymentProvider {
  const unused = async () => {
    throw new Error('not used by the model');
  };
  return {
    checkoutLineItems: async (id) => m.stripe.sessions.get(id)!.items,
    checkoutForPayment: async (ref) => [...m.stripe.sessions.values()].find((s) => s.session.payment_ref === ref)?.session ?? null,
    refundedTotal: async (ch) => m.stripe.refunded.get(ch) ?? 0,
    getSubscription: async () => stripeView(m)!,
    cancelAtPeriodEnd: unused,
    resume: unused,
    changePrice: unused,
    portalUrl: unused,
  };
}

/** A Stripe event, stamped now; Stripe's clock moves on 2 s so no two events share a second (or tie with a checkout's view). */
function emit(m: Model, type: string, body: Record<string, unknown>): void {
  const e = { id: `evt_${m.run}_${m.stripe.n++}`, type, created: m.now.toISOString(), ...body } as PaymentEvent;
  m.pending.push(e);
  m.now = new Date(m.now.getTime() + 2000);
}

const subEvent = (m: Model, type: string) => emit(m, type, { kind: 'subscription_changed', subscription: stripeView(m) });
function invoiceEvent(m: Model, reason: string): void {
  const v = stripeView(m)!;
  emit(m, 'invoice.paid', {
    kind: 'invoice_paid',
    invoice: { id: `in_${m.run}_${m.stripe.n}`, customer_id: m.customer, subscription_id: v.id, billing_reason: reason, period_start: v.period_start, period_end: v.period_end, price_id: v.price_id },
  });
}

// ── checking the stored state ─────────────────────────────────────────────────────────────────────────

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);
const isMicros = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

/** The stored account and ledger, in the shape `expected` gives the model's. */
async function stored(m: Model, r: Real) {
  const a = (await r.accounts.get(m.account))!;
  const ledger = new Map<string, LedgerEntry & { refunded_to?: Bucket }>();
  for (const job of m.jobs) for (const e of await r.charges.chargesOf(m.account, job)) ledger.set(rowKey(e.job_id, e.unit), e);
  const shown = {
    credits: a.credits_micros,
    free: a.free_credits_micros,
    count: a.total_pdf_count,
    total: a.total_amount_micros,
    sub: a.subscription && { status: a.subscription.status, price: a.subscription.price_micros, period_start: a.subscription.period_start, allowance: a.subscription.allowance_micros, allowance_period: a.subscription.allowance_period_start ?? null },
    ledger: Object.fromEntries([...ledger].sort(byKey).map(([k, e]) => [k, { amount: e.amount_micros, bucket: e.bucket, refunded_to: e.refunded_to ?? null }])),
  };
  return { a, ledger, shown };
}

function expected(m: Money) {
  return {
    credits: m.credits,
    free: m.free,
    count: m.count,
    total: m.total,
    sub: m.sub && { status: m.sub.status, price: m.sub.price, period_start: m.sub.period_start, allowance: m.sub.allowance, allowance_period: m.sub.allowance_period },
    ledger: Object.fromEntries([...m.ledger].sort(byKey).map(([k, row]) => [k, { amount: row.amount, bucket: row.bucket, refunded_to: row.refunded_to }])),
  };
}

async function verify(m: Model, r: Real, step: string): Promise<void> {
  const { a, ledger, shown: got } = await stored(m, r);
  const where = `after ${step}`;
  for (const [name, v] of Object.entries({ credits: a.credits_micros, free: a.free_credits_micros, allowance: a.subscription?.allowance_micros ?? 0, count: a.total_pdf_count, total: a.total_amount_micros })) {
    if (!isMicros(v)) throw new Error(`${where}: ${name} is ${v}, not a non-negative integer`);
  }
  const want = expected(m);
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${where}: stored state differs from the model\nstored ${JSON.stringify(got, null, 1)}\nmodel  ${JSON.stringify(want, null, 1)}`);

  // Independent of the model: the counters and the credit buckets are the sum of the ledger's (and purchases') effects.
  const standing = [...ledger.values()].filter((e) => !e.refunded_at);
  const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
  const effect = (b: Bucket) => sum([...ledger.values()].map((e) => (e.refunded_to === b ? e.amount_micros : 0) - (e.bucket === b ? e.amount_micros : 0)));
  const purchases = await r.state.purchases(m.account, 1000);
  const bought = sum(purchases.map((p) => p.amount_micros)) - sum(purchases.map((p) => p.reversal?.recovered_micros ?? 0));
  const ledgerSays = {
    count: standing.length,
    total: sum(standing.map((e) => e.amount_micros)),
    credits: m.initialCredits + bought + effect('credits'),
    free: m.initialFree + effect('free_credits'),
  };
  const onAccount = { count: a.total_pdf_count, total: a.total_amount_micros, credits: a.credits_micros, free: a.free_credits_micros };
  if (JSON.stringify(ledgerSays) !== JSON.stringify(onAccount)) throw new Error(`${where}: the account is not the sum of its ledger: ledger ${JSON.stringify(ledgerSays)}, stored ${JSON.stringify(onAccount)}`);
}

// ── the commands ──────────────────────────────────────────────────────────────────────────────────────

type Cmd = fc.AsyncCommand<Model, Real>;
const jobId = (m: Model, i: number) => `job_${m.run}_${i}`;
const charge = (m: Model, job: string, unit: string, amount: number): Charge => ({ account_id: m.account, job_id: job, unit, operation: 'pdf', amount_micros: amount, pdf_count: 1 });

async function outcome(p: Promise<{ outcome: string }>): Promise<string> {
  try {
    return (await p).outcome;
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'INSUFFICIENT_CREDITS') return 'insufficient';
    throw err;
  }
}

const { tally, print: printStats } = runStats('BILLING_MODEL_STATS');

const command = commandsVerifiedBy<Model, Real>(verify);

const amounts = fc.constantFrom(10_000, 2_500, 1_000_000, 7_000_000, 15_000_000);

const chargeOneCmd = ({ job, amount }: { job: number; amount: number }): Cmd =>
  command(`charge(job ${job}, ${amount})`, async (m, r) => {
    const id = jobId(m, job);
    m.jobs.add(id);
    const got = await outcome(r.billing.charge(charge(m, id, 'pdf', amount)));
    const want = modelCharge(m, id, 'pdf', amount, m.now);
    if (got !== want) throw new Error(`charge(job ${job}, ${amount}): ${got}, model says ${want}`);
  });
const chargeOne = fc.record({ job: fc.nat(JOB_POOL - 1), amount: amounts }).map(chargeOneCmd);

const chargeBulkCmd = ({ job, files, amount }: { job: number; files: number; amount: number }): Cmd =>
  command(`bulk finish(job ${job}, ${files} files × ${amount})`, async (m, r) => {
    const id = jobId(m, job);
    m.jobs.add(id);
    const charges = Array.from({ length: files }, (_, i) => charge(m, id, `file#${i}`, amount));
    const got = await r.billing.chargeInOrder(charges);
    let want = 0;
    for (const c of charges) {
      if (modelCharge(m, id, c.unit, amount, m.now) === 'insufficient') break;
      want++;
    }
    if (got !== want) throw new Error(`bulk finish: ${got} files done, model says ${want}`);
  });
const chargeBulk = fc.record({ job: fc.nat(JOB_POOL - 1), files: fc.integer({ min: 1, max: 60 }), amount: fc.constantFrom(10_000, 400_000) }).map(chargeBulkCmd);

/** A copy of the model's account side, to try an order of concurrent steps on. */
const money = (m: Money): Money => ({
  ...m,
  sub: m.sub && { ...m.sub },
  ledger: structuredClone(m.ledger),
  purchases: structuredClone(m.purchases),
  applied: new Set(m.applied),
});
type Op = { kind: 'charge'; job: number; amount: number } | { kind: 'refund'; job: number } | { kind: 'deliver'; pick: number };
const showOp = (o: Op) => (o.kind === 'charge' ? `charge job ${o.job}: ${o.amount}` : o.kind === 'refund' ? `refund job ${o.job}` : `deliver #${o.pick}`);

/**
 * Steps at once (Promise.all): charges (also of one unit twice), job refunds and Stripe event deliveries. Whatever
 * order the writes took, the outcome must be that of some order of the same steps one by one.
 */
const chargeConcurrentCmd = (ops: Op[]): Cmd =>
  command(`at once(${ops.map(showOp).join(', ')})`, async (m, r) => {
    const steps = ops.map((o) => {
      if (o.kind !== 'deliver') {
        m.jobs.add(jobId(m, o.job));
        return o;
      }
      if (m.pending.length === 0) return null;
      const [e] = m.pending.splice(o.pick % m.pending.length, 1);
      m.delivered.push(e);
      return { kind: 'deliver' as const, e };
    });
    const got = await Promise.all(
      steps.map(async (st) => {
        if (!st) return null;
        if (st.kind === 'charge') return outcome(r.billing.charge(charge(m, jobId(m, st.job), 'pdf', st.amount)));
        if (st.kind === 'refund') return r.billing.refundJob(m.account, jobId(m, st.job));
        await r.subs.handleEvent(st.e);
        return null;
      }),
    );
    const { shown } = await stored(m, r);
    const want = JSON.stringify(shown);
    for (const order of permutations(steps.map((st, i) => ({ st, i })))) {
      const trial: Model = { ...m, ...money(m) };
      const outcomes: (string | number | null)[] = [];
      for (const { st, i } of order) {
        if (!st) outcomes[i] = null;
        else if (st.kind === 'charge') outcomes[i] = modelCharge(trial, jobId(m, st.job), 'pdf', st.amount, m.now);
        else if (st.kind === 'refund') outcomes[i] = modelRefund(trial, jobId(m, st.job), m.now);
        else {
          modelDeliver(trial, st.e);
          outcomes[i] = null;
        }
      }
      if (JSON.stringify(outcomes) === JSON.stringify(got) && JSON.stringify(expected(trial)) === want) {
        Object.assign(m, trial);
        return;
      }
    }
    throw new Error(`at once: outcomes ${JSON.stringify(got)} and the stored account ${want} match no order of the steps one by one`);
  });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('charge' as const), job: fc.nat(JOB_POOL - 1), amount: amounts }),
  fc.record({ kind: fc.constant('refund' as const), job: fc.nat(JOB_POOL - 1) }),
  fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat() }),
);
const chargeConcurrent = fc.array(op, { minLength: 2, maxLength: 3 }).map(chargeConcurrentCmd);

const refundJobCmd = ({ job, twice }: { job: number; twice: boolean }): Cmd =>
  command(`refund job ${job}${twice ? ' (twice at once)' : ''}`, async (m, r) => {
    const id = jobId(m, job);
    m.jobs.add(id);
    const got = (await Promise.all((twice ? [0, 1] : [0]).map(() => r.billing.refundJob(m.account, id)))).reduce((x, y) => x + y, 0);
    const want = modelRefund(m, id, m.now);
    if (got !== want) throw new Error(`refund job ${job}: ${got} given back, model says ${want}`);
  });
const refundJob = fc.record({ job: fc.nat(JOB_POOL - 1), twice: fc.boolean() }).map(refundJobCmd);

/** Failed work is never charged: a charge-and-complete of a job another task already failed writes nothing. */
const chargeFailedJobCmd = (amount: number): Cmd =>
  command(`charge a failed job (${amount})`, async (m, r) => {
    const id = `jobf_${m.run}_${m.stripe.n++}`;
    m.jobs.add(id);
    const job = { ...newJob({ job_id: id, account_id: m.account, job_type: 'long', status: 'processing', now: m.now }) };
    await r.jobs.put({ ...job, status: 'failed', error_code: 'PDF_GENERATION_FAILED' });
    const err = await r.billing.charge(charge(m, id, 'pdf', amount), { job: { ...job, status: 'completed', completed_at: m.now.toISOString() } }).then(
      () => null,
      (e: unknown) => e,
    );
    if (!(err instanceof ServiceError) || !['JOB_ALREADY_FINISHED', 'INSUFFICIENT_CREDITS'].includes(err.code)) throw new Error(`charging a failed job answered ${String(err)}`);
    if ((await r.jobs.get(id))?.status !== 'failed') throw new Error('the failed job was completed');
  });
const chargeFailedJob = fc.constantFrom(10_000, 15_000_000).map(chargeFailedJobCmd);

const advanceCmd = (ms: number): Cmd =>
  command(`time +${ms / 3_600_000} h`, async (m) => {
    m.now = new Date(m.now.getTime() + ms);
  });
const advance = fc.constantFrom(3_600_000, 10 * 86_400_000, 31 * 86_400_000).map(advanceCmd);

const buyPackCmd = ({ usd, qty }: { usd: number; qty: number }): Cmd =>
  command(`stripe: pack checkout ${qty} × ${usd} USD`, async (m) => {
    const k = m.stripe.n;
    const session: CheckoutSession = {
      id: `cs_${m.run}_${k}`,
      mode: 'payment',
      payment_status: 'paid',
      account_ref: m.account,
      customer_id: m.customer,
      subscription_id: null,
      payment_ref: `pi_${m.run}_${k}`,
      amount_paid_minor: usd * 100 * qty,
    };
    m.stripe.sessions.set(session.id, { session, items: [{ price_id: `price_pack_${usd}_usd`, quantity: qty }] });
    m.purchases.set(session.payment_ref!, { session: session.id, payment_ref: session.payment_ref!, charge_ref: `ch_${m.run}_${k}`, amount: usd * qty * 1_000_000, paid_minor: usd * 100 * qty, applied: false, refunded_minor: 0, disputes: {}, revoked: 0, recovered: 0 });
    emit(m, 'checkout.session.completed', { kind: 'checkout_completed', session });
  });
const buyPack = fc.record({ usd: fc.constantFrom(10, 100), qty: fc.constantFrom(1, 2) }).map(buyPackCmd);

const pickPurchase = (m: Model, i: number) => [...m.purchases.values()][i % m.purchases.size];
const hasPurchase = (m: Model) => m.purchases.size > 0;

const refundPackCmd = ({ i, share }: { i: number; share: number }): Cmd =>
  command(
    `stripe: refund ${share} of pack #${i}`,
    async (m) => {
      const p = pickPurchase(m, i);
      const before = m.stripe.refunded.get(p.charge_ref) ?? 0;
      m.stripe.refunded.set(p.charge_ref, Math.min(p.paid_minor, before + Math.max(1, Math.floor(p.paid_minor * share))));
      emit(m, 'charge.refunded', { kind: 'payment_reversed', reversal: { kind: 'refund', payment_ref: p.payment_ref, reference: p.charge_ref, payment_amount_minor: p.paid_minor } });
    },
    hasPurchase,
  );
const refundPack = fc.record({ i: fc.nat(), share: fc.constantFrom(0.25, 0.5, 1, 0.013) }).map(refundPackCmd);

const refundFailsCmd = (i: number): Cmd =>
  command(
    `stripe: a refund of pack #${i} fails`,
    async (m) => {
      const p = pickPurchase(m, i);
      const before = m.stripe.refunded.get(p.charge_ref) ?? 0;
      m.stripe.refunded.set(p.charge_ref, Math.floor(before / 2));
      emit(m, 'refund.failed', { kind: 'payment_reversed', reversal: { kind: 'refund', payment_ref: p.payment_ref, reference: p.charge_ref, payment_amount_minor: null } });
    },
    hasPurchase,
  );
const refundFails = fc.nat().map(refundFailsCmd);

const disputeLostCmd = ({ i, share }: { i: number; share: number }): Cmd =>
  command(
    `stripe: dispute of ${share} of pack #${i} lost`,
    async (m) => {
      const p = pickPurchase(m, i);
      emit(m, 'charge.dispute.closed', { kind: 'payment_reversed', reversal: { kind: 'dispute_lost', payment_ref: p.payment_ref, reference: `dp_${m.run}_${m.stripe.n}`, amount_minor: Math.floor(p.paid_minor * share), payment_amount_minor: null } });
    },
    hasPurchase,
  );
const disputeLost = fc.record({ i: fc.nat(), share: fc.constantFrom(0.5, 1) }).map(disputeLostCmd);

const subscribeCmd = (price: string): Cmd =>
  command(
    `stripe: subscribe ${price}`,
    async (m) => {
      m.stripe.sub = { id: `sub_${m.run}`, status: 'incomplete', price_id: price, start: m.now.getTime(), k: 0, pause: false };
      subEvent(m, 'customer.subscription.created');
      m.stripe.sub.status = 'active';
      invoiceEvent(m, 'subscription_create');
      subEvent(m, 'customer.subscription.updated');
      const session: CheckoutSession = { id: `cs_${m.run}_sub`, mode: 'subscription', payment_status: 'paid', account_ref: m.account, customer_id: m.customer, subscription_id: m.stripe.sub.id, payment_ref: null, amount_paid_minor: null };
      emit(m, 'checkout.session.completed', { kind: 'checkout_completed', session });
    },
    (m) => !m.stripe.sub,
  );
const subscribe = fc.constantFrom('price_s', 'price_b').map(subscribeCmd);

const subLive = (m: Model) => !!m.stripe.sub && m.stripe.sub.status !== 'canceled';

/** A new period: paid (active, invoice.paid), payment failed (past_due), or collection paused (nothing billed). */
const renewCmd = (payment: string): Cmd =>
  command(
    `stripe: renewal (${payment})`,
    async (m) => {
      const s = m.stripe.sub!;
      const end = s.start + (s.k + 1) * PERIOD_MS;
      m.now = new Date(Math.max(m.now.getTime(), end) + 60_000);
      s.k++;
      if (s.pause) {
        subEvent(m, 'customer.subscription.updated');
      } else if (payment === 'paid') {
        s.status = 'active';
        subEvent(m, 'customer.subscription.updated');
        invoiceEvent(m, 'subscription_cycle');
      } else {
        s.status = 'past_due';
        subEvent(m, 'customer.subscription.updated');
      }
    },
    subLive,
  );
const renew = fc.constantFrom('paid', 'failed').map(renewCmd);

const payLateCmd = (): Cmd =>
  command(
    'stripe: the past-due invoice is paid',
    async (m) => {
      m.stripe.sub!.status = 'active';
      invoiceEvent(m, 'subscription_cycle');
      subEvent(m, 'customer.subscription.updated');
    },
    (m) => m.stripe.sub?.status === 'past_due',
  );
const payLate = fc.constant(payLateCmd());

const changePriceCmd = (): Cmd =>
  command(
    'stripe: switch plan',
    async (m) => {
      const s = m.stripe.sub!;
      s.price_id = s.price_id === 'price_s' ? 'price_b' : 'price_s';
      subEvent(m, 'customer.subscription.updated');
    },
    (m) => m.stripe.sub?.status === 'active',
  );
const changePrice = fc.constant(changePriceCmd());

const togglePauseCmd = (): Cmd =>
  command(
    'stripe: pause/resume collection',
    async (m) => {
      m.stripe.sub!.pause = !m.stripe.sub!.pause;
      subEvent(m, 'customer.subscription.updated');
    },
    subLive,
  );
const togglePause = fc.constant(togglePauseCmd());

const cancelCmd = (): Cmd =>
  command(
    'stripe: subscription cancelled',
    async (m) => {
      m.stripe.sub!.status = 'canceled';
      subEvent(m, 'customer.subscription.deleted');
    },
    subLive,
  );
const cancel = fc.constant(cancelCmd());

async function deliver(m: Model, r: Real, e: PaymentEvent): Promise<void> {
  await handleChecked(r.subs, e, tally);
  modelDeliver(m, e);
}

const { deliverOneCmd, redeliverCmd } = eventDeliveryCommands(command, deliver);
const deliverOne = fc.nat().map(deliverOneCmd);
const redeliver = fc.nat().map(redeliverCmd);

const allCommands = [
  chargeOne,
  chargeOne,
  chargeBulk,
  chargeConcurrent,
  refundJob,
  refundJob,
  chargeFailedJob,
  advance,
  buyPack,
  refundPack,
  refundFails,
  disputeLost,
  subscribe,
  subscribe,
  renew,
  renew,
  payLate,
  changePrice,
  togglePause,
  cancel,
  deliverOne,
  deliverOne,
  deliverOne,
  deliverOne,
  deliverOne,
  redeliver,
];

let runs = 0;

/** A fresh account (and Stripe world) for one sequence, with its own ids, on the shared table. */
async function start(db: Dynamo, free: number, credits: number): Promise<{ model: Model; real: Real }> {
  const run = `r${++runs}`;
  const at = new Date('2026-11-01T00:00:00.000Z');
  const model: Model = {
    run,
    account: `acct_${run}`,
    customer: `cus_${run}`,
    initialCredits: credits,
    initialFree: free,
    credits,
    free,
    sub: null,
    count: 0,
    total: 0,
    ledger: new Map(),
    purchases: new Map(),
    customerLinked: false,
    applied: new Set(),
    now: at,
    stripe: { sub: null, sessions: new Map(), refunded: new Map(), n: 0 },
    pending: [],
    delivered: [],
    jobs: new Set(),
  };
  const clock = { now: () => model.now };
  const accounts = new DynamoAccountRepository(db);
  const charges = new DynamoChargeStore(db);
  const state = new DynamoBillingStateStore(db);
  const real: Real = {
    accounts,
    charges,
    state,
    jobs: new DynamoJobRepository(db),
    billing: new Billing(accounts, charges, clock),
    subs: new SubscriptionService({ accounts, plans: new DynamoPlanRepository(db), store: state, provider: provider(model), packs: creditPacks(), clock }),
  };
  await accounts.create(newAccount({ account_id: model.account, email: `${run}@example.com`, plan_id: 'standard', credits_micros: credits, free_credits_micros: free, now: at }));
  return { model, real };
}

/** Runs a fixed sequence (a shrunk counterexample) with the same checks after every step. */
async function replay(db: Dynamo, free: number, credits: number, steps: Cmd[]): Promise<void> {
  await replaySteps(await start(db, free, credits), steps);
}

describe('billing model: the stored money always matches a reference model of the buckets', () => {
  const table = withLocalTable('billing-model', (db) => ({ db }));

  beforeAll(async () => {
    await new DynamoPlanRepository(table.db).put(planCatalogue({ starter: 'price_s', business: 'price_b' }));
  });
  afterAll(() => {
    printStats();
  });

  it('charges each unit once from the first bucket covering it, never below zero, refunds once, and keeps the totals the sum of the ledger', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 15_000, 3_000_000), fc.constantFrom(0, 25_000, 12_000_000), fc.commands(allCommands, { maxCommands: 60, size: '+1' }), async (free, credits, cmds) => {
        const setup = await start(table.db, free, credits);
        await fc.asyncModelRun(() => setup, cmds);
      }),
      { seed: SEED, numRuns: RUNS, verbose: 1 },
    );
  }, 300_000);

  describe('shrunk counterexamples', () => {
    it('a lost dispute that takes the whole balance is decided again when a job refund raised the balance meanwhile (it took less than any order of the two would)', async () => {
      await replay(table.db, 0, 0, [
        buyPackCmd({ usd: 10, qty: 1 }),
        deliverOneCmd(0),
        chargeBulkCmd({ job: 0, files: 2, amount: 10_000 }),
        disputeLostCmd({ i: 0, share: 1 }),
        chargeConcurrentCmd([{ kind: 'deliver', pick: 0 }, { kind: 'refund', job: 0 }, { kind: 'refund', job: 0 }]),
      ]);
    });

    it("a refund of last period's allowance charge goes to one-off credits when the renewal started past due and turned active before its invoice event (not rolled into this period's allowance, where the invoice overwrote it)", async () => {
      await replay(table.db, 0, 0, [
        subscribeCmd('price_s'),
        deliverOneCmd(0),
        deliverOneCmd(0),
        deliverOneCmd(0),
        deliverOneCmd(0),
        chargeOneCmd({ job: 0, amount: 10_000 }),
        renewCmd('failed'),
        deliverOneCmd(0),
        payLateCmd(),
        deliverOneCmd(1),
        refundJobCmd({ job: 0, twice: false }),
        deliverOneCmd(0),
      ]);
    });

    it('a retried charge whose first attempt took the last of the balance is already charged, not refused (alone, in a bulk finish, and at once)', async () => {
      await replay(table.db, 0, 10_000, [chargeOneCmd({ job: 0, amount: 10_000 }), chargeOneCmd({ job: 0, amount: 10_000 })]);
      await replay(table.db, 0, 20_000, [chargeBulkCmd({ job: 0, files: 2, amount: 10_000 }), chargeBulkCmd({ job: 0, files: 2, amount: 10_000 })]);
      await replay(table.db, 0, 10_000, [chargeOneCmd({ job: 0, amount: 10_000 }), chargeConcurrentCmd([{ kind: 'charge', job: 0, amount: 10_000 }, { kind: 'charge', job: 0, amount: 10_000 }])]);
    });
  });
});
