import type { Micros } from '../billing/money';
import type { LostDispute, Purchase, PurchaseReversal, RefundChange } from './ports';

export type ReversalDecision =
  | { ignore: string }
  | {
      reversal: PurchaseReversal;
      /** Taken off the one-off balance now. */
      debit_micros: Micros;
      /** Given back to the one-off balance now: credits taken for refunds that have since failed. */
      restore_micros: Micros;
      /** Credits the reversal takes back that the balance no longer holds (spent before the money went back). */
      unrecovered_micros: Micros;
    };

/** A reversal whose amount is known: a refund with the charge's refunded total now, as the provider answers it. */
export type SizedReversal = (RefundChange & { refunded_minor: number }) | LostDispute;

const NO_REVERSAL: Omit<PurchaseReversal, 'updated_at'> = { refunded_minor: 0, disputes_lost: {}, revoked_micros: 0, recovered_micros: 0, version: 0 };

/**
 * What a refund or a lost dispute takes back from a credit-pack purchase: the purchase's credits in the share of its
 * payment given back (a half refund takes back half the credits; rounding down, so never more than was bought).
 * A refund carries the payment's refunded total now, so a report repeated or out of order changes nothing, and a
 * smaller total than before (a refund failed or was cancelled) gives back what was taken beyond the new share. A
 * dispute takes its amount once. Credits are taken only from the one-off balance and only as far as it goes (never
 * negative): what was already spent is reported as unrecovered, and is never given back either.
 */
export function reversePurchase(purchase: Purchase, event: SizedReversal, balanceMicros: Micros, at: string): ReversalDecision {
  const paid = purchase.paid_minor ?? event.payment_amount_minor;
  if (paid === null || paid === undefined || paid <= 0) return { ignore: 'payment_amount_unknown' };
  const prev = purchase.reversal ?? NO_REVERSAL;

  let refunded = prev.refunded_minor;
  let disputes = prev.disputes_lost;
  if (event.kind === 'refund') {
    if (event.refunded_minor === prev.refunded_minor) return { ignore: 'already_reversed' };
    refunded = event.refunded_minor;
  } else {
    if (Object.hasOwn(prev.disputes_lost, event.reference)) return { ignore: 'already_reversed' };
    disputes = { ...prev.disputes_lost, [event.reference]: event.amount_minor };
  }

  const givenBack = Math.min(paid, refunded + Object.values(disputes).reduce((sum, amount) => sum + amount, 0));
  // amount × share can pass 2^53 (1e12 micros × 1e8 cents): BigInt keeps the floor exact.
  const revoked = givenBack >= paid ? purchase.amount_micros : Number((BigInt(purchase.amount_micros) * BigInt(givenBack)) / BigInt(paid));
  const next = { refunded_minor: refunded, disputes_lost: disputes, revoked_micros: revoked, version: prev.version + 1, updated_at: at };
  if (revoked < prev.revoked_micros) {
    // Less is given back than before: what was taken beyond the new share goes back (what was spent was never taken).
    const restore = Math.max(0, prev.recovered_micros - revoked);
    return { reversal: { ...next, recovered_micros: prev.recovered_micros - restore }, debit_micros: 0, restore_micros: restore, unrecovered_micros: 0 };
  }
  const owed = revoked - prev.revoked_micros;
  const debit = Math.min(owed, Math.max(0, balanceMicros));
  return { reversal: { ...next, recovered_micros: prev.recovered_micros + debit }, debit_micros: debit, restore_micros: 0, unrecovered_micros: owed - debit };
}
