import { planCatalogue } from '../../../../functions/core/billing/plans';
import { bandMultiplier, maxOperationCharge, operationCharge } from '../../../../functions/core/pdf/pricing';

describe('PDF tools pricing', () => {
  it('multiplies the operation price by the page band', () => {
    expect([1, 50, 51, 250, 251, 1000, 1001, 5000].map(bandMultiplier)).toEqual([1, 1, 2, 2, 4, 4, 8, 8]);
    const standard = planCatalogue().find((p) => p.plan_id === 'standard')!;
    // A quarter of 0.01 USD when price_per_pdf_operation is unset.
    expect(operationCharge(standard, 12)).toBe(2_500);
    expect(operationCharge(standard, 300)).toBe(10_000);
    expect(maxOperationCharge(standard)).toBe(20_000);
    expect(operationCharge({ ...standard, price_per_pdf_operation_micros: 4_000 }, 60)).toBe(8_000);
    // Unset: a quarter of price_per_pdf, whatever that price is.
    expect(operationCharge({ ...standard, price_per_pdf_micros: 20_000, price_per_pdf_operation_micros: null }, 1001)).toBe(40_000);
  });
});
