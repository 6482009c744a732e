import { mapBounded } from '../../../functions/core/concurrency';

describe('mapBounded', () => {
  it('keeps at most `limit` calls in flight and the results in the items’ order', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapBounded([30, 5, 20, 1, 10, 2], 2, async (ms, i) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, ms));
      inFlight--;
      return `${i}:${ms}`;
    });
    expect(out).toEqual(['0:30', '1:5', '2:20', '3:1', '4:10', '5:2']);
    expect(most).toBe(2);
  });

  it('handles no items and rejects with the first failure', async () => {
    expect(await mapBounded([], 4, async () => 1)).toEqual([]);
    await expect(mapBounded([1, 2, 3], 2, async (n) => (n === 2 ? Promise.reject(new Error('two')) : n))).rejects.toThrow('two');
  });
});
