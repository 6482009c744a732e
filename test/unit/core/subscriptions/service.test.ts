import { type Account, newAccount } from '../../../../functions/core/accounts/account';
import type { AccountRepository, PlanRepository } from '../../../../functions/core/accounts/ports';
import { creditPacks } from '../../../../functions/core/billing/packs';
import { planCatalogue } from '../../../../functions/core/billing/plans';
import type { BillingCommitOutcome, BillingStateStore, BillingStateWrite, LostDispute, PaymentEvent, PaymentProvider, ProviderSubscription, Purchase, RefundChange, ReversalWrite } from '../../../../functions/core/subscriptions/ports';
import { SubscriptionService } from '../../../../functions/core/subscriptions/service';

const now = new Date('2026-11-21T12:00:00Z');

/** A live Starter subscription of account a1 in its first 30 days from `now`, as the provider reports it. */
function liveSubscription(overrides: Partial<ProviderSubscription> = {}): ProviderSubscription {
  return {
    id: 'sub_1',
    customer_id: 'cus_1',
    status: 'active',
    price_id: 'price_s',
    item_id: 'si_1',
    period_start: now.toISOString(),
    period_end: new Date(now.getTime() + 30 * 86_400_000).toISOString(),
    cancel_at_period_end: false,
    cancel_at: null,
    pause_collection: false,
    account_ref: 'a1',
    ...overrides,
  };
}

/** In memory, with the same contract as the DynamoDB store; `interfere` changes the account between read and write. */
class MemoryStore implements BillingStateStore {
  events = new Set<string>();
  purchaseIds = new Set<string>();
  customers = new Map<string, string>();
  /** Recorded purchases by payment reference. */
  payments = new Map<string, { account_id: string; purchase: Purchase }>();
  commits = 0;
  interfere: (() => void) | null = null;
  constructor(private readonly accounts: Map<string, Account>) {}
  async commit(write: BillingStateWrite): Promise<BillingCommitOutcome> {
    this.commits++;
    if (this.interfere) {
      const f = this.interfere;
      this.interfere = null;
      f();
    }
    if (write.eventId && this.events.has(write.eventId)) return 'duplicate';
    if (write.purchase && this.purchaseIds.has(write.purchase.purchase_id)) return 'duplicate';
    const owner = write.linkCustomer ? this.customers.get(write.linkCustomer) : undefined;
    if (owner && owner !== write.seen.account_id) return 'customer_conflict';
    const current = this.accounts.get(write.seen.account_id)!;
    if ((current.billing_version ?? 0) !== (write.seen.billing_version ?? 0) || current.subscription?.allowance_micros !== write.seen.subscription?.allowance_micros) return 'conflict';
    if (write.eventId) this.events.add(write.eventId);
    if (write.purchase) this.purchaseIds.add(write.purchase.purchase_id);
    if (write.purchase?.payment_ref) this.payments.set(write.purchase.payment_ref, { account_id: current.account_id, purchase: write.purchase });
    if (write.linkCustomer) this.customers.set(write.linkCustomer, current.account_id);
    this.accounts.set(current.account_id, {
      ...current,
      ...write.next,
      credits_micros: current.credits_micros + (write.purchase?.amount_micros ?? 0),
      billing_version: (current.billing_version ?? 0) + 1,
    });
    return 'committed';
  }
  async reverse(write: ReversalWrite): Promise<'committed' | 'duplicate' | 'conflict'> {
    this.commits++;
    if (this.interfere) {
      const f = this.interfere;
      this.interfere = null;
      f();
    }
    if (this.events.has(write.eventId)) return 'duplicate';
    const entry = [...this.payments.values()].find((p) => p.purchase.purchase_id === write.seen.purchase_id)!;
    const current = this.accounts.get(write.account_id)!;
    if (entry.purchase.reversal?.version !== write.seen.reversal?.version || current.credits_micros < write.debit_micros) return 'conflict';
    this.events.add(write.eventId);
    entry.purchase = { ...entry.purchase, reversal: write.reversal };
    this.accounts.set(current.account_id, { ...current, credits_micros: current.credits_micros - write.debit_micros + write.restore_micros });
    return 'committed';
  }
  async purchaseForPayment(ref: string) {
    const found = this.payments.get(ref);
    return found ? { account_id: found.account_id, purchase: found.purchase } : null;
  }
  async eventApplied(id: string) {
    return this.events.has(id);
  }
  async accountForCustomer(id: string) {
    return this.customers.get(id) ?? null;
  }
  async purchases() {
    return [];
  }
}

function setup(provider: Partial<PaymentProvider> | null = {}) {
  const accounts = new Map<string, Account>([['a1', newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: null, now })]]);
  const repo: AccountRepository = { get: async (id) => accounts.get(id) ?? null, create: async () => true };
  const plans: PlanRepository = { get: async () => null, list: async () => planCatalogue({ starter: 'price_s', business: 'price_b' }), put: async () => undefined };
  const store = new MemoryStore(accounts);
  const log = { warn: jest.fn(), error: jest.fn() };
  const lineItems = async () => [{ price_id: 'price_pack_100_usd', quantity: 1 }];
  /** Refunded totals by charge, as the provider answers them now. */
  const refunded = new Map<string, number>();
  const service = new SubscriptionService({
    accounts: repo,
    plans,
    store,
    provider: provider === null ? null : ({ checkoutLineItems: lineItems, checkoutForPayment: async () => null, refundedTotal: async (charge: string) => refunded.get(charge) ?? 0, ...provider } as PaymentProvider),
    packs: creditPacks(),
    clock: { now: () => now },
    log,
  });
  return { accounts, store, service, log, refunded };
}

const packEvent = (id = 'evt_1'): PaymentEvent => ({
  id,
  type: 'checkout.session.completed',
  created: now.toISOString(),
  kind: 'checkout_completed',
  session: { id: 'cs_1', mode: 'payment', payment_status: 'paid', account_ref: 'a1', customer_id: 'cus_1', subscription_id: null, payment_ref: 'pi_1', amount_paid_minor: 10_000 },
});

/** A refund event of charge ch_1 (paid with pi_1): it names the charge, not what its refunds add up to. */
const refundEvent = (id: string, changes: Partial<RefundChange> = {}, type = 'charge.refunded'): PaymentEvent => ({
  id,
  type,
  created: now.toISOString(),
  kind: 'payment_reversed',
  reversal: { kind: 'refund', payment_ref: 'pi_1', reference: 'ch_1', payment_amount_minor: type === 'charge.refunded' ? 10_000 : null, ...changes },
});

const disputeEvent = (id: string, dispute: LostDispute): PaymentEvent => ({ id, type: 'charge.dispute.closed', created: now.toISOString(), kind: 'payment_reversed', reversal: dispute });

describe('SubscriptionService: refunds and lost disputes of a credit pack', () => {
  /** A 100 USD pack paid 100.00 USD (pi_1), with `spent` USD of it charged since. */
  async function bought(spent = 0) {
    const ctx = setup();
    expect(await ctx.service.handleEvent(packEvent('evt_buy'))).toEqual({ result: 'applied', account_id: 'a1' });
    const account = ctx.accounts.get('a1')!;
    ctx.accounts.set('a1', { ...account, credits_micros: account.credits_micros - spent * 1_000_000 });
    return ctx;
  }
  const credits = (ctx: Awaited<ReturnType<typeof bought>>) => ctx.accounts.get('a1')!.credits_micros;
  /** A refund event of charge ch_1 (`type`), the provider's refunded total of ch_1 being `total` when it is applied. */
  const refund = (ctx: ReturnType<typeof setup>, eventId: string, total: number, type?: string) => {
    ctx.refunded.set('ch_1', total);
    return ctx.service.handleEvent(refundEvent(eventId, {}, type));
  };

  it('takes back the refunded share of the credits, once per refunded total, whatever order the events come in', async () => {
    const ctx = await bought();
    expect(await refund(ctx, 'evt_r1', 2_500)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(75_000_000);
    expect(await refund(ctx, 'evt_r1', 2_500)).toEqual({ result: 'duplicate' });
    // The refunded total: a second refund of 25.00 is a total of 50.00.
    expect(await refund(ctx, 'evt_r2', 5_000)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(50_000_000);
    // An older event arriving late: the total now is what counts, and it is not new.
    expect(await refund(ctx, 'evt_r_old', 5_000)).toEqual({ result: 'ignored', reason: 'already_reversed', account_id: 'a1' });
    expect(credits(ctx)).toBe(50_000_000);
    expect(await refund(ctx, 'evt_r3', 10_000)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(0);
    expect(ctx.store.payments.get('pi_1')!.purchase.reversal).toMatchObject({ refunded_minor: 10_000, revoked_micros: 100_000_000, recovered_micros: 100_000_000, version: 3 });
  });

  it('never takes the balance below zero: credits spent before the refund are reported, not owed', async () => {
    const ctx = await bought(70);
    expect(await refund(ctx, 'evt_full', 10_000)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(0);
    expect(ctx.store.payments.get('pi_1')!.purchase.reversal).toMatchObject({ revoked_micros: 100_000_000, recovered_micros: 30_000_000 });
    expect(ctx.log.warn).toHaveBeenCalledWith(expect.stringMatching(/already been spent/), expect.objectContaining({ unrecovered_micros: 70_000_000 }));
    // Credits bought later are not taken for the old refund.
    ctx.accounts.set('a1', { ...ctx.accounts.get('a1')!, credits_micros: 5_000_000 });
    expect(await refund(ctx, 'evt_full_again', 10_000)).toMatchObject({ result: 'ignored', reason: 'already_reversed' });
    expect(credits(ctx)).toBe(5_000_000);
  });

  it('takes a lost dispute once per dispute, and no more than was paid together with refunds', async () => {
    const ctx = await bought();
    await refund(ctx, 'evt_r', 4_000);
    expect(credits(ctx)).toBe(60_000_000);
    const lost: LostDispute = { kind: 'dispute_lost', payment_ref: 'pi_1', reference: 'dp_1', amount_minor: 10_000, payment_amount_minor: null };
    expect(await ctx.service.handleEvent(disputeEvent('evt_d', lost))).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(0);
    expect(await ctx.service.handleEvent(disputeEvent('evt_d_copy', lost))).toMatchObject({ result: 'ignored', reason: 'already_reversed' });
    expect(ctx.store.payments.get('pi_1')!.purchase.reversal).toMatchObject({ revoked_micros: 100_000_000, disputes_lost: { dp_1: 10_000 } });
  });

  it('decides again when a charge spends the balance between the read and the write', async () => {
    const ctx = await bought();
    ctx.store.interfere = () => ctx.accounts.set('a1', { ...ctx.accounts.get('a1')!, credits_micros: 10_000_000 });
    const commitsBefore = ctx.store.commits;
    expect(await refund(ctx, 'evt_r', 5_000)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(ctx.store.commits - commitsBefore).toBe(2);
    expect(credits(ctx)).toBe(0);
    expect(ctx.store.payments.get('pi_1')!.purchase.reversal).toMatchObject({ revoked_micros: 50_000_000, recovered_micros: 10_000_000 });
  });

  it('applies the checkout first when its refund comes before it, and the checkout\'s own event then changes nothing', async () => {
    const { session } = packEvent() as Extract<PaymentEvent, { kind: 'checkout_completed' }>;
    const asked: string[] = [];
    const ctx = setup({ checkoutForPayment: async (ref) => (asked.push(ref), ref === 'pi_1' ? session : null) });
    expect(await refund(ctx, 'evt_early_refund', 2_500)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(asked).toEqual(['pi_1']);
    expect(credits(ctx)).toBe(75_000_000);
    expect(ctx.log.warn).toHaveBeenCalledWith(expect.stringMatching(/before its checkout was applied/), expect.objectContaining({ session: 'cs_1', account_id: 'a1' }));
    // The checkout's own event, delivered at last: one purchase per session, nothing credited twice.
    expect(await ctx.service.handleEvent(packEvent('evt_late_checkout'))).toEqual({ result: 'duplicate', account_id: 'a1' });
    expect(credits(ctx)).toBe(75_000_000);
    // A later refund finds the purchase without asking.
    expect(await refund(ctx, 'evt_second_refund', 5_000)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(50_000_000);
    expect(asked).toEqual(['pi_1']);
  });

  it('gives back the credits a refund took when the refund fails, once', async () => {
    const ctx = await bought();
    expect(await refund(ctx, 'evt_refunded', 6_000)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(40_000_000);
    // refund.failed: the total now (one of two refunds failed) is asked of the provider.
    expect(await refund(ctx, 'evt_refund_failed', 1_000, 'refund.failed')).toEqual({ result: 'applied', account_id: 'a1' });
    expect(credits(ctx)).toBe(90_000_000);
    expect(ctx.log.warn).toHaveBeenCalledWith(expect.stringMatching(/refund failed/), expect.objectContaining({ restore_micros: 50_000_000 }));
    expect(await refund(ctx, 'evt_refund_failed', 1_000, 'refund.failed')).toEqual({ result: 'duplicate' });
    // The charge.refunded event from before the failure, delivered late, takes nothing again.
    expect(await refund(ctx, 'evt_refunded_late', 1_000)).toMatchObject({ result: 'ignored', reason: 'already_reversed' });
    expect(credits(ctx)).toBe(90_000_000);
  });

  it('answers a refund without a payment provider as not configured, so that it is delivered again', async () => {
    const ctx = setup();
    await ctx.service.handleEvent(packEvent('evt_buy'));
    const bare = setup(null);
    bare.store.payments.set('pi_1', ctx.store.payments.get('pi_1')!);
    bare.accounts.set('a1', ctx.accounts.get('a1')!);
    await expect(bare.service.handleEvent(refundEvent('evt_r'))).rejects.toMatchObject({ code: 'PAYMENTS_NOT_CONFIGURED' });
    expect(bare.accounts.get('a1')!.credits_micros).toBe(100_000_000);
    // Also before its checkout was applied: settling it as "not a pack" would lose it once the checkout is credited.
    await expect(setup(null).service.handleEvent(refundEvent('evt_early'))).rejects.toMatchObject({ code: 'PAYMENTS_NOT_CONFIGURED' });
  });

  it('asks which checkout a payment paid, and ignores refunds of payments no pack checkout paid', async () => {
    const { session } = packEvent() as Extract<PaymentEvent, { kind: 'checkout_completed' }>;
    const checkouts: Record<string, typeof session> = {
      // A subscription's checkout (its first invoice's payment), and a pack checkout that names another payment.
      pi_sub: { ...session, id: 'cs_sub', mode: 'subscription', subscription_id: 'sub_1', payment_ref: 'pi_sub' },
      pi_other: { ...session, id: 'cs_other', payment_ref: 'pi_elsewhere' },
    };
    const asked: string[] = [];
    const ctx = setup({ checkoutForPayment: async (ref) => (asked.push(ref), checkouts[ref] ?? null) });
    for (const payment_ref of ['pi_invoice', 'pi_sub', 'pi_other']) {
      expect(await ctx.service.handleEvent(refundEvent(`evt_${payment_ref}`, { payment_ref }))).toEqual({ result: 'ignored', reason: 'not_a_credit_purchase' });
    }
    expect(asked).toEqual(['pi_invoice', 'pi_sub', 'pi_other']);
    expect(ctx.accounts.get('a1')).toMatchObject({ credits_micros: 0, plan_id: null });
  });

  it('ignores refunds of payments that bought no pack, and disputes that were not lost', async () => {
    const ctx = await bought();
    expect(await ctx.service.handleEvent(refundEvent('evt_sub_refund', { payment_ref: 'pi_invoice' }))).toEqual({ result: 'ignored', reason: 'not_a_credit_purchase' });
    expect(await ctx.service.handleEvent(refundEvent('evt_no_pi', { payment_ref: null }))).toEqual({ result: 'ignored', reason: 'not_a_credit_purchase' });
    const won: PaymentEvent = { id: 'evt_won', type: 'charge.dispute.closed', created: now.toISOString(), kind: 'dispute_settled', status: 'won' };
    expect(await ctx.service.handleEvent(won)).toEqual({ result: 'ignored', reason: 'dispute_not_lost' });
    expect(credits(ctx)).toBe(100_000_000);
  });
});

describe('SubscriptionService.handleEvent', () => {
  it('decides again on a fresh read when the account changed under it', async () => {
    const { service, store, accounts } = setup();
    store.interfere = () => accounts.set('a1', { ...accounts.get('a1')!, billing_version: 7, credits_micros: 5 });
    expect(await service.handleEvent(packEvent())).toEqual({ result: 'applied', account_id: 'a1' });
    expect(store.commits).toBe(2);
    expect(accounts.get('a1')).toMatchObject({ credits_micros: 100_000_005, status: 'active', plan_id: 'standard', stripe_customer_id: 'cus_1' });
  });

  it('reports an already applied event as a duplicate without calling the provider', async () => {
    const lineItems = jest.fn(async () => [{ price_id: 'price_pack_100_usd', quantity: 1 }]);
    const { service } = setup({ checkoutLineItems: lineItems });
    await service.handleEvent(packEvent('evt_dup'));
    expect(await service.handleEvent(packEvent('evt_dup'))).toEqual({ result: 'duplicate' });
    expect(lineItems).toHaveBeenCalledTimes(1);
  });

  it('ignores an event type it does not handle, naming the reason, without writing', async () => {
    const { service, store } = setup();
    expect(await service.handleEvent({ id: 'evt_o', type: 'customer.created', created: now.toISOString(), kind: 'other' } as PaymentEvent)).toEqual({ result: 'ignored', reason: 'event_type_not_handled' });
    expect(store.commits).toBe(0);
  });

  it('credits a checkout that needed no payment (a 100% discount), and waits for one still unpaid', async () => {
    const free = setup();
    const session = (packEvent() as Extract<PaymentEvent, { kind: 'checkout_completed' }>).session;
    expect(await free.service.handleEvent({ ...packEvent(), session: { ...session, payment_status: 'no_payment_required' } } as PaymentEvent)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(free.accounts.get('a1')!.credits_micros).toBe(100_000_000);
    const unpaid = setup();
    expect(await unpaid.service.handleEvent({ ...packEvent(), session: { ...session, payment_status: 'unpaid' } } as PaymentEvent)).toEqual({ result: 'ignored', reason: 'payment_pending', account_id: 'a1' });
    expect(unpaid.accounts.get('a1')!.credits_micros).toBe(0);
  });

  it('credits a pack even when its Stripe customer is mapped to another account, leaving the mapping alone', async () => {
    const { service, store, accounts } = setup();
    store.customers.set('cus_1', 'someone_else');
    expect(await service.handleEvent(packEvent())).toEqual({ result: 'applied', account_id: 'a1' });
    expect(accounts.get('a1')).toMatchObject({ credits_micros: 100_000_000, stripe_customer_id: null });
    expect(store.customers.get('cus_1')).toBe('someone_else');
  });

  it('needs the provider for a pack checkout (503 PAYMENTS_NOT_CONFIGURED, so Stripe retries)', async () => {
    const { service } = setup(null);
    await expect(service.handleEvent(packEvent())).rejects.toMatchObject({ code: 'PAYMENTS_NOT_CONFIGURED' });
  });
});

describe('SubscriptionService.applySubscription', () => {
  const subscription = (id: string, price_id: string) => liveSubscription({ id, price_id, item_id: `si_${id}` });

  it('keeps the live subscription when a second one is paid for, and logs it as an error for someone to refund', async () => {
    // Stripe says the stored one still runs: the second one is really a second one.
    const { service, accounts, log } = setup({ getSubscription: async (id) => subscription(id, 'price_s') });
    expect(await service.applySubscription('a1', subscription('sub_1', 'price_s'), { eventId: 'evt_1', paid: true })).toEqual({ result: 'applied', account_id: 'a1' });
    expect(log.error).not.toHaveBeenCalled();
    expect(await service.applySubscription('a1', subscription('sub_2', 'price_b'), { eventId: 'evt_2', paid: true })).toEqual({ result: 'ignored', reason: 'other_subscription', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ subscription_id: 'sub_1' });
    expect(log.error).toHaveBeenCalledWith(expect.stringMatching(/second live subscription/), expect.objectContaining({ kept: 'sub_1', ignored: 'sub_2' }));
  });
});

describe('SubscriptionService: a subscription checkout against late, older subscription events', () => {
  const live = liveSubscription({ account_ref: null });
  const checkout: PaymentEvent = {
    id: 'evt_checkout',
    type: 'checkout.session.completed',
    created: now.toISOString(),
    kind: 'checkout_completed',
    session: { id: 'cs_sub', mode: 'subscription', payment_status: 'paid', account_ref: 'a1', customer_id: 'cus_1', subscription_id: 'sub_1', payment_ref: null, amount_paid_minor: 2_000 },
  };

  it('ignores an update created before the checkout that arrives after it (it must not make the paid subscription past_due)', async () => {
    const { service, accounts } = setup({ getSubscription: async () => live });
    expect(await service.handleEvent(checkout)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ status: 'active', allowance_micros: 20_000_000 });
    // Stripe's update of the subscription while its first payment was under way, delivered late (a retried delivery).
    const older: PaymentEvent = {
      id: 'evt_old_update',
      type: 'customer.subscription.updated',
      created: new Date(now.getTime() - 5_000).toISOString(),
      kind: 'subscription_changed',
      subscription: { ...live, status: 'incomplete' },
    };
    expect(await service.handleEvent(older)).toEqual({ result: 'ignored', reason: 'stale_event', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ status: 'active', allowance_micros: 20_000_000 });
  });

  it('reads the subscription again for an update of the second before the checkout, and applies one of its own second', async () => {
    const update = (id: string, offsetMs: number, changes: Partial<typeof live>): PaymentEvent => ({
      id,
      type: 'customer.subscription.updated',
      created: new Date(now.getTime() + offsetMs).toISOString(),
      kind: 'subscription_changed',
      subscription: { ...live, ...changes },
    });
    const getSubscription = jest.fn(async () => live);
    const { service, accounts } = setup({ getSubscription });
    await service.handleEvent(checkout);
    expect(await service.handleEvent(update('evt_two_seconds_before', -2000, { status: 'incomplete' }))).toEqual({ result: 'ignored', reason: 'stale_event', account_id: 'a1' });
    // Stamped the second before: a tie with the time recorded, decided by a read of the subscription (Stripe's view now: active).
    expect(await service.handleEvent(update('evt_second_before', -1000, { status: 'incomplete' }))).toEqual({ result: 'applied', account_id: 'a1' });
    expect(getSubscription).toHaveBeenCalledTimes(2);
    expect(accounts.get('a1')!.subscription).toMatchObject({ status: 'active' });
    expect(await service.handleEvent(update('evt_same_second', 0, { cancel_at_period_end: true }))).toEqual({ result: 'applied', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ status: 'active', scheduled_change: { action: 'cancel' } });
  });

  it('ignores an update created over a minute before our own cancel that arrives after it (it would undo the scheduled cancel)', async () => {
    const cancelled = { ...live, cancel_at_period_end: true };
    const { service, accounts } = setup({ getSubscription: async () => live, cancelAtPeriodEnd: async () => cancelled });
    // Subscribed ten minutes ago; cancelled now; then an update made in between arrives.
    await service.handleEvent({ ...checkout, created: new Date(now.getTime() - 10 * 60_000).toISOString() });
    await service.cancel(accounts.get('a1')!);
    expect(accounts.get('a1')!.subscription).toMatchObject({ scheduled_change: { action: 'cancel' } });
    const older: PaymentEvent = {
      id: 'evt_before_cancel',
      type: 'customer.subscription.updated',
      created: new Date(now.getTime() - 5 * 60_000).toISOString(),
      kind: 'subscription_changed',
      subscription: { ...live },
    };
    expect(await service.handleEvent(older)).toEqual({ result: 'ignored', reason: 'stale_event', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ scheduled_change: { action: 'cancel' } });
  });

  it('ignores the creation event however it is stamped: it shows the subscription before the checkout paid it', async () => {
    const { service, accounts } = setup({ getSubscription: async () => live });
    await service.handleEvent(checkout);
    for (const [id, offsetMs] of [['evt_created_same_second', 0], ['evt_created_second_after', 1000]] as const) {
      const created: PaymentEvent = {
        id,
        type: 'customer.subscription.created',
        created: new Date(now.getTime() + offsetMs).toISOString(),
        kind: 'subscription_changed',
        subscription: { ...live, status: 'incomplete' },
      };
      expect(await service.handleEvent(created)).toEqual({ result: 'ignored', reason: 'stale_event', account_id: 'a1' });
      expect(accounts.get('a1')!.subscription).toMatchObject({ status: 'active', allowance_micros: 20_000_000 });
    }
  });

  it('still applies an update created after the checkout', async () => {
    const { service, accounts } = setup({ getSubscription: async () => live });
    await service.handleEvent(checkout);
    const later: PaymentEvent = {
      id: 'evt_new_update',
      type: 'customer.subscription.updated',
      created: new Date(now.getTime() + 5_000).toISOString(),
      kind: 'subscription_changed',
      subscription: { ...live, cancel_at_period_end: true },
    };
    expect(await service.handleEvent(later)).toEqual({ result: 'applied', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ status: 'active', scheduled_change: { action: 'cancel' } });
  });
});

describe('SubscriptionService: events that must never credit', () => {
  const items = (...list: { price_id: string | null; quantity: number }[]) => async () => list;

  it('ignores an event without an id (it could not be recorded as applied, so it could be applied again)', async () => {
    for (const id of ['', undefined, 42]) {
      const lineItems = jest.fn(items({ price_id: 'price_pack_100_usd', quantity: 1 }));
      const { service, store, accounts, log } = setup({ checkoutLineItems: lineItems });
      expect(await service.handleEvent({ ...packEvent(), id } as unknown as PaymentEvent)).toEqual({ result: 'ignored', reason: 'malformed_event' });
      expect(store.commits).toBe(0);
      expect(lineItems).not.toHaveBeenCalled();
      expect(accounts.get('a1')!.credits_micros).toBe(0);
      expect(log.error).toHaveBeenCalledWith(expect.stringMatching(/without an id/), expect.anything());
    }
  });

  it('refuses a pack checkout whose total passes 1,000,000 USD (no 500 loop, nothing credited, logged)', async () => {
    const { service, store, accounts, log } = setup({ checkoutLineItems: items({ price_id: 'price_pack_1500_usd', quantity: 6_004_799_503_160 }) });
    expect(await service.handleEvent(packEvent())).toEqual({ result: 'ignored', reason: 'amount_out_of_range', account_id: 'a1' });
    expect(store.commits).toBe(0);
    expect(accounts.get('a1')!.credits_micros).toBe(0);
    expect(log.error).toHaveBeenCalledWith(expect.stringMatching(/out of range/), expect.objectContaining({ session: 'cs_1' }));
  });

  it('refuses a total just above 1,000,000 USD and credits one of exactly 1,000,000 USD', async () => {
    const over = setup({ checkoutLineItems: items({ price_id: 'price_pack_1000_usd', quantity: 1000 }, { price_id: 'price_pack_10_usd', quantity: 1 }) });
    expect(await over.service.handleEvent(packEvent())).toMatchObject({ result: 'ignored', reason: 'amount_out_of_range' });
    const exact = setup({ checkoutLineItems: items({ price_id: 'price_pack_1000_usd', quantity: 1000 }) });
    expect(await exact.service.handleEvent(packEvent())).toEqual({ result: 'applied', account_id: 'a1' });
    expect(exact.accounts.get('a1')!.credits_micros).toBe(1_000_000_000_000);
  });

  it('logs a paid checkout of a price that is no configured pack as an error: money was taken and nothing credited', async () => {
    const stray = setup({ checkoutLineItems: items({ price_id: 'price_not_a_pack', quantity: 1 }) });
    expect(await stray.service.handleEvent(packEvent())).toEqual({ result: 'ignored', reason: 'no_credit_pack', account_id: 'a1' });
    expect(stray.log.error).toHaveBeenCalledWith(expect.stringContaining('STRIPE_PRICE_PACK_'), expect.objectContaining({ session: 'cs_1', account_id: 'a1', prices: ['price_not_a_pack'] }));
  });

  it('credits nothing for a line item of quantity 0', async () => {
    const only = setup({ checkoutLineItems: items({ price_id: 'price_pack_100_usd', quantity: 0 }) });
    expect(await only.service.handleEvent(packEvent())).toEqual({ result: 'ignored', reason: 'no_credit_pack', account_id: 'a1' });
    expect(only.accounts.get('a1')!.credits_micros).toBe(0);
    // Nothing was bought: worth a warning, not an operator's attention.
    expect(only.log.error).not.toHaveBeenCalled();
    expect(only.log.warn).toHaveBeenCalled();
    const mixed = setup({ checkoutLineItems: items({ price_id: 'price_pack_100_usd', quantity: 0 }, { price_id: 'price_pack_10_usd', quantity: 2 }) });
    expect(await mixed.service.handleEvent(packEvent())).toEqual({ result: 'applied', account_id: 'a1' });
    expect(mixed.accounts.get('a1')!.credits_micros).toBe(20_000_000);
  });

  it.each([[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY]])('ignores the whole checkout when a quantity is %p (never credits)', async (quantity) => {
    const { service, store, accounts, log } = setup({ checkoutLineItems: items({ price_id: 'price_pack_10_usd', quantity: 1 }, { price_id: 'price_pack_100_usd', quantity }) });
    expect(await service.handleEvent(packEvent())).toEqual({ result: 'ignored', reason: 'invalid_quantity', account_id: 'a1' });
    expect(store.commits).toBe(0);
    expect(accounts.get('a1')!.credits_micros).toBe(0);
    expect(log.error).toHaveBeenCalledWith(expect.stringMatching(/quantit/), expect.objectContaining({ session: 'cs_1' }));
  });
});

describe('SubscriptionService: subscription allowances from events', () => {
  const DAY = 86_400_000;
  const at = (days: number) => new Date(now.getTime() + days * DAY).toISOString();
  const sub1 = liveSubscription({ period_start: at(0), period_end: at(30) });
  const changed = (id: string, type: string, subscription: ProviderSubscription, offsetMs = 0): PaymentEvent => ({
    id,
    type,
    created: new Date(now.getTime() + offsetMs).toISOString(),
    kind: 'subscription_changed',
    subscription,
  });
  const paid = (id: string, billing_reason: string | null, period_start: string, period_end: string, price_id = 'price_s'): PaymentEvent => ({
    id,
    type: 'invoice.paid',
    created: now.toISOString(),
    kind: 'invoice_paid',
    invoice: { id: `in_${id}`, customer_id: 'cus_1', subscription_id: 'sub_1', billing_reason, period_start, period_end, price_id },
  });
  /** sub_1 made by its creation event (no allowance until its first invoice is paid). */
  async function created() {
    const ctx = setup({ getSubscription: async () => sub1 });
    expect(await ctx.service.handleEvent(changed('evt_created', 'customer.subscription.created', sub1))).toEqual({ result: 'applied', account_id: 'a1' });
    expect(ctx.accounts.get('a1')!.subscription).toMatchObject({ subscription_id: 'sub_1', allowance_micros: 0 });
    return ctx;
  }

  it.each([
    ['subscription_create', at(0), at(30)],
    ['subscription_cycle', at(30), at(60)],
    ['subscription', at(0), at(30)],
  ])('grants the period allowance when an invoice of billing reason %s is paid', async (reason, start, end) => {
    const { service, accounts } = await created();
    expect(await service.handleEvent(paid('evt_inv', reason, start, end))).toEqual({ result: 'applied', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ period_start: start, allowance_micros: 20_000_000, allowance_period_start: start });
  });

  // An upgrade's proration invoice pays from the change to the period's end: read as a period, it would look like a
  // renewal and reset the allowance (the upgrade adds the difference itself). Other invoices grant no period either.
  it.each([['subscription_update'], ['manual'], [null]])('grants nothing for a paid invoice of billing reason %p', async (reason) => {
    const { service, accounts } = await created();
    await service.handleEvent(paid('evt_first', 'subscription_create', at(0), at(30)));
    const spent = { ...accounts.get('a1')!.subscription!, allowance_micros: 5_000_000 };
    accounts.set('a1', { ...accounts.get('a1')!, subscription: spent });
    expect(await service.handleEvent(paid('evt_other', reason, at(10), at(30), 'price_b'))).toEqual({ result: 'ignored', reason: 'no_allowance_change' });
    expect(accounts.get('a1')!.subscription).toEqual(spent);
  });

  // A live subscription taking over from an ended one was paid for (its checkout and invoice were ignored meanwhile);
  // one whose collection is paused was not: it waits for an invoice to be paid.
  it.each([
    [false, { status: 'active', allowance_micros: 20_000_000 }],
    [true, { status: 'paused', allowance_micros: 0, scheduled_change: null }],
  ])('grants a subscription that takes over from an ended one its allowance unless its collection is paused (%p)', async (pause_collection, expected) => {
    const sub2: ProviderSubscription = { ...sub1, id: 'sub_2', item_id: 'si_2', period_start: at(1), period_end: at(31), pause_collection };
    const { service, accounts } = setup({ getSubscription: async (id) => (id === 'sub_2' ? sub2 : { ...sub1, status: 'canceled' }) });
    await service.handleEvent(changed('evt_1', 'customer.subscription.updated', sub1));
    expect(await service.handleEvent(changed('evt_2', 'customer.subscription.deleted', { ...sub1, status: 'canceled' }, 1000))).toMatchObject({ result: 'applied' });
    expect(await service.handleEvent(changed('evt_3', 'customer.subscription.updated', sub2, 2000))).toEqual({ result: 'applied', account_id: 'a1' });
    expect(accounts.get('a1')!.subscription).toMatchObject({ subscription_id: 'sub_2', ...expected });
  });
});

describe('SubscriptionService.resume', () => {
  const periodEnd = new Date(now.getTime() + 30 * 86_400_000).toISOString();
  const sub = liveSubscription({ period_end: periodEnd });

  it.each([
    ['a period-end cancel', { cancel_at_period_end: true, cancel_at: periodEnd }],
    ['a dated cancel', { cancel_at: new Date(now.getTime() + 10 * 86_400_000).toISOString() }],
    ['a collection pause', { pause_collection: true }],
    ['a dated cancel and a pause', { cancel_at: new Date(now.getTime() + 10 * 86_400_000).toISOString(), pause_collection: true }],
  ])('asks the provider to undo %s, naming what is pending', async (_, pending) => {
    const resume = jest.fn(async () => sub);
    const { service, accounts } = setup({ getSubscription: async () => sub, resume });
    await service.handleEvent({ id: 'evt_pending', type: 'customer.subscription.updated', created: now.toISOString(), kind: 'subscription_changed', subscription: { ...sub, ...pending } });
    await service.resume(accounts.get('a1')!);
    expect(resume).toHaveBeenCalledWith('sub_1', { cancel_at_period_end: false, cancel_at: null, pause_collection: false, ...pending });
    expect(accounts.get('a1')!.subscription).toMatchObject({ status: 'active', scheduled_change: null });
  });
});
