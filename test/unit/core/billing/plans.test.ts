import { usdToMicros } from '../../../../functions/core/billing/money';
import { operationPriceMicros, planCatalogue, presentPlan } from '../../../../functions/core/billing/plans';

describe('planCatalogue (charging rule 6)', () => {
  it('offers Standard pay-as-you-go, Starter at 20 USD for 2,000 PDFs and Business at 100 USD for 10,000, each PDF 0.01 USD', () => {
    expect(planCatalogue().map((p) => [p.plan_id, p.plan_type, p.monthly_price_micros, p.monthly_quota, p.price_per_pdf_micros])).toEqual([
      ['standard', 'pay_as_you_go', null, null, usdToMicros(0.01)],
      ['starter', 'subscription', usdToMicros(20), 2_000, usdToMicros(0.01)],
      ['business', 'subscription', usdToMicros(100), 10_000, usdToMicros(0.01)],
    ]);
  });
});

describe('operationPriceMicros', () => {
  it('is a quarter of the PDF price unless the plan sets its own', () => {
    const standard = planCatalogue()[0];
    expect(operationPriceMicros(standard)).toBe(2_500);
    expect(presentPlan(standard).price_per_pdf_operation).toBe(0.0025);
    expect(operationPriceMicros({ ...standard, price_per_pdf_micros: 30_000 })).toBe(7_500);
    expect(operationPriceMicros({ ...standard, price_per_pdf_operation_micros: 4_000 })).toBe(4_000);
  });
});
