import { creditPacks } from '../../../../functions/core/billing/packs';

describe('creditPacks (charging rule 6)', () => {
  it('offers packs of 10, 100, 300, 700, 1000 and 1500 USD, each with its configured price id or the local fallback', () => {
    expect(creditPacks({ 1500: 'price_live_1500' }).map((p) => [p.amount_usd, p.amount_micros, p.price_id])).toEqual([
      [10, 10_000_000, 'price_pack_10_usd'],
      [100, 100_000_000, 'price_pack_100_usd'],
      [300, 300_000_000, 'price_pack_300_usd'],
      [700, 700_000_000, 'price_pack_700_usd'],
      [1000, 1_000_000_000, 'price_pack_1000_usd'],
      [1500, 1_500_000_000, 'price_live_1500'],
    ]);
  });
});
