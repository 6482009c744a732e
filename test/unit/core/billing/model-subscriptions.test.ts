/**
 * Model-based test of the subscription lifecycle around the money: several subscriptions of one customer over time
 * (subscribing again after a cancel, a second checkout while one is live), scheduled cancels (`cancel_at_period_end`,
 * `cancel_at`) and their undoing, both from Stripe's side (portal) and through the service's own routes
 * (`cancel`, `resume`, `change` with proration), interleaved with charges and refunds. The REAL services run over the
 * real DynamoDB adapters on dynalite; Stripe is an in-memory world whose events are delivered in any order and again.
 *
 * Unlike model.test.ts (which predicts every step), this one checks what must hold whatever the order of delivery:
 * after every step the account is the sum of its ledger and never negative; and whenever every event Stripe sent has
 * been delivered, the stored subscription shows Stripe's truth about it (status, period, plan, scheduled cancel), the
 * account's plan follows it, and a live, paid period's allowance plus what was spent from it is what Stripe billed.
 *
 * Explore locally: BILLING_MODEL_RUNS=1000 BILLING_MODEL_SEED=7 npx jest test/unit/core/billing/model-subscriptions.test.ts
 */
import fc from 'fast-check';
import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { DynamoBillingStateStore } from '../../../../functions/adapters/dynamodb/billing-state';
import { DynamoChargeStore } from '../../../../functions/adapters/dynamodb/charges';
import { DynamoPlanRepository } from '../../../../functions/adapters/dynamodb/plans';
import type { Dynamo } from '../../../../functions/adapters/dynamodb/client';
import { type Account, newAccount } from '../../../../functions/core/accounts/account';
import { type Bucket, Billing, type LedgerEntry } from '../../../../functions/core/billing/charging';
import { creditPacks } from '../../../../functions/core/billing/packs';
import { planCatalogue } from '../../../../functions/core/billing/plans';
import { ServiceError } from '../../../../functions/core/errors';
import type { CheckoutSession, PaymentEvent, PaymentProvider, ProviderSubscription } from '../../../../functions/core/subscriptions/ports';
import { mapProviderStatus } from '../../../../functions/core/subscriptions/reconcile';
import { SubscriptionService } from '../../../../functions/core/subscriptions/service';
import { withLocalTable } from '../../../support/local-table';
import { commandsVerifiedBy, eventDeliveryCommands, handleChecked, replaySteps, runStats } from '../../../support/model-runs';

const PRICES: Record<string, number> = { price_s: 20_000_000, price_b: 100_000_000 };
const PLAN_OF: Record<string, string> = { price_s: 'starter', price_b: 'business' };
const PERIOD_MS = 30 * 86_400_000;
const JOB_POOL = 4;
const RUNS = Number(process.env.BILLING_MODEL_RUNS ?? 200);
const SEED = Number(process.env.BILLING_MODEL_SEED ?? 20261122);

/** One subscription as Stripe holds it: the truth its events and API answers are views of. */
interface StripeSub {
  id: string;
  status: string;
  /** The price billed from the next renewal on (Stripe's item price). */
  price_id: string;
  /** The price in effect this period (a downgrade waits for the renewal, an upgrade is at once). */
  effective: string;
  start: number;
  k: number;
  cape: boolean;
  cancelAt: number | null;
  /** This period's invoice is paid, and what the period's allowance is worth (plan amount plus prorated upgrades). */
  paid: boolean;
  granted: number;
}

interface World {
  run: string;
  account: string;
  customer: string;
  initialCredits: number;
  initialFree: number;
  now: Date;
  subs: StripeSub[];
  /** A second subscription was started while another was not cancelled (the account keeps one: README). */
  overlap: boolean;
  n: number;
  pending: PaymentEvent[];
  delivered: PaymentEvent[];
  jobs: Set<string>;
  /** The allowance period each allowance charge drew from, as the account showed it just before the charge. */
  chargePeriod: Map<string, string | null>;
  /** Stripe's idempotency: a key's first answer. */
  keys: Map<string, ProviderSubscription>;
}

interface Real {
  billing: Billing;
  subs: SubscriptionService;
  accounts: DynamoAccountRepository;
  charges: DynamoChargeStore;
  state: DynamoBillingStateStore;
}

const iso = (ms: number) => new Date(ms).toISOString();
const liveAtStripe = (s: StripeSub) => ['active', 'trialing'].includes(mapProviderStatus(s.status));

function view(w: World, s: StripeSub): ProviderSubscription {
  return {
    id: s.id,
    customer_id: w.customer,
    status: s.status,
    price_id: s.price_id,
    item_id: `si_${s.id}`,
    period_start: iso(s.start + s.k * PERIOD_MS),
    period_end: iso(s.start + (s.k + 1) * PERIOD_MS),
    cancel_at_period_end: s.cape,
    cancel_at: s.cancelAt === null ? null : iso(s.cancelAt),
    pause_collection: false,
    account_ref: w.account,
  };
}

/** A Stripe event, stamped now; Stripe's clock moves on 2 s so no two events share a second. */
function emit(w: World, type: string, body: Record<string, unknown>): void {
  w.pending.push({ id: `evt_${w.run}_${w.n++}`, type, created: w.now.toISOString(), ...body } as PaymentEvent);
  w.now = new Date(w.now.getTime() + 2000);
}
const subEvent = (w: World, s: StripeSub, type = 'customer.subscription.updated') => emit(w, type, { kind: 'subscription_changed', subscription: view(w, s) });
function invoiceEvent(w: World, s: StripeSub, reason: string): void {
  const v = view(w, s);
  emit(w, 'invoice.paid', {
    kind: 'invoice_paid',
    invoice: { id: `in_${w.run}_${w.n}`, customer_id: w.customer, subscription_id: s.id, billing_reason: reason, period_start: v.period_start, period_end: v.period_end, price_id: s.price_id },
  });
}

const stripeRefusal = () => new ServiceError('PAYMENT_PROVIDER_ERROR', 'The payment provider did not accept the request.');

function provider(w: World): PaymentProvider {
  const find = (id: string) => w.subs.find((s) => s.id === id)!;
  const unused = async () => {
    throw new Error('not used by this model');
  };
  return {
    checkoutLineItems: unused,
    checkoutForPayment: unused,
    refundedTotal: unused,
    getSubscription: async (id) => view(w, find(id)),
    // Stripe refuses to update a cancelled subscription; each change it makes also sends an update event.
    cancelAtPeriodEnd: async (id) => {
      const s = find(id);
      if (s.status === 'canceled') throw stripeRefusal();
      s.cape = true;
      subEvent(w, s);
      return view(w, s);
    },
    resume: async (id, pending) => {
      const s = find(id);
      if (s.status === 'canceled') throw stripeRefusal();
      if (pending.cancel_at_period_end) s.cape = false;
      if (pending.cancel_at) s.cancelAt = null;
      subEvent(w, s);
      return view(w, s);
    },
    changePrice: async (id, _item, priceId, prorate, key) => {
      const seen = w.keys.get(key);
      if (seen) return seen;
      const s = find(id);
      if (s.status === 'canceled') throw stripeRefusal();
      s.price_id = priceId;
      if (prorate && PRICES[priceId] > PRICES[s.effective]) {
        if (s.paid) s.granted += PRICES[priceId] - PRICES[s.effective];
        s.effective = priceId;
      }
      subEvent(w, s);
      const answer = view(w, s);
      w.keys.set(key, answer);
      return answer;
    },
    portalUrl: unused,
  };
}

// ── checking the stored state ─────────────────────────────────────────────────────────────────────────

const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
const isMicros = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

async function ledgerOf(w: World, r: Real): Promise<(LedgerEntry & { refunded_to?: Bucket })[]> {
  const out: (LedgerEntry & { refunded_to?: Bucket })[] = [];
  for (const job of w.jobs) out.push(...(await r.charges.chargesOf(w.account, job)));
  return out;
}

async function verify(w: World, r: Real, step: string): Promise<void> {
  const where = `after ${step}`;
  const a = (await r.accounts.get(w.account))!;
  const ledger = await ledgerOf(w, r);
  for (const [name, v] of Object.entries({ credits: a.credits_micros, free: a.free_credits_micros, allowance: a.subscription?.allowance_micros ?? 0, count: a.total_pdf_count, total: a.total_amount_micros })) {
    if (!isMicros(v)) throw new Error(`${where}: ${name} is ${v}, not a non-negative integer`);
  }
  const standing = ledger.filter((e) => !e.refunded_at);
  const effect = (b: Bucket) => sum(ledger.map((e) => (e.refunded_to === b ? e.amount_micros : 0) - (e.bucket === b ? e.amount_micros : 0)));
  const ledgerSays = { count: standing.length, total: sum(standing.map((e) => e.amount_micros)), credits: w.initialCredits + effect('credits'), free: w.initialFree + effect('free_credits') };
  const onAccount = { count: a.total_pdf_count, total: a.total_amount_micros, credits: a.credits_micros, free: a.free_credits_micros };
  if (JSON.stringify(ledgerSays) !== JSON.stringify(onAccount)) throw new Error(`${where}: the account is not the sum of its ledger: ledger ${JSON.stringify(ledgerSays)}, stored ${JSON.stringify(onAccount)}`);

  const sub = a.subscription;
  if (sub && !w.subs.some((s) => s.id === sub.subscription_id)) throw new Error(`${where}: the account shows ${sub.subscription_id}, which Stripe never had`);
  if (w.pending.length > 0) return;

  // Every event Stripe sent has been delivered (some maybe again): the account must show Stripe's truth.
  const latest = w.subs[w.subs.length - 1];
  if (!w.overlap && latest && sub?.subscription_id !== latest.id) throw new Error(`${where}: the account shows ${sub?.subscription_id ?? 'no subscription'}, Stripe's subscription is ${latest.id} (${latest.status})`);
  if (!sub) return;
  const s = w.subs.find((x) => x.id === sub.subscription_id)!;
  const v = view(w, s);
  const want = {
    status: mapProviderStatus(s.status),
    period_start: v.period_start,
    price: PRICES[s.effective],
    cancel: s.status !== 'canceled' && (s.cape || s.cancelAt !== null),
    effective_at: s.status !== 'canceled' && (s.cape || s.cancelAt !== null) ? (s.cancelAt === null ? v.period_end : iso(s.cancelAt)) : null,
    downgrade: s.status !== 'canceled' && !s.cape && s.cancelAt === null && PRICES[s.price_id] < PRICES[s.effective],
  };
  const got = {
    status: sub.status,
    period_start: sub.period_start,
    price: sub.price_micros,
    cancel: sub.scheduled_change?.action === 'cancel',
    effective_at: sub.scheduled_change?.action === 'cancel' ? sub.scheduled_change.effective_at : null,
    downgrade: sub.scheduled_change?.action === 'downgrade',
  };
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${where}: the stored subscription ${s.id} is not Stripe's:\nstored ${JSON.stringify(got)}\nstripe ${JSON.stringify(want)}`);
  if (sub.status === 'active' && (a.status !== 'active' || a.plan_id !== PLAN_OF[s.effective])) throw new Error(`${where}: the subscription is active on ${s.effective}, the account is ${a.status} on ${a.plan_id}`);
  if (sub.status === 'canceled' && a.plan_id !== null && a.plan_id !== 'standard') throw new Error(`${where}: the subscription ended, the account is still on ${a.plan_id}`);
  if (sub.status === 'canceled' && sub.allowance_micros !== 0) throw new Error(`${where}: a cancelled subscription keeps an allowance of ${sub.allowance_micros}`);
  if (liveAtStripe(s) && s.paid) {
    const period = sub.allowance_period_start === undefined ? sub.period_start : sub.allowance_period_start;
    if (period !== v.period_start) throw new Error(`${where}: the paid period ${v.period_start} has no allowance (it holds ${period}'s)`);
    // What the period's allowance was worth: what is left, plus the allowance charges of this period not given back to it.
    const spent = sum(ledger.filter((e) => e.bucket === 'subscription' && w.chargePeriod.get(`${e.job_id}|${e.unit}`) === period && e.refunded_to !== 'subscription').map((e) => e.amount_micros));
    if (sub.allowance_micros + spent !== s.granted) throw new Error(`${where}: the period's allowance is ${sub.allowance_micros} left + ${spent} spent, Stripe billed ${s.granted}`);
  }
}

// ── the commands ──────────────────────────────────────────────────────────────────────────────────────

type Cmd = fc.AsyncCommand<World, Real>;

const { tally, print: printStats } = runStats('BILLING_MODEL_STATS');

const command = commandsVerifiedBy<World, Real>(verify);

const pickSub = (w: World, i: number, ok: (s: StripeSub) => boolean) => {
  const xs = w.subs.filter(ok);
  return xs[i % xs.length];
};
const notCancelled = (s: StripeSub) => s.status !== 'canceled';
const anySub = (ok: (s: StripeSub) => boolean) => (w: World) => w.subs.some(ok);

const subscribeCmd = (price: string): Cmd =>
  command(`stripe: subscribe ${price}`, async (w) => {
    if (w.subs.some(notCancelled)) w.overlap = true;
    const s: StripeSub = { id: `sub_${w.run}_${w.n}`, status: 'incomplete', price_id: price, effective: price, start: w.now.getTime(), k: 0, cape: false, cancelAt: null, paid: false, granted: 0 };
    w.subs.push(s);
    subEvent(w, s, 'customer.subscription.created');
    Object.assign(s, { status: 'active', paid: true, granted: PRICES[price] });
    invoiceEvent(w, s, 'subscription_create');
    subEvent(w, s);
    const session: CheckoutSession = { id: `cs_${s.id}`, mode: 'subscription', payment_status: 'paid', account_ref: w.account, customer_id: w.customer, subscription_id: s.id, payment_ref: null, amount_paid_minor: null };
    emit(w, 'checkout.session.completed', { kind: 'checkout_completed', session });
  });
const subscribe = fc.constantFrom('price_s', 'price_b').map(subscribeCmd);

const cancelNowCmd = (i: number): Cmd =>
  command(
    `stripe: subscription #${i} cancelled now`,
    async (w) => {
      const s = pickSub(w, i, notCancelled);
      s.status = 'canceled';
      subEvent(w, s, 'customer.subscription.deleted');
    },
    anySub(notCancelled),
  );
const cancelNow = fc.nat().map(cancelNowCmd);

/** From the customer portal: cancel at period end, or at a date within the period (`cancel_at`); or undo either. */
const portalScheduleCmd = ({ i, how }: { i: number; how: 'period_end' | 'at' | 'undo' }): Cmd =>
  command(
    `stripe portal: subscription #${i} ${how === 'undo' ? 'scheduled cancel undone' : `cancels at ${how}`}`,
    async (w) => {
      const s = pickSub(w, i, notCancelled);
      if (how === 'undo') Object.assign(s, { cape: false, cancelAt: null });
      else if (how === 'period_end') s.cape = true;
      else s.cancelAt = Math.max(w.now.getTime() + 3_600_000, s.start + (s.k + 0.5) * PERIOD_MS);
      subEvent(w, s);
    },
    anySub(notCancelled),
  );
const portalSchedule = fc.record({ i: fc.nat(), how: fc.constantFrom('period_end' as const, 'at' as const, 'undo' as const) }).map(portalScheduleCmd);

/** Time reaches the subscription's cancel date or period end: it is cancelled, or renews (paid, or the payment fails). */
const periodEndsCmd = ({ i, payment }: { i: number; payment: 'paid' | 'failed' }): Cmd =>
  command(
    `stripe: subscription #${i} reaches its ${payment === 'paid' ? 'period end' : 'period end (payment fails)'}`,
    async (w) => {
      const s = pickSub(w, i, notCancelled);
      const end = s.cancelAt ?? s.start + (s.k + 1) * PERIOD_MS;
      w.now = new Date(Math.max(w.now.getTime(), end) + 60_000);
      if (s.cancelAt !== null || s.cape) {
        s.status = 'canceled';
        subEvent(w, s, 'customer.subscription.deleted');
        return;
      }
      s.k++;
      s.effective = s.price_id;
      if (payment === 'paid') {
        Object.assign(s, { status: 'active', paid: true, granted: PRICES[s.effective] });
        subEvent(w, s);
        invoiceEvent(w, s, 'subscription_cycle');
      } else {
        Object.assign(s, { status: 'past_due', paid: false, granted: 0 });
        subEvent(w, s);
      }
    },
    anySub(notCancelled),
  );
const periodEnds = fc.record({ i: fc.nat(), payment: fc.constantFrom('paid' as const, 'failed' as const) }).map(periodEndsCmd);

const payLateCmd = (i: number): Cmd =>
  command(
    `stripe: the past-due invoice of subscription #${i} is paid`,
    async (w) => {
      const s = pickSub(w, i, (x) => x.status === 'past_due');
      Object.assign(s, { status: 'active', paid: true, granted: PRICES[s.effective] });
      invoiceEvent(w, s, 'subscription_cycle');
      subEvent(w, s);
    },
    anySub((x) => x.status === 'past_due'),
  );
const payLate = fc.nat().map(payLateCmd);

const ROUTE_REFUSALS = ['NO_ACTIVE_SUBSCRIPTION', 'PAYMENT_PROVIDER_ERROR'];

/** The service's own routes, on the account as stored now (maybe behind Stripe: events still on their way). */
const routeCmd = ({ route, price }: { route: 'cancel' | 'resume' | 'change'; price: string }): Cmd =>
  command(`route: ${route}${route === 'change' ? ` to ${price}` : ''}`, async (w, r) => {
    const account = (await r.accounts.get(w.account))!;
    try {
      if (route === 'cancel') await r.subs.cancel(account);
      else if (route === 'resume') await r.subs.resume(account);
      else tally(`change: ${(await r.subs.change(account, { price_id: price })).result}`);
      tally(`route ${route}: done`);
    } catch (err) {
      if (!(err instanceof ServiceError) || !ROUTE_REFUSALS.includes(err.code)) throw err;
      const sub = account.subscription;
      // A refusal must be the stored state's (no subscription) or Stripe's (it is cancelled there already).
      const stripe = sub && w.subs.find((s) => s.id === sub.subscription_id);
      if (err.code === 'PAYMENT_PROVIDER_ERROR' && stripe?.status !== 'canceled') throw new Error(`route ${route}: Stripe refused, but ${sub?.subscription_id} is ${stripe?.status}`);
      if (err.code === 'NO_ACTIVE_SUBSCRIPTION' && sub && (route === 'change' ? ['active', 'trialing'] : ['active', 'trialing', 'past_due', 'paused']).includes(sub.status)) {
        throw new Error(`route ${route}: NO_ACTIVE_SUBSCRIPTION with a ${sub.status} subscription`);
      }
      tally(`route ${route}: ${err.code}`);
    }
  });
const route = fc.record({ route: fc.constantFrom('cancel' as const, 'resume' as const, 'change' as const), price: fc.constantFrom('price_s', 'price_b') }).map(routeCmd);

const amounts = fc.constantFrom(10_000, 2_500_000, 15_000_000);
const chargeCmd = ({ job, amount }: { job: number; amount: number }): Cmd =>
  command(`charge(job ${job}, ${amount})`, async (w, r) => {
    const id = `job_${w.run}_${job}`;
    w.jobs.add(id);
    const before = (await r.accounts.get(w.account))!;
    const sub = before.subscription;
    const period = sub ? (sub.allowance_period_start === undefined ? sub.period_start : sub.allowance_period_start) : null;
    try {
      const res = await r.billing.charge({ account_id: w.account, job_id: id, unit: 'pdf', operation: 'pdf', amount_micros: amount, pdf_count: 1 });
      tally(`charge: ${res.outcome} ${res.bucket ?? ''}`);
      if (res.bucket === 'subscription') w.chargePeriod.set(`${id}|pdf`, period);
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code !== 'INSUFFICIENT_CREDITS') throw err;
      tally('charge: insufficient');
    }
  });
const charge = fc.record({ job: fc.nat(JOB_POOL - 1), amount: amounts }).map(chargeCmd);

const refundCmd = (job: number): Cmd =>
  command(`refund job ${job}`, async (w, r) => {
    const id = `job_${w.run}_${job}`;
    w.jobs.add(id);
    await r.billing.refundJob(w.account, id);
  });
const refund = fc.nat(JOB_POOL - 1).map(refundCmd);

const advanceCmd = (ms: number): Cmd =>
  command(`time +${ms / 3_600_000} h`, async (w) => {
    w.now = new Date(w.now.getTime() + ms);
  });
const advance = fc.constantFrom(3_600_000, 5 * 86_400_000).map(advanceCmd);

const deliver = (r: Real, e: PaymentEvent) => handleChecked(r.subs, e, tally);

const { deliverOneCmd, redeliverCmd } = eventDeliveryCommands(command, (_w: World, r: Real, e: PaymentEvent) => deliver(r, e));
const deliverOne = fc.nat().map(deliverOneCmd);
const redeliver = fc.nat().map(redeliverCmd);

/** Every pending event, in an order drawn from `seed` (then the account must show Stripe's truth). */
const drainCmd = (seed: number): Cmd =>
  command(
    `deliver all pending (order ${seed})`,
    async (w, r) => {
      let k = seed;
      while (w.pending.length > 0) {
        const [e] = w.pending.splice(k % w.pending.length, 1);
        k = Math.floor(k / 3) + 7;
        w.delivered.push(e);
        await deliver(r, e);
      }
    },
    (w) => w.pending.length > 0,
  );
const drain = fc.nat().map(drainCmd);

const allCommands = [subscribe, subscribe, cancelNow, portalSchedule, portalSchedule, periodEnds, periodEnds, payLate, route, route, route, charge, charge, refund, advance, deliverOne, deliverOne, deliverOne, deliverOne, redeliver, redeliver, drain];

let runs = 0;

async function start(db: Dynamo, free: number, credits: number): Promise<{ model: World; real: Real }> {
  const run = `s${++runs}`;
  const at = new Date('2026-11-01T00:00:00.000Z');
  const w: World = { run, account: `acct_${run}`, customer: `cus_${run}`, initialCredits: credits, initialFree: free, now: at, subs: [], overlap: false, n: 0, pending: [], delivered: [], jobs: new Set(), chargePeriod: new Map(), keys: new Map() };
  const clock = { now: () => w.now };
  const accounts = new DynamoAccountRepository(db);
  const charges = new DynamoChargeStore(db);
  const state = new DynamoBillingStateStore(db);
  const real: Real = {
    accounts,
    charges,
    state,
    billing: new Billing(accounts, charges, clock),
    subs: new SubscriptionService({ accounts, plans: new DynamoPlanRepository(db), store: state, provider: provider(w), packs: creditPacks(), clock }),
  };
  await accounts.create(newAccount({ account_id: w.account, email: `${run}@example.com`, plan_id: null, credits_micros: credits, free_credits_micros: free, now: at }) as Account);
  return { model: w, real };
}

async function replay(db: Dynamo, free: number, credits: number, steps: Cmd[]): Promise<void> {
  await replaySteps(await start(db, free, credits), steps);
}

describe('billing model of the subscription lifecycle: the account shows Stripe once its events are in, and stays the sum of its ledger', () => {
  const table = withLocalTable('billing-model-subs', (db) => ({ db }));

  beforeAll(async () => {
    await new DynamoPlanRepository(table.db).put(planCatalogue({ starter: 'price_s', business: 'price_b' }));
  });
  afterAll(() => {
    printStats();
  });

  it('subscribing again, scheduled cancels and resumes, route changes and charges, with events in any order and again', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 3_000_000), fc.constantFrom(0, 12_000_000), fc.commands(allCommands, { maxCommands: 40, size: '+1' }), fc.nat(), async (free, credits, cmds, order) => {
        const setup = await start(table.db, free, credits);
        await fc.asyncModelRun(() => setup, cmds);
        // Whatever was left on its way arrives in the end.
        if (setup.model.pending.length > 0) await drainCmd(order).run(setup.model, setup.real);
      }),
      { seed: SEED, numRuns: RUNS, verbose: 1 },
    );
  }, 300_000);

  describe('shrunk counterexamples', () => {
    it("a subscription that takes over from an ended one gets its paid period's allowance (its checkout and invoice were ignored while the other was the account's)", async () => {
      await replay(table.db, 0, 0, [
        subscribeCmd('price_s'),
        portalScheduleCmd({ i: 0, how: 'period_end' }),
        subscribeCmd('price_s'),
        portalScheduleCmd({ i: 615035023, how: 'period_end' }),
        portalScheduleCmd({ i: 0, how: 'period_end' }),
        portalScheduleCmd({ i: 0, how: 'period_end' }),
        periodEndsCmd({ i: 452617071, payment: 'paid' }),
        deliverOneCmd(0),
        drainCmd(161975802),
      ]);
    });

    it('a late update of a cancelled subscription does not revive it over the one subscribed after it', async () => {
      await replay(table.db, 0, 0, [subscribeCmd('price_s'), portalScheduleCmd({ i: 0, how: 'period_end' }), drainCmd(0), routeCmd({ route: 'resume', price: 'price_s' }), subscribeCmd('price_s'), cancelNowCmd(0), drainCmd(15)]);
    });

    it("subscribing again after a cancel: the new subscription's events arriving before the old one's deletion are not ignored as a second subscription", async () => {
      await replay(table.db, 0, 0, [
        subscribeCmd('price_s'),
        periodEndsCmd({ i: 0, payment: 'paid' }),
        periodEndsCmd({ i: 0, payment: 'paid' }),
        cancelNowCmd(0),
        subscribeCmd('price_s'),
        deliverOneCmd(0),
        deliverOneCmd(1449337464),
        drainCmd(536253918),
      ]);
    });
  });
});
