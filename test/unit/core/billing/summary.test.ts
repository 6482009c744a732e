import { type Account, newAccount } from '../../../../functions/core/accounts/account';
import { usdToMicros } from '../../../../functions/core/billing/money';
import { creditPacks } from '../../../../functions/core/billing/packs';
import { planCatalogue } from '../../../../functions/core/billing/plans';
import { billingSummary, creditsSummary } from '../../../../functions/core/billing/summary';

const now = new Date('2026-11-21T12:00:00Z');
const standard = planCatalogue()[0];

function account(periodEnd: string, status: 'active' | 'canceled' = 'active'): Account {
  return {
    ...newAccount({ account_id: 'a1', email: 'a@example.com', plan_id: 'standard', now, credits_micros: usdToMicros(7.77) }),
    subscription: {
      subscription_id: 'sub_1', customer_id: 'cus_1', status, name: 'Starter', price_id: 'price_s', price_micros: usdToMicros(20), monthly_pdfs: 2000,
      allowance_micros: usdToMicros(12.34), period_start: '2026-11-01T00:00:00.000Z', period_end: periodEnd, cancel_at_period_end: false, scheduled_change: null,
    },
  };
}

describe('a plan priced at 0 (an operator’s free plan)', () => {
  it('counts its PDFs as 0, a number, in every summary (dividing by the price gave null in JSON)', () => {
    const free = { ...standard, price_per_pdf_micros: 0 };
    const billing = billingSummary(account('2026-12-01T00:00:00.000Z'), free, now);
    const { credits, packs } = creditsSummary(account('2026-12-01T00:00:00.000Z'), free, now, creditPacks(), []);
    const counts = [billing.subscription_pdfs_remaining, billing.subscription!.pdfs_remaining, credits.subscription_pdfs_remaining, credits.pdfs_available, ...packs.map((p) => p.pdfs)];
    expect(counts).toEqual(counts.map(() => 0));
    expect(JSON.parse(JSON.stringify({ billing, credits }))).toMatchObject({ billing: { subscription_pdfs_remaining: 0 }, credits: { pdfs_available: 0 } });
  });
});

describe('billingSummary', () => {
  it('shows the usable allowance exactly, and PDFs as allowance ÷ price', () => {
    expect(billingSummary(account('2026-12-01T00:00:00.000Z'), standard, now)).toMatchObject({
      subscription_credits_remaining: 12.34,
      subscription_pdfs_remaining: 1234,
      credits_balance: 7.77,
      monthly_quota: 2000,
      subscription: expect.objectContaining({ active: true, credits_remaining: 12.34, pdfs_remaining: 1234 }),
    });
  });

  it('counts no allowance once the period ended, and leaves credits as they are', () => {
    expect(billingSummary(account('2026-11-21T11:59:59.000Z'), standard, now)).toMatchObject({
      subscription_credits_remaining: 0,
      subscription_pdfs_remaining: 0,
      credits_balance: 7.77,
      subscription: expect.objectContaining({ active: false, credits_remaining: 0, pdfs_remaining: 0 }),
    });
  });

  it('has every field of the spec, a pending account showing plan_id "pending" (a string) and its usage counters', () => {
    const pending = { ...newAccount({ account_id: 'a2', email: 'b@example.com', plan_id: null, now, free_credits_micros: 5_000 }), total_pdf_count: 3, total_amount_micros: 32_500 }; // two PDFs and a PDF operation: 0.0325 USD
    expect(billingSummary(pending, null, now)).toEqual({
      plan_id: 'pending',
      plan_type: 'pending',
      monthly_quota: null,
      credits_balance: 0,
      free_credits_remaining: 0.005,
      subscription_credits_remaining: 0,
      subscription_pdfs_remaining: 0,
      subscription: null,
      total_pdf_count: 3,
      total_amount: 0.0325,
      price_per_pdf: 0.01,
    });
  });

  it("prices PDFs at the account's plan", () => {
    const dearer = { ...standard, price_per_pdf_micros: usdToMicros(0.02) };
    expect(billingSummary(account('2026-12-01T00:00:00.000Z'), dearer, now)).toMatchObject({ price_per_pdf: 0.02, subscription_pdfs_remaining: 617 });
  });

  it('has no monthly quota once the subscription is cancelled', () => {
    expect(billingSummary(account('2026-12-01T00:00:00.000Z', 'canceled'), standard, now)).toMatchObject({ monthly_quota: null, subscription_credits_remaining: 0 });
  });
});

describe('creditsSummary', () => {
  it('adds the buckets and counts PDFs per bucket (one bucket covers a whole charge)', () => {
    const a = { ...account('2026-12-01T00:00:00.000Z'), free_credits_micros: 5_000 };
    const body = creditsSummary(a, standard, now, creditPacks({ 10: 'price_ten' }), []);
    expect(body.credits).toMatchObject({ total_available: 20.115, pdfs_available: 1234 + 0 + 777 });
    expect(body.packs[0]).toEqual({ price_id: 'price_ten', amount: 10, currency: 'USD', pdfs: 1000 });
    expect(body.packs[1].price_id).toBe('price_pack_100_usd');
  });

  it('lists the buckets in charging order (rule 1) and what refunds or disputes took back from each purchase', () => {
    const purchases = [
      { purchase_id: 'p1', amount_micros: usdToMicros(100), source: 'stripe', reference: 'cs_1', created_at: '2026-11-20T00:00:00.000Z', reversal: { revoked_micros: usdToMicros(40) } },
      { purchase_id: 'p2', amount_micros: usdToMicros(10), source: 'stripe', reference: 'cs_2', created_at: '2026-11-21T00:00:00.000Z' },
    ];
    const body = creditsSummary(account('2026-12-01T00:00:00.000Z'), standard, now, [], purchases);
    expect(body.credits.bucket_order).toEqual(['subscription', 'free_credits', 'credits']);
    expect(body.purchases).toEqual([
      { purchase_id: 'p1', amount: 100, source: 'stripe', reference: 'cs_1', created_at: '2026-11-20T00:00:00.000Z', revoked: 40 },
      { purchase_id: 'p2', amount: 10, source: 'stripe', reference: 'cs_2', created_at: '2026-11-21T00:00:00.000Z', revoked: 0 },
    ]);
  });

  it('counts no PDF for halves of a price in two buckets, though their sum is a whole price (no charge is split)', () => {
    const a = { ...account('2026-12-01T00:00:00.000Z'), subscription: null, free_credits_micros: 5_000, credits_micros: 5_000 };
    expect(creditsSummary(a, standard, now, [], []).credits).toMatchObject({ total_available: 0.01, pdfs_available: 0 });
  });
});
