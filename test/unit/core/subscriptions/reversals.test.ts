import type { Purchase } from '../../../../functions/core/subscriptions/ports';
import { type SizedReversal, reversePurchase } from '../../../../functions/core/subscriptions/reversals';

const at = '2026-11-22T12:00:00.000Z';
const purchase = (p: Partial<Purchase> = {}): Purchase => ({
  purchase_id: 'checkout_cs_1',
  amount_micros: 100_000_000,
  source: 'stripe_checkout',
  reference: 'cs_1',
  created_at: at,
  payment_ref: 'pi_1',
  paid_minor: 10_000,
  ...p,
});
const refund = (refunded_minor: number, payment_amount_minor: number | null = 10_000): SizedReversal => ({ kind: 'refund', payment_ref: 'pi_1', reference: 'ch_1', refunded_minor, payment_amount_minor });

describe('reversePurchase', () => {
  it('takes back the share given back, rounded down (never more than was bought)', () => {
    expect(reversePurchase(purchase(), refund(3_333), 500_000_000, at)).toMatchObject({ debit_micros: 33_330_000, unrecovered_micros: 0 });
    // 1 USD pack paid 3 cents, 1 cent back: a third, floored to the micro.
    expect(reversePurchase(purchase({ amount_micros: 1_000_000, paid_minor: 3 }), refund(1, 3), 500_000_000, at)).toMatchObject({ debit_micros: 333_333 });
  });

  it('is exact past 2^53 (a purchase near the largest, refunded by an odd share)', () => {
    const big = purchase({ amount_micros: 999_999_999_997, paid_minor: 100_000_000 });
    // Floating point gives …998 here: the product is past 2^53.
    expect(Math.floor((999_999_999_997 * 66_666_667) / 100_000_000)).toBe(666_666_669_998);
    const decision = reversePurchase(big, refund(66_666_667, 100_000_000), 2_000_000_000_000, at);
    expect(decision).toMatchObject({ debit_micros: 666_666_669_997 });
  });

  it('takes the rest exactly on a full refund after partial ones', () => {
    const first = reversePurchase(purchase({ paid_minor: 3, amount_micros: 10_000_000 }), refund(1, 3), 100_000_000, at);
    if ('ignore' in first) throw new Error('expected a reversal');
    expect(first.debit_micros).toBe(3_333_333);
    const second = reversePurchase(purchase({ paid_minor: 3, amount_micros: 10_000_000, reversal: first.reversal }), refund(3, 3), 100_000_000, at);
    expect(second).toMatchObject({ debit_micros: 6_666_667, reversal: { revoked_micros: 10_000_000, version: 2 } });
  });

  it('debits only what the balance holds, also when the balance is negative or zero', () => {
    expect(reversePurchase(purchase(), refund(10_000), 40_000_000, at)).toMatchObject({ debit_micros: 40_000_000, unrecovered_micros: 60_000_000 });
    expect(reversePurchase(purchase(), refund(10_000), 0, at)).toMatchObject({ debit_micros: 0, unrecovered_micros: 100_000_000 });
    expect(reversePurchase(purchase(), refund(10_000), -5, at)).toMatchObject({ debit_micros: 0 });
  });

  it('uses the charge amount when the purchase did not record what was paid, and ignores a reversal it cannot size', () => {
    expect(reversePurchase(purchase({ paid_minor: null }), refund(5_000, 10_000), 500_000_000, at)).toMatchObject({ debit_micros: 50_000_000 });
    expect(reversePurchase(purchase({ paid_minor: null }), refund(5_000, null), 500_000_000, at)).toEqual({ ignore: 'payment_amount_unknown' });
    expect(reversePurchase(purchase({ paid_minor: 0 }), refund(0, 0), 500_000_000, at)).toEqual({ ignore: 'payment_amount_unknown' });
  });

  it('changes nothing for a refunded total it has already acted on', () => {
    const first = reversePurchase(purchase(), refund(2_500), 500_000_000, at);
    if ('ignore' in first) throw new Error('expected a reversal');
    expect(reversePurchase(purchase({ reversal: first.reversal }), refund(2_500), 500_000_000, at)).toEqual({ ignore: 'already_reversed' });
  });

  it('gives back what it took beyond the new share when the refunded total falls (a refund failed), and takes again if it rises', () => {
    const taken = reversePurchase(purchase(), refund(6_000), 500_000_000, at);
    if ('ignore' in taken) throw new Error('expected a reversal');
    expect(taken).toMatchObject({ debit_micros: 60_000_000, restore_micros: 0 });
    // One of the refunds (40.00 of the 60.00) failed: the total is 20.00 now, and 40 USD of credits go back.
    const failed = reversePurchase(purchase({ reversal: taken.reversal }), refund(2_000), 440_000_000, at);
    if ('ignore' in failed) throw new Error('expected a reversal');
    expect(failed).toMatchObject({ debit_micros: 0, restore_micros: 40_000_000, unrecovered_micros: 0, reversal: { refunded_minor: 2_000, revoked_micros: 20_000_000, recovered_micros: 20_000_000, version: 2 } });
    const again = reversePurchase(purchase({ reversal: failed.reversal }), refund(5_000), 480_000_000, at);
    expect(again).toMatchObject({ debit_micros: 30_000_000, restore_micros: 0, reversal: { revoked_micros: 50_000_000, recovered_micros: 50_000_000 } });
  });

  it('gives back only credits it took: a failed refund of credits spent before it restores what the balance gave up, no more', () => {
    // Full refund, 70 USD of the pack spent before it: 30 taken, 70 unrecovered.
    const taken = reversePurchase(purchase(), refund(10_000), 30_000_000, at);
    if ('ignore' in taken) throw new Error('expected a reversal');
    expect(taken).toMatchObject({ debit_micros: 30_000_000, unrecovered_micros: 70_000_000 });
    const allFailed = reversePurchase(purchase({ reversal: taken.reversal }), refund(0), 0, at);
    expect(allFailed).toMatchObject({ restore_micros: 30_000_000, reversal: { revoked_micros: 0, recovered_micros: 0 } });
    // Half of it failed: 50 is still revoked, and only 30 was ever taken, so nothing goes back.
    const halfFailed = reversePurchase(purchase({ reversal: taken.reversal }), refund(5_000), 0, at);
    expect(halfFailed).toMatchObject({ restore_micros: 0, debit_micros: 0, reversal: { revoked_micros: 50_000_000, recovered_micros: 30_000_000 } });
  });

  it('caps refunds and lost disputes together at what was paid', () => {
    const refunded = reversePurchase(purchase(), refund(8_000), 500_000_000, at);
    if ('ignore' in refunded) throw new Error('expected a reversal');
    const dispute: SizedReversal = { kind: 'dispute_lost', payment_ref: 'pi_1', reference: 'dp_1', amount_minor: 10_000, payment_amount_minor: null };
    expect(reversePurchase(purchase({ reversal: refunded.reversal }), dispute, 500_000_000, at)).toMatchObject({ debit_micros: 20_000_000, reversal: { revoked_micros: 100_000_000 } });
  });
});
