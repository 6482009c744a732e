import { normalisePdfOptions } from '../../../../functions/core/render/options';
import { MAX_VIEWPORT_PX, layoutViewport } from '../../../../functions/core/render/viewport';

describe('layoutViewport', () => {
  it("is one page's content box in CSS px: A4 without margins", () => {
    expect(layoutViewport(normalisePdfOptions({}))).toEqual({ width: 793, height: 1122 }); // 210 × 297 mm at 96 px/in, rounded down
  });

  it('leaves the margins out and follows landscape', () => {
    expect(layoutViewport(normalisePdfOptions({ margin: { left: '20mm', right: '20mm', top: '1in', bottom: '1in' } }))).toEqual({ width: 642, height: 930 });
    expect(layoutViewport(normalisePdfOptions({ format: 'Letter', landscape: true }))).toEqual({ width: 1056, height: 816 });
  });

  it('widens with a smaller scale (Chromium lays the page out at width / scale) and stops at MAX_VIEWPORT_PX', () => {
    expect(layoutViewport(normalisePdfOptions({ scale: 0.5 }))).toEqual({ width: 1587, height: 2245 });
    expect(layoutViewport(normalisePdfOptions({ scale: 0.1 }))).toEqual({ width: MAX_VIEWPORT_PX, height: MAX_VIEWPORT_PX });
  });

  it("takes the document's own @page size and margins where it has them (Chromium prints at them)", () => {
    const box = { size: 'A5', marginTop: '10mm', marginRight: '10mm', marginBottom: '10mm', marginLeft: '10mm' };
    expect(layoutViewport(normalisePdfOptions({}), box)).toEqual({ width: 483, height: 718 }); // (148 − 20) × (210 − 20) mm
    expect(layoutViewport(normalisePdfOptions({}), { size: '', marginTop: '', marginRight: '30mm', marginBottom: '', marginLeft: '30mm' })).toEqual({ width: 566, height: 1122 });
  });

  it('is at least one pixel on a page with almost no room', () => {
    expect(layoutViewport(normalisePdfOptions({ format: null, width: '1px', height: '1px', scale: 2 }))).toEqual({ width: 1, height: 1 });
  });
});
