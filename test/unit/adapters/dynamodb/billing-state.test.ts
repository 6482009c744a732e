import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { DynamoBillingStateStore } from '../../../../functions/adapters/dynamodb/billing-state';
import { newAccount } from '../../../../functions/core/accounts/account';
import type { Purchase, PurchaseReversal } from '../../../../functions/core/subscriptions/ports';
import { withLocalTable } from '../../../support/local-table';
import { cancelled, scriptedDynamo } from '../../../support/scripted-dynamo';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../../../functions/adapters/dynamodb/schema';

/** Against dynalite (through the local transaction shim): the conditions of a purchase's reversal as DynamoDB evaluates them. */
describe('DynamoBillingStateStore: purchases and their reversals', () => {
  const table = withLocalTable('billing', (db) => ({ db, store: new DynamoBillingStateStore(db), accounts: new DynamoAccountRepository(db) }));

  const at = new Date('2026-11-22T10:00:00Z');
  const reversal = (version: number, revoked: number, recovered: number): PurchaseReversal => ({
    refunded_minor: revoked / 10_000,
    disputes_lost: {},
    revoked_micros: revoked,
    recovered_micros: recovered,
    version,
    updated_at: at.toISOString(),
  });

  async function buy(accountId: string, paymentRef: string): Promise<Purchase> {
    await table.accounts.create(newAccount({ account_id: accountId, email: `${accountId}@example.com`, plan_id: 'standard', now: at }));
    const seen = (await table.accounts.get(accountId))!;
    const purchase: Purchase = { purchase_id: `checkout_cs_${accountId}`, amount_micros: 100_000_000, source: 'stripe_checkout', reference: `cs_${accountId}`, created_at: at.toISOString(), payment_ref: paymentRef, paid_minor: 10_000 };
    const next = { plan_id: seen.plan_id, status: seen.status, subscription: null, stripe_customer_id: null };
    expect(await table.store.commit({ seen, next, purchase, eventId: `evt_buy_${accountId}` }, at)).toBe('committed');
    return purchase;
  }

  it('finds a purchase by the payment it was paid with; a second purchase naming the same payment is a duplicate', async () => {
    const purchase = await buy('acct_p', 'pi_p');
    expect(await table.store.purchaseForPayment('pi_p')).toEqual({ account_id: 'acct_p', purchase: { ...purchase } });
    expect(await table.store.purchaseForPayment('pi_unknown')).toBeNull();
    const seen = (await table.accounts.get('acct_p'))!;
    const next = { plan_id: seen.plan_id, status: seen.status, subscription: null, stripe_customer_id: null };
    expect(await table.store.commit({ seen, next, purchase: { ...purchase, purchase_id: 'checkout_other' }, eventId: 'evt_other' }, at)).toBe('duplicate');
    expect((await table.accounts.get('acct_p'))!.credits_micros).toBe(100_000_000);
  });

  it('writes a reversal only over the one read, debits only what the balance covers, and applies an event once', async () => {
    const purchase = await buy('acct_r', 'pi_r');
    const first = { account_id: 'acct_r', seen: purchase, reversal: reversal(1, 40_000_000, 40_000_000), debit_micros: 40_000_000, restore_micros: 0, eventId: 'evt_r1' };
    expect(await table.store.reverse(first, at)).toBe('committed');
    expect((await table.accounts.get('acct_r'))!.credits_micros).toBe(60_000_000);
    expect(await table.store.reverse(first, at)).toBe('duplicate');
    // Another event decided on the purchase as it was before the first: its reversal is stale.
    expect(await table.store.reverse({ ...first, eventId: 'evt_r2' }, at)).toBe('conflict');

    const { purchase: current } = (await table.store.purchaseForPayment('pi_r'))!;
    expect(current.reversal).toEqual(first.reversal);
    // A debit the balance no longer covers (a charge spent it since the read) changes nothing.
    const overdraw = { account_id: 'acct_r', seen: current, reversal: reversal(2, 100_000_000, 100_000_000), debit_micros: 60_000_001, restore_micros: 0, eventId: 'evt_r3' };
    expect(await table.store.reverse(overdraw, at)).toBe('conflict');
    expect((await table.accounts.get('acct_r'))!.credits_micros).toBe(60_000_000);
    expect((await table.store.purchaseForPayment('pi_r'))!.purchase.reversal).toEqual(first.reversal);
    expect(await table.store.eventApplied('evt_r3')).toBe(false);

    expect(await table.store.reverse({ ...overdraw, debit_micros: 60_000_000 }, at)).toBe('committed');
    expect((await table.accounts.get('acct_r'))!.credits_micros).toBe(0);

    // The refund failed: what was taken goes back, with the reversal, once.
    const { purchase: refunded } = (await table.store.purchaseForPayment('pi_r'))!;
    const failed = { account_id: 'acct_r', seen: refunded, reversal: reversal(3, 0, 0), debit_micros: 0, restore_micros: 100_000_000, eventId: 'evt_r4' };
    expect(await table.store.reverse(failed, at)).toBe('committed');
    expect((await table.accounts.get('acct_r'))!.credits_micros).toBe(100_000_000);
    expect(await table.store.reverse(failed, at)).toBe('duplicate');
    expect(await table.store.reverse({ ...failed, eventId: 'evt_r5' }, at)).toBe('conflict');
    expect((await table.accounts.get('acct_r'))!.credits_micros).toBe(100_000_000);
  });

  it('writes a debit of the whole balance as read only while the balance is still that (a refund raised it meanwhile: decide again)', async () => {
    const purchase = await buy('acct_w', 'pi_w');
    const spentTo = { account_id: 'acct_w', seen: purchase, reversal: reversal(1, 100_000_000, 40_000_000), debit_micros: 40_000_000, restore_micros: 0, eventId: 'evt_w1', whole_balance_micros: 40_000_000 };
    // The balance read was 40 USD (60 spent); it is 100 USD now: taking 40 would leave credits the dispute owes.
    expect(await table.store.reverse(spentTo, at)).toBe('conflict');
    expect((await table.accounts.get('acct_w'))!.credits_micros).toBe(100_000_000);
    expect(await table.store.reverse({ ...spentTo, debit_micros: 100_000_000, whole_balance_micros: 100_000_000 }, at)).toBe('committed');
    expect((await table.accounts.get('acct_w'))!.credits_micros).toBe(0);
  });

  it('lists the newest purchases first also when they sort past the first 1 MB page of the query', async () => {
    // Purchase ids do not sort by time: the newest here sorts last, behind four items of ~300 KB.
    const note = 'x'.repeat(300_000);
    for (const [id, day] of [['a', 1], ['b', 2], ['c', 3], ['d', 4], ['z', 20]] as const) {
      const item = { ...keys.purchase('acct_pages', `checkout_${id}`), account_id: 'acct_pages', purchase_id: `checkout_${id}`, amount_micros: 1, source: 'stripe_checkout', reference: id, created_at: `2026-11-${String(day).padStart(2, '0')}T00:00:00.000Z`, note: id === 'z' ? '' : note };
      await table.db.doc.send(new PutCommand({ TableName: table.db.table, Item: item }));
    }
    expect((await table.store.purchases('acct_pages', 2)).map((p) => p.purchase_id)).toEqual(['checkout_z', 'checkout_d']);
  });
});

/** Against dynalite: the account-side guards of a billing change, which concurrent Stripe events race on. */
describe('DynamoBillingStateStore.commit: the account as it was read', () => {
  const table = withLocalTable('billing-guards', (db) => ({ db, store: new DynamoBillingStateStore(db), accounts: new DynamoAccountRepository(db) }));
  const at = new Date('2026-11-22T10:00:00Z');
  const nextOf = (seen: { plan_id: string | null; status: string }, planId: string, customer: string | null = null) =>
    ({ plan_id: planId, status: seen.status, subscription: null, stripe_customer_id: customer }) as never;

  it('writes only over the billing version it read, the first one (none yet) included', async () => {
    await table.accounts.create(newAccount({ account_id: 'acct_v', email: 'v@example.com', plan_id: 'standard', now: at }));
    const never = (await table.accounts.get('acct_v'))!;
    expect(await table.store.commit({ seen: never, next: nextOf(never, 'pro'), eventId: 'evt_v1' }, at)).toBe('committed');
    // A second event that read the account before any billing change: its decision is stale.
    expect(await table.store.commit({ seen: never, next: nextOf(never, 'starter'), eventId: 'evt_v2' }, at)).toBe('conflict');
    const first = (await table.accounts.get('acct_v'))!;
    expect(first).toMatchObject({ plan_id: 'pro', billing_version: 1 });
    expect(await table.store.commit({ seen: first, next: nextOf(first, 'business'), eventId: 'evt_v3' }, at)).toBe('committed');
    expect(await table.store.commit({ seen: first, next: nextOf(first, 'starter'), eventId: 'evt_v4' }, at)).toBe('conflict');
    expect(await table.accounts.get('acct_v')).toMatchObject({ plan_id: 'business', billing_version: 2 });
    expect(await table.store.eventApplied('evt_v2')).toBe(false);
    expect(await table.store.eventApplied('evt_v4')).toBe(false);
  });

  it('links a Stripe customer to one account only; linking it again to the same account is fine', async () => {
    for (const id of ['acct_c1', 'acct_c2']) await table.accounts.create(newAccount({ account_id: id, email: `${id}@example.com`, plan_id: 'standard', now: at }));
    const one = (await table.accounts.get('acct_c1'))!;
    expect(await table.store.commit({ seen: one, next: nextOf(one, 'pro', 'cus_shared'), linkCustomer: 'cus_shared', eventId: 'evt_c1' }, at)).toBe('committed');
    const two = (await table.accounts.get('acct_c2'))!;
    expect(await table.store.commit({ seen: two, next: nextOf(two, 'pro', 'cus_shared'), linkCustomer: 'cus_shared', eventId: 'evt_c2' }, at)).toBe('customer_conflict');
    expect(await table.store.accountForCustomer('cus_shared')).toBe('acct_c1');
    expect(await table.accounts.get('acct_c2')).toMatchObject({ plan_id: 'standard', stripe_customer_id: null });
    const again = (await table.accounts.get('acct_c1'))!;
    expect(await table.store.commit({ seen: again, next: nextOf(again, 'business', 'cus_shared'), linkCustomer: 'cus_shared', eventId: 'evt_c3' }, at)).toBe('committed');
  });

  it("keeps an applied event's marker for 60 days (the table's TTL attribute), far beyond Stripe's retries", async () => {
    await table.accounts.create(newAccount({ account_id: 'acct_t', email: 't@example.com', plan_id: 'standard', now: at }));
    const seen = (await table.accounts.get('acct_t'))!;
    expect(await table.store.commit({ seen, next: nextOf(seen, 'pro'), eventId: 'evt_ttl' }, at)).toBe('committed');
    const { Item } = await table.db.doc.send(new GetCommand({ TableName: table.db.table, Key: keys.stripeEvent('evt_ttl') }));
    expect(Item?.ttl).toBe(at.getTime() / 1000 + 60 * 86_400);
  });
});

/** DynamoDB's answer under lasting contention, which the local emulator (it serialises writes) never gives. */
describe('DynamoBillingStateStore.commit under a conflict that outlasts the retries', () => {
  it('answers conflict (decide again), never duplicate: the event was not applied', async () => {
    const { db } = scriptedDynamo([cancelled(['TransactionConflict', 'None'])]);
    const seen = newAccount({ account_id: 'acct_x', email: 'x@example.com', plan_id: 'standard', now: new Date('2026-11-22T10:00:00Z') });
    const next = { plan_id: 'pro', status: seen.status, subscription: null, stripe_customer_id: null } as never;
    expect(await new DynamoBillingStateStore(db).commit({ seen, next, eventId: 'evt_x' }, new Date('2026-11-22T10:00:00Z'))).toBe('conflict');
  });
});
