import { DynamoAccountRepository } from '../../../../functions/adapters/dynamodb/accounts';
import { DynamoBillingStateStore } from '../../../../functions/adapters/dynamodb/billing-state';
import { newAccount } from '../../../../functions/core/accounts/account';
import type { Purchase, PurchaseReversal } from '../../../../functions/core/subscriptions/ports';
import { withLocalTable } from '../../../support/local-table';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
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
