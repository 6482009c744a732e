import { runIsolated } from '../../../support/hang-guard';
import { z } from 'zod';
import { DEFAULT_FOOTER_TEMPLATE, DEFAULT_HEADER_TEMPLATE, HEADER_FOOTER_MARGIN_IN, LENGTH_PATTERN, PAPER_FORMATS, lengthToInches, parsePdfOptions, pdfOptionsSchema } from '../../../../functions/core/render/options';
import { refusal } from '../../../support/errors';


describe('pageRanges page numbers beyond what Chromium reads', () => {
  it('writes them as the largest it reads (pages past any end), and leaves others as they are', () => {
    expect(parsePdfOptions({ pageRanges: '99999999999999999999' }).pageRanges).toBe('4294967295');
    expect(parsePdfOptions({ pageRanges: '1-4294967296, 3' }).pageRanges).toBe('1-4294967295, 3');
    expect(parsePdfOptions({ pageRanges: ' 2-00000000000000000004 ' }).pageRanges).toBe('2-00000000000000000004');
    expect(parsePdfOptions({ pageRanges: '4294967295-' }).pageRanges).toBe('4294967295-');
  });
});

describe('parsePdfOptions', () => {
  it('applies the spec defaults: A4, printBackground true, scale 1, portrait, all pages', () => {
    const o = parsePdfOptions(undefined);
    expect(o).toMatchObject({ paperWidthIn: PAPER_FORMATS.a4.width, paperHeightIn: PAPER_FORMATS.a4.height, printBackground: true, scale: 1, landscape: false, preferCSSPageSize: false, pageRanges: '', displayHeaderFooter: false });
    expect(o.margin).toEqual({ top: 0, right: 0, bottom: 0, left: 0 });
  });

  it('reads formats case-insensitively', () => {
    expect(parsePdfOptions({ format: 'letter' }).paperWidthIn).toBe(8.5);
    expect(parsePdfOptions({ format: 'A3' }).paperHeightIn).toBeCloseTo(16.54, 2);
  });

  it('lets a set format win over width/height, and uses width/height with format null', () => {
    expect(parsePdfOptions({ width: '100mm', height: '50mm' }).paperWidthIn).toBeCloseTo(PAPER_FORMATS.a4.width);
    const custom = parsePdfOptions({ format: null, width: '100mm', height: '50mm' });
    expect(custom.paperWidthIn).toBeCloseTo(100 / 25.4);
    expect(custom.paperHeightIn).toBeCloseTo(50 / 25.4);
  });

  it('converts margin units', () => {
    const o = parsePdfOptions({ margin: { top: '1in', right: '2.54cm', bottom: '25.4mm', left: '96px' } });
    expect(o.margin.top).toBeCloseTo(1);
    expect(o.margin.right).toBeCloseTo(1);
    expect(o.margin.bottom).toBeCloseTo(1);
    expect(o.margin.left).toBeCloseTo(1);
  });

  it('prints the default date/title header and page-number footer, with room for them', () => {
    const o = parsePdfOptions({ displayHeaderFooter: true });
    expect(o.headerTemplate).toBe(DEFAULT_HEADER_TEMPLATE);
    expect(o.headerTemplate).toContain('class="date"');
    expect(o.headerTemplate).toContain('class="title"');
    expect(o.footerTemplate).toBe(DEFAULT_FOOTER_TEMPLATE);
    expect(o.margin.top).toBeCloseTo(HEADER_FOOTER_MARGIN_IN);
    // An empty element prints only the footer.
    expect(parsePdfOptions({ displayHeaderFooter: true, headerTemplate: '<span></span>' }).headerTemplate).toBe('<span></span>');
    // So does an empty string: Chromium would print its own band (the URL about:blank and the date) for it.
    expect(parsePdfOptions({ displayHeaderFooter: true, headerTemplate: '' }).headerTemplate).toBe('<span></span>');
    expect(parsePdfOptions({ displayHeaderFooter: true, footerTemplate: '  ' }).footerTemplate).toBe('<span></span>');
  });

  it('keeps a default margin on the sides the caller did not set', () => {
    const o = parsePdfOptions({ margin: { top: '0.5in' } }, { defaultMargin: { top: '1in', right: '1in', bottom: '1in', left: '1in' } });
    expect(o.margin).toEqual({ top: 0.5, right: 1, bottom: 1, left: 1 });
    expect(parsePdfOptions({ margin: {} }, { defaultMargin: { left: '1in' } }).margin.left).toBe(1);
  });

  it('takes the bounds themselves: scale 0.1 and 2, templates of 100,000 characters, pages 3-3, margins just under the paper', () => {
    expect(parsePdfOptions({ scale: 0.1 }).scale).toBe(0.1);
    expect(parsePdfOptions({ scale: 2 }).scale).toBe(2);
    expect(parsePdfOptions({ displayHeaderFooter: true, footerTemplate: 'x'.repeat(100_000) }).footerTemplate).toHaveLength(100_000);
    expect(parsePdfOptions({ pageRanges: '3-3' }).pageRanges).toBe('3-3');
    expect(parsePdfOptions({ format: null, width: '100mm', height: '100mm', margin: { left: '49mm', right: '50mm' } }).margin.left).toBeCloseTo(49 / 25.4);
    // Landscape A4 is 297 mm wide: side margins that would not fit the portrait width (210 mm) fit.
    expect(parsePdfOptions({ landscape: true, margin: { left: '150mm', right: '100mm' } }).margin.left).toBeCloseTo(150 / 25.4);
  });

  it('ignores keys it does not know', () => {
    expect(() => parsePdfOptions({ fit: 'cover', colour: 'blue' })).not.toThrow();
  });

  it.each([
    [{ scale: 3 }, 'options.scale'],
    [{ scale: 'big' }, 'options.scale'],
    [{ format: 'B7' }, 'options.format'],
    [{ margin: { top: 'ten' } }, 'options.margin.top'],
    [{ margin: { middle: '1cm' } }, 'options.margin'],
    // A negative margin means nothing on paper (a negative @page margin prints as 0).
    [{ margin: { left: '-1in' } }, 'options.margin.left'],
    [{ margin: { top: '-30mm' } }, 'options.margin.top'],
    [{ landscape: 'yes' }, 'options.landscape'],
    [{ printBackground: 1 }, 'options.printBackground'],
    [{ pageRanges: 'first' }, 'options.pageRanges'],
    [{ pageRanges: '5-3' }, 'options.pageRanges'],
    [{ pageRanges: '3-2' }, 'options.pageRanges'],
    [{ scale: 2.01 }, 'options.scale'],
    [{ scale: 0.09 }, 'options.scale'],
    [{ displayHeaderFooter: true, headerTemplate: 'x'.repeat(100_001) }, 'options.headerTemplate'],
    // Margins exactly as wide (or tall) as the paper leave no room either.
    [{ format: null, width: '100mm', height: '100mm', margin: { left: '50mm', right: '50mm' } }, 'options.margin'],
    [{ format: null, width: '100mm', height: '100mm', margin: { top: '60mm', bottom: '40mm' } }, 'options.margin'],
    // Landscape turns the paper: A4's long side is now its width, its short side the height.
    [{ landscape: true, margin: { top: '150mm', bottom: '60mm' } }, 'options.margin'],
    [{ pageRanges: '0-2' }, 'options.pageRanges'],
    [{ margin: { left: '150mm', right: '150mm' } }, 'options.margin'],
    // Names of the object's prototype are not paper formats (they printed Letter, or failed with a 500).
    [{ format: 'constructor' }, 'options.format'],
    [{ format: '__proto__', margin: { left: '12in' } }, 'options.format'],
    [{ format: 'toString' }, 'options.format'],
    // The side that is wrong is the one named.
    [{ format: null, width: '100mm', height: '0mm' }, 'options.height'],
    [{ format: null, width: 0, height: '100mm' }, 'options.width'],
    [{ format: null, width: '201in' }, 'options.width'],
    [{ format: null, height: 1e308 }, 'options.height'],
    // Lengths need their unit ("10" could be pixels, points or millimetres).
    [{ margin: { top: '10' } }, 'options.margin.top'],
    [{ margin: { left: 12 } }, 'options.margin.left'],
    [{ format: null, width: '800', height: '100mm' }, 'options.width'],
    // Chromium cannot print a band that links a stylesheet: the whole print failed.
    [{ displayHeaderFooter: true, headerTemplate: '<link rel="stylesheet" href="https://example.com/a.css"><span></span>' }, 'options.headerTemplate'],
    [{ displayHeaderFooter: true, footerTemplate: '<style>@import url(https://example.com/a.css);</style>' }, 'options.footerTemplate'],
    // Nor one whose @font-face loads from a URL (data: fonts, and images from URLs, print).
    [{ displayHeaderFooter: true, headerTemplate: '<style>@font-face{font-family:x;src:local(x), url( "https://example.com/f.woff")}</style><span></span>' }, 'options.headerTemplate'],
    // Written with CSS escapes or split by comments, as Chromium reads them.
    [{ displayHeaderFooter: true, headerTemplate: '<style>@\\69mport url(https://example.com/a.css);</style><span></span>' }, 'options.headerTemplate'],
    [{ displayHeaderFooter: true, headerTemplate: '<style>@\\000069 mport url(https://example.com/a.css);</style><span></span>' }, 'options.headerTemplate'],
    [{ displayHeaderFooter: true, footerTemplate: '<style>@\\import url(https://example.com/a.css);</style>' }, 'options.footerTemplate'],
    [{ displayHeaderFooter: true, footerTemplate: '<style>@font-face{font-family:X;src:\\75rl(https://example.com/f.woff)}</style>' }, 'options.footerTemplate'],
    [{ displayHeaderFooter: true, footerTemplate: '<style>@font-\\66 ace{font-family:X;src:/**/url(https://example.com/f.woff)}</style>' }, 'options.footerTemplate'],
    // In SVG a <style> element's text has its character references and CDATA sections decoded (the print failed: 500).
    [{ displayHeaderFooter: true, headerTemplate: '<svg><style>&#64;import url(https://example.com/a.css);</style></svg>' }, 'options.headerTemplate'],
    [{ displayHeaderFooter: true, headerTemplate: '<svg><style>&commat;im&#x70;ort url(https://example.com/a.css);</style></svg>' }, 'options.headerTemplate'],
    [{ displayHeaderFooter: true, footerTemplate: '<svg><style>@font-face{font-family:X;src:&#117;rl(https://example.com/f.woff)}</style></svg>' }, 'options.footerTemplate'],
    [{ displayHeaderFooter: true, footerTemplate: '<svg><style><![CDATA[@im]]><![CDATA[port url(https://example.com/a.css);]]></style></svg>' }, 'options.footerTemplate'],
  ])('refuses %j naming %s', (raw, parameter) => {
    const err = refusal(() => parsePdfOptions(raw));
    expect(err.code).toBe('INVALID_PARAMETER');
    expect(err.details.parameter).toBe(parameter);
  });

  it('takes templates with data: fonts, remote images, and a thousand unclosed @font-face rules read once', () => {
    for (const headerTemplate of [
      '<style>@font-face{font-family:x;src:url(data:font/woff2;base64,AAAA)}</style><span style="font-family:x">h</span>',
      '<img src="https://example.com/logo.png"><div style="background:url(https://example.com/a.png)">h</div>',
      '@font-face '.repeat(1000),
      // A comment between the letters makes two tokens, not @import; escapes elsewhere are only text.
      '<style>@im/**/port url(https://example.com/a.css);</style><span>\\75rl(x) \\</span>',
      // Text that shows a tag or a reference is only text.
      '<span>&lt;link rel=stylesheet&gt; &amp;#64;import &#169; 2026</span>',
      // An address whose domain starts with "import" is not the at-rule (CSS reads @import-direct as one name).
      '<div>Contact: orders@import-direct.com, sales@imports.example, büro@importé.example</div>',
    ]) {
      expect(parsePdfOptions({ displayHeaderFooter: true, headerTemplate }).headerTemplate).toBe(headerTemplate);
    }
  });

  it('takes null options, and a null value for any key but format, as the default (null means left out, as in every body)', () => {
    expect(parsePdfOptions(null)).toEqual(parsePdfOptions({}));
    const nulls = { margin: null, printBackground: null, scale: null, landscape: null, preferCSSPageSize: null, width: null, height: null, pageRanges: null, displayHeaderFooter: null, headerTemplate: null, footerTemplate: null };
    expect(parsePdfOptions(nulls)).toEqual(parsePdfOptions({}));
    expect(parsePdfOptions({ margin: { top: null, left: '1in' } }).margin).toEqual({ top: 0, right: 0, bottom: 0, left: 1 });
    // format: null asks for width/height (A4's when left out), as before.
    expect(parsePdfOptions({ format: null, width: '5in', height: null })).toMatchObject({ paperWidthIn: 5, paperHeightIn: PAPER_FORMATS.a4.height });
    expect(refusal(() => parsePdfOptions({ scale: 'big' })).details.parameter).toBe('options.scale');
  });

  it('reports the first field in schema order, then the checks that need several fields', () => {
    expect(refusal(() => parsePdfOptions({ pageRanges: 'x', scale: 9 })).details.parameter).toBe('options.scale');
    expect(refusal(() => parsePdfOptions({ margin: { left: '150mm', right: '150mm' }, pageRanges: 'x' })).details.parameter).toBe('options.pageRanges');
  });

  it('names parameters under the prefix it is given', () => {
    expect(refusal(() => parsePdfOptions({ scale: 9 }, { parameterPrefix: 'defaults' })).details.parameter).toBe('defaults.scale');
    expect(refusal(() => parsePdfOptions(5, { parameterPrefix: 'defaults' })).details.parameter).toBe('defaults');
  });

  it('describes every option for the OpenAPI document', () => {
    // Named (PdfOptions): request bodies reference it.
    const json = z.toJSONSchema(pdfOptionsSchema, { io: 'input', unrepresentable: 'any' }) as { $ref: string; $defs: Record<string, { properties: Record<string, { description?: string }> }> };
    expect(json.$ref).toBe('#/$defs/PdfOptions');
    const schema = json.$defs.PdfOptions;
    for (const [name, field] of Object.entries(schema.properties)) expect([name, typeof field.description]).toEqual([name, 'string']);
  });

  it('refuses options that are not an object', () => {
    expect(refusal(() => parsePdfOptions('A4')).details.parameter).toBe('options');
    expect(refusal(() => parsePdfOptions([1])).details.parameter).toBe('options');
  });

  it.each(['-0', '5-0', '0'])('says pages are numbered from 1 for a page 0 at either end (%j), not that the range runs backwards', (pageRanges) => {
    const err = refusal(() => parsePdfOptions({ pageRanges }));
    expect(err.details.parameter).toBe('options.pageRanges');
    expect(err.message).toMatch(/numbered from 1/);
  });

  it('accepts Chromium page-range syntax', () => {
    expect(parsePdfOptions({ pageRanges: '1-3, 5, 8-' }).pageRanges).toBe('1-3, 5, 8-');
    expect(parsePdfOptions({ pageRanges: ' -2 , 4 - 6,9 - ' }).pageRanges).toBe('-2 , 4 - 6,9 -');
    expect(parsePdfOptions({ pageRanges: '1\t-\t2\n,\r3\v,\f4' }).pageRanges).toBe('1\t-\t2\n,\r3\v,\f4');
    expect(parsePdfOptions({ pageRanges: '\ufeff1-2\u00a0' }).pageRanges).toBe('1-2');
  });

  it.each(['1\u00a0-2', '1\u3000-\u30002', '1,\u20282', '1-2,\u00a03', '- 3', '-\t3', '1, - 3'])('refuses blanks Chromium does not read (%j) before anything is printed', (pageRanges) => {
    // Chromium trims only ASCII blanks: it refused these after laying out the whole document, leaving a failed job.
    expect(refusal(() => parsePdfOptions({ pageRanges })).details.parameter).toBe('options.pageRanges');
  });

  it('reads hostile page ranges part by part, without backtracking over their spaces', () => {
    // One regex over the whole list took minutes on 30 KB of "1 ,1 ,…" followed by a bad part; run where a hang fails.
    const outcomes = runIsolated(`
      const { parsePdfOptions } = load('functions/core/render/options.ts');
      const attempt = (pageRanges) => { try { return { ranges: parsePdfOptions({ pageRanges }).pageRanges }; } catch (err) { return { refused: err.details && err.details.parameter }; } };
      console.log(JSON.stringify([attempt('1 ,'.repeat(100_000) + ' x'), attempt('1' + ' '.repeat(100_000) + 'x'), attempt('1 ,'.repeat(100_000) + ' 2')]));
    `) as { ranges?: string; refused?: string }[];
    expect(outcomes.slice(0, 2)).toEqual([{ refused: 'options.pageRanges' }, { refused: 'options.pageRanges' }]);
    expect(outcomes[2].ranges).toMatch(/ 2$/);
  });
});

describe('lengthToInches', () => {
  it('reads lengths with a unit, and refuses bare numbers but zero (the spec asks for a unit)', () => {
    expect(lengthToInches('96px')).toBe(1);
    expect(lengthToInches(' 2.54 CM ')).toBeCloseTo(1);
    expect(lengthToInches('25.4mm')).toBeCloseTo(1);
    expect([lengthToInches(0), lengthToInches('0'), lengthToInches('0.0')]).toEqual([0, 0, 0]);
    for (const bad of [96, '48', '10', '-1mm', '1pt', '', 'mm']) expect(lengthToInches(bad)).toBeNull();
  });
});

describe('LENGTH_PATTERN (the OpenAPI document\'s statement of a length)', () => {
  it('accepts exactly the strings lengthToInches reads', () => {
    const samples = [
      '10mm', '10 mm', ' 0.5in ', '.5IN', '1Cm', '20pX', '0', '00', '0.0', '.0', ' 0 ', '0mm', '1.25mm',
      '10', '1.5', '.5', '0.', '10pt', '10 m m', '-1mm', '+1mm', '1e2mm', '1,5mm', 'mm', '', ' ', '1mm1', '1..5mm', '\t2in\n',
    ];
    const pattern = new RegExp(LENGTH_PATTERN);
    for (const sample of samples) expect([sample, pattern.test(sample)]).toEqual([sample, lengthToInches(sample) !== null]);
  });
});
