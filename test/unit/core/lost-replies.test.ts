import { readBack, writtenAfterAll } from '../../../functions/core/lost-replies';

describe('reading back after a failed write', () => {
  const flaky = <T>(failures: number, value: T) => {
    let calls = 0;
    const read = jest.fn(async () => {
      if (++calls <= failures) throw new Error('throttled');
      return value;
    });
    return read;
  };

  it('tries the read three times in all, and gives what the first successful one read', async () => {
    const twice = flaky(2, 'stored');
    expect(await readBack(twice)).toBe('stored');
    expect(twice).toHaveBeenCalledTimes(3);
    const thrice = flaky(3, 'stored');
    expect(await readBack(thrice)).toBeUndefined();
    expect(thrice).toHaveBeenCalledTimes(3);
    const once = flaky(0, null);
    expect(await readBack(once)).toBeNull();
    expect(once).toHaveBeenCalledTimes(1);
  });

  it('counts a write as not written when it cannot be read back at all', async () => {
    expect(await writtenAfterAll(flaky(1, true))).toBe(true);
    expect(await writtenAfterAll(flaky(0, false))).toBe(false);
    expect(await writtenAfterAll(flaky(5, true))).toBe(false);
  });
});
