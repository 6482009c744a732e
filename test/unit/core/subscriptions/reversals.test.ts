import type { PaymentReversal, Purchase } from '../../../../functions/core/subscriptions/ports';
import { reversePurchase } from '../../../../functions/core/subscriptions/reversals';

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
const refund = (amount_minor: number, payment_amount_minor: number | null = 10_000): PaymentReversal => ({ kind: 'refund', payment_ref: 'pi_1', reference: 'ch_1', amount_minor, payment_amount_minor });

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

  it('caps refunds and lost disputes together at what was paid', () => {
    const refunded = reversePurchase(purchase(), refund(8_000), 500_000_000, at);
    if ('ignore' in refunded) throw new Error('expected a reversal');
    const dispute: PaymentReversal = { kind: 'dispute_lost', payment_ref: 'pi_1', reference: 'dp_1', amount_minor: 10_000, payment_amount_minor: null };
    expect(reversePurchase(purchase({ reversal: refunded.reversal }), dispute, 500_000_000, at)).toMatchObject({ debit_micros: 20_000_000, reversal: { revoked_micros: 100_000_000 } });
  });
});
