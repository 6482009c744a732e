import { parsePdfOptions, pageSpans } from '../../../../functions/core/render/options';
import { pageCountFacts, pageWindow } from '../../../../functions/core/render/page-window';

const window = (pageRanges: string, maxPages?: number) => pageWindow({ options: parsePdfOptions({ pageRanges }), maxPages });

describe('pageSpans', () => {
  it('reads ranges as Chromium prints them: ascending, merged, open ends', () => {
    expect(pageSpans('3, 1')).toEqual([
      [1, 1],
      [3, 3],
    ]);
    expect(pageSpans('2-4, 3-5, 6')).toEqual([[2, 6]]);
    expect(pageSpans('8-, -2')).toEqual([
      [1, 2],
      [8, Infinity],
    ]);
    expect(pageSpans('5-3')).toBeNull();
    expect(pageSpans('first')).toBeNull();
  });
});

describe('pageWindow', () => {
  it('prints everything when the caller sets no limit', () => {
    expect(window('')).toBe('');
    expect(window('2-900')).toBe('2-900');
  });

  it('cuts the whole document after maxPages + 1 pages', () => {
    expect(window('', 25)).toBe('1-26');
  });

  it('never cuts an open range past the largest page number Chromium reads', () => {
    expect(window('4294967290-', 100)).toBe('4294967290-4294967295');
    expect(window('4294967295-', 25)).toBe('4294967295');
    // Page numbers past it are written as it (the caller's "past the end"), then cut the same way.
    expect(window('99999999999-', 25)).toBe('4294967295');
  });

  it('keeps a selection that fits, as sent', () => {
    expect(window('1-3, 5', 25)).toBe('1-3, 5');
    expect(window('2-27', 25)).toBe('2-27');
    expect(window('7, 1-26', 25)).toBe('7, 1-26'); // 26 distinct pages: 7 lies inside 1-26
  });

  it('cuts a larger selection after its first maxPages + 1 pages, in print order', () => {
    expect(window('1-10000', 100)).toBe('1-101');
    expect(window('50-, 1-10', 25)).toBe('1-10, 50-65');
    expect(window('30, 1-25, 40-', 25)).toBe('1-25, 30');
  });
});

describe('pageCountFacts', () => {
  it('says the exact count, or "more than" when printing stopped early', () => {
    expect(pageCountFacts({ pages: 30 }, 100)).toEqual({ text: '30 pages', details: { pages: 30 } });
    expect(pageCountFacts({ pages: 101, morePages: true }, 100)).toEqual({ text: 'more than 100 pages', details: { pages_at_least: 101 } });
  });
});
