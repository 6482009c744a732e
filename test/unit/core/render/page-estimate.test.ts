import { parsePdfOptions } from '../../../../functions/core/render/options';
import {
  cssPrintArea,
  estimateRefusalPages,
  estimatedPages,
  farBeyondLimit,
  optionsPrintArea,
  worthEstimating,
} from '../../../../functions/core/render/page-estimate';

const noCss = { size: '', marginTop: '', marginRight: '', marginBottom: '', marginLeft: '' };
const a4 = parsePdfOptions({});

describe('estimateRefusalPages', () => {
  it('is far beyond the limit: 1000 pages, or ten times a larger limit', () => {
    expect(estimateRefusalPages(25)).toBe(1000);
    expect(estimateRefusalPages(100)).toBe(1000);
    expect(estimateRefusalPages(500)).toBe(5000);
  });
});

describe('optionsPrintArea', () => {
  it('is the paper less the margins, in CSS px, divided by the scale', () => {
    expect(optionsPrintArea(a4).width).toBeCloseTo(8.2677 * 96, 1);
    const letter = optionsPrintArea(parsePdfOptions({ format: 'Letter', margin: { left: '1in', right: '0.5in', top: '1in', bottom: '1in' }, scale: 0.5 }));
    expect(letter.width).toBeCloseTo(((8.5 - 1.5) * 96) / 0.5, 6);
    expect(letter.height).toBeCloseTo(((11 - 2) * 96) / 0.5, 6);
  });

  it('turns the paper for landscape', () => {
    const area = optionsPrintArea(parsePdfOptions({ format: 'Letter', landscape: true }));
    expect(area).toEqual({ width: 11 * 96, height: 8.5 * 96 });
  });
});

describe('cssPrintArea', () => {
  it('uses the request when @page sets nothing it can read', () => {
    expect(cssPrintArea(noCss, a4)).toEqual(optionsPrintArea(a4));
    expect(cssPrintArea({ ...noCss, size: 'auto', marginTop: 'calc(1px + 2px)' }, a4)).toEqual(optionsPrintArea(a4));
  });

  it('reads lengths in every absolute unit, one length meaning a square page', () => {
    expect(cssPrintArea({ ...noCss, size: '10px 20px' }, a4)).toEqual({ width: 10, height: 20 });
    expect(cssPrintArea({ ...noCss, size: '1in' }, a4)).toEqual({ width: 96, height: 96 });
    expect(cssPrintArea({ ...noCss, size: '72pt 2.54cm' }, a4)).toEqual({ width: 96, height: 96 });
  });

  it('reads page-size keywords and orientation', () => {
    const a5 = cssPrintArea({ ...noCss, size: 'A5' }, a4);
    expect(a5.width).toBeCloseTo((148 * 96) / 25.4, 6);
    expect(a5.height).toBeCloseTo((210 * 96) / 25.4, 6);
    const a5Landscape = cssPrintArea({ ...noCss, size: 'landscape a5' }, a4);
    expect(a5Landscape.width).toBeCloseTo(a5.height, 6);
    // Orientation alone turns the request's paper.
    const turned = cssPrintArea({ ...noCss, size: 'landscape' }, a4);
    expect(turned.width).toBeCloseTo(11.6929 * 96, 3);
  });

  it('takes the margins @page sets and the request the others, percentages of the page', () => {
    const options = parsePdfOptions({ margin: { top: '1in', bottom: '1in', left: '1in', right: '1in' } });
    const area = cssPrintArea({ ...noCss, size: '1000px 2000px', marginLeft: '10%', marginTop: '100px' }, options);
    expect(area).toEqual({ width: 1000 - 100 - 96, height: 2000 - 100 - 96 });
  });

  it('takes a negative @page margin as 0, as the renderer prints it', () => {
    const options = parsePdfOptions({ margin: { top: '1in', bottom: '1in', left: '1in', right: '1in' } });
    const area = cssPrintArea({ size: '1000px 2000px', marginTop: '-1in', marginRight: '-30mm', marginBottom: '-5%', marginLeft: '10px' }, options);
    expect(area).toEqual({ width: 1000 - 10, height: 2000 });
  });

  it('keeps at least a pixel, and applies the scale', () => {
    expect(cssPrintArea({ ...noCss, size: '100px', marginLeft: '60px', marginRight: '60px' }, a4)).toEqual({ width: 1, height: 100 });
    expect(cssPrintArea({ ...noCss, size: '100px' }, parsePdfOptions({ scale: 0.5 }))).toEqual({ width: 200, height: 200 });
  });
});

describe('worthEstimating', () => {
  const facts = { elements: 50, scrollHeight: 2000, viewportWidth: 800, pageBox: null };

  it('skips an ordinary document', () => {
    expect(worthEstimating(facts, a4, 100)).toBe(false);
  });

  it('estimates documents that could be far too long', () => {
    // @page rules making the pages small; @page rules as such do not matter.
    expect(worthEstimating({ ...facts, pageBox: { ...noCss, size: '10px' } }, a4, 100)).toBe(true);
    expect(worthEstimating({ ...facts, pageBox: { ...noCss, size: 'A4', marginTop: '20mm' } }, a4, 100)).toBe(false);
    expect(worthEstimating({ ...facts, elements: 999 }, a4, 100)).toBe(true);
    // 300 A4 pages of screen layout.
    expect(worthEstimating({ ...facts, scrollHeight: 300 * 1123 }, a4, 100)).toBe(true);
    // Tiny paper: the text reflows far taller than on screen.
    expect(worthEstimating(facts, parsePdfOptions({ format: null, width: '10px', height: '10px' }), 100)).toBe(true);
  });
});

describe('estimatedPages', () => {
  it('is the height over the page height, or the forced breaks, whichever is more', () => {
    const area = { width: 800, height: 100 };
    expect(estimatedPages({ scrollHeight: 1000, viewportWidth: 800, forcedBreaks: 0 }, area)).toBe(10);
    expect(estimatedPages({ scrollHeight: 1001, viewportWidth: 800, forcedBreaks: 0 }, area)).toBe(11);
    expect(estimatedPages({ scrollHeight: 50, viewportWidth: 800, forcedBreaks: 30 }, area)).toBe(31);
    expect(estimatedPages({ scrollHeight: 0, viewportWidth: 800, forcedBreaks: 0 }, area)).toBe(1);
  });

  it('reflows a layout wider than the page to the page width, keeping its area', () => {
    expect(estimatedPages({ scrollHeight: 1000, viewportWidth: 800, forcedBreaks: 0 }, { width: 200, height: 100 })).toBe(40);
    // Narrower than the page: not shortened.
    expect(estimatedPages({ scrollHeight: 1000, viewportWidth: 400, forcedBreaks: 0 }, { width: 800, height: 100 })).toBe(10);
  });
});

describe('farBeyondLimit', () => {
  const request = (pageRanges = '') => ({ options: parsePdfOptions({ pageRanges }), maxPages: 100 });

  it('refuses from the refusal point on, never below it', () => {
    expect(farBeyondLimit(999, request())).toBe(false);
    expect(farBeyondLimit(1000, request())).toBe(true);
    expect(farBeyondLimit(1_000_000, { options: a4 })).toBe(false);
  });

  it('counts the pages a selection takes of the estimated document', () => {
    expect(farBeyondLimit(5000, request('1-500'))).toBe(true);
    expect(farBeyondLimit(5000, request('1-95, 4990-5050'))).toBe(true);
    // Only 50 of the selected pages exist by the estimate: printing decides (a page range beyond the end is the caller's mistake).
    expect(farBeyondLimit(5000, request('4951-9000'))).toBe(false);
  });
});
