import { shownValue } from '../../../../functions/core/validation/shown';

describe('shownValue', () => {
  it('quotes a string with its control characters, lone surrogates and display controls escaped', () => {
    expect(shownValue('price_1')).toBe('"price_1"');
    expect(shownValue('a\u0000b\nc')).toBe('"a\\u0000b\\nc"');
    expect(shownValue('x\ud800y')).toBe('"x\\ud800y"');
    expect(shownValue('invoice\u202Elmth.exe')).toBe('"invoice\\u202elmth.exe"');
  });

  it('cuts long strings at a whole character', () => {
    expect(shownValue('y'.repeat(1_000_000))).toBe(`"${'y'.repeat(60)}…"`);
    expect(shownValue('😀'.repeat(10), 3)).toBe('"😀😀😀…"');
  });

  it('names values that are not strings by their kind', () => {
    expect([shownValue({}), shownValue([1]), shownValue(null), shownValue(undefined), shownValue(5), shownValue(true), shownValue(Infinity)]).toEqual(['an object', 'an array', 'null', 'nothing', '5', 'true', 'a number out of range']);
  });
});
