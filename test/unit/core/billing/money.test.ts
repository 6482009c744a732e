import fc from 'fast-check';
import { microsToUsd, usdToMicros } from '../../../../functions/core/billing/money';

describe('money', () => {
  it('round-trips every cent amount exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (cents) => {
        const usd = cents / 100;
        expect(microsToUsd(usdToMicros(usd))).toBe(usd);
        expect(Number.isInteger(usdToMicros(usd))).toBe(true);
      }),
    );
  });

  it('prices a quarter operation exactly', () => {
    expect(usdToMicros(0.01) / 4).toBe(2500);
  });
});
