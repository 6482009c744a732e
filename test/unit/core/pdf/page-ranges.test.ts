import fc from 'fast-check';
import { ServiceError } from '../../../../functions/core/errors';
import { MAX_RANGE_PARTS, countSelected, formatPages, parsePageRange, resolvePageRange } from '../../../../functions/core/pdf/page-ranges';
import { refusal } from '../../../support/errors';


const part = fc.oneof(
  fc.integer({ min: 1, max: 400 }).map((n) => ({ text: String(n), from: n, to: n as number | 'end' })),
  fc.tuple(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 50 })).map(([a, d]) => ({ text: `${a}-${a + d}`, from: a, to: (a + d) as number | 'end' })),
  fc.integer({ min: 1, max: 400 }).map((n) => ({ text: `${n}-end`, from: n, to: 'end' as number | 'end' })),
);

describe('page ranges', () => {
  it('parses every well-formed range into its parts, in written order (spaces allowed)', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 30 }), fc.constantFrom(',', ', ', ' , '), (parts, sep) => {
        const parsed = parsePageRange(parts.map((p) => p.text).join(sep));
        expect(parsed.parts).toEqual(parts.map(({ from, to }) => ({ from, to })));
      }),
    );
  });

  it('resolves to pages inside the document, in order, with repeats, counted without expanding', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 500 }), (parts, total) => {
        const range = parsePageRange(parts.map((p) => p.text).join(','));
        const last = Math.max(...parts.map((p) => (p.to === 'end' ? Math.max(p.from, total) : p.to)));
        if (last > total) {
          const err = refusal(() => resolvePageRange(range, total));
          expect(err.code).toBe('PAGE_OUT_OF_RANGE');
          expect(err.details.total_pages).toBe(total);
          return;
        }
        const pages = resolvePageRange(range, total);
        expect(pages.length).toBe(countSelected(range, total));
        expect(pages.every((p) => p >= 1 && p <= total)).toBe(true);
        const expected = parts.flatMap((p) => {
          const to = p.to === 'end' ? total : p.to;
          return Array.from({ length: to - p.from + 1 }, (_, i) => p.from + i);
        });
        expect(pages).toEqual(expected);
      }),
    );
  });

  it('formats any page list so that it parses back to the same pages', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 200 }), (pages) => {
        const text = formatPages(pages);
        expect(resolvePageRange(parsePageRange(text), 300)).toEqual(pages);
      }),
    );
    expect(formatPages([1, 2, 3, 5, 5, 4])).toBe('1-3,5,5,4');
  });

  it('answers any other text with INVALID_PAGE_RANGE or a valid parse, never anything else', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        try {
          parsePageRange(text);
        } catch (err) {
          expect(err).toBeInstanceOf(ServiceError);
          expect((err as ServiceError).code).toBe('INVALID_PAGE_RANGE');
          expect(typeof (err as ServiceError).details.token).toBe('string');
        }
      }),
    );
  });

  it.each([
    ['0', '0'],
    ['1,0-3', '0-3'],
    ['-2', '-2'],
    ['3,-1-4', '-1-4'],
    ['1.5', '1.5'],
    ['2-3.0', '2-3.0'],
    ['1,,3', ''],
    [',1', ''],
    ['1,', ''],
    ['', ''],
    ['5-3', '5-3'],
    ['1-2-3', '1-2-3'],
    ['3-', '3-'],
    ['end', 'end'],
    ['a-b', 'a-b'],
    ['1e3', '1e3'],
    ['+4', '+4'],
  ])('refuses %j naming the part %j', (text, token) => {
    const err = refusal(() => parsePageRange(text, { parameter: 'pages' }));
    expect(err.code).toBe('INVALID_PAGE_RANGE');
    expect(err.details).toMatchObject({ token, parameter: 'pages' });
  });

  it(`allows ${MAX_RANGE_PARTS} parts and refuses one more`, () => {
    expect(parsePageRange(Array(MAX_RANGE_PARTS).fill('1').join(',')).parts).toHaveLength(MAX_RANGE_PARTS);
    const err = refusal(() => parsePageRange(Array(MAX_RANGE_PARTS + 1).fill('2').join(',')));
    expect(err.code).toBe('INVALID_PAGE_RANGE');
    expect(err.details).toMatchObject({ token: '2', max_parts: MAX_RANGE_PARTS });
    // details.token names the first part past the limit, not the last one allowed.
    const numbered = Array.from({ length: MAX_RANGE_PARTS + 2 }, (_, i) => String(i + 1)).join(',');
    expect(refusal(() => parsePageRange(numbered)).details).toMatchObject({ token: String(MAX_RANGE_PARTS + 1) });
  });

  it('quotes the part it refuses escaped and cut short in the message, and as sent in details.token', () => {
    const err = refusal(() => parsePageRange(`1,2\u202e3-x${'y'.repeat(200)}`));
    expect(err.message).toMatch(/^Page range part "2\\u202e3-xy+…" is not valid/);
    expect(err.message.length).toBeLessThan(400);
    expect(err.details).toMatchObject({ token: `2\u202e3-x${'y'.repeat(200)}` });
  });

  it('takes any run of digits as a page number: one past every document is PAGE_OUT_OF_RANGE, not a syntax error', () => {
    const huge = '9999999999999999999999';
    for (const [text, token] of [
      [huge, huge],
      [`1,${huge}`, huge],
      [`2-${huge}`, `2-${huge}`],
      [`${huge}-end`, `${huge}-end`],
      [` ${huge} - 99999999999999999999999 `, `${huge} - 99999999999999999999999`],
      ['9007199254740992-9007199254740993', '9007199254740992-9007199254740993'],
      ['1'.repeat(400), '1'.repeat(400)],
    ]) {
      const err = refusal(() => resolvePageRange(parsePageRange(text), 5, { parameter: 'pages' }));
      expect(err.code).toBe('PAGE_OUT_OF_RANGE');
      expect(err.details).toEqual({ parameter: 'pages', token, total_pages: 5 });
      expect(err.message).toContain(token);
      expect(JSON.parse(JSON.stringify(err.details))).toEqual(err.details);
    }
    // The largest exact page number still reports its page.
    expect(refusal(() => resolvePageRange(parsePageRange('9007199254740991'), 5)).details).toEqual({ token: '9007199254740991', page: 9007199254740991, total_pages: 5 });
  });

  it.each([
    [`99999999999999999999-5`],
    [`99999999999999999999-99999999999999999998`],
    // Equal as lossy Numbers, backwards as page numbers.
    [`9007199254740993-9007199254740992`],
    [`100000000000000000000-099999999999999999999`],
  ])('finds backwards ranges of huge page numbers exactly (%s)', (text) => {
    const err = refusal(() => parsePageRange(text));
    expect(err.code).toBe('INVALID_PAGE_RANGE');
    expect(err.details).toEqual({ token: text });
    expect(err.message).toContain('runs backwards');
  });

  it('keeps leading zeros meaning the number they write', () => {
    expect(parsePageRange('007,02-03,0004-end').parts).toEqual([
      { from: 7, to: 7 },
      { from: 2, to: 3 },
      { from: 4, to: 'end' },
    ]);
    for (const text of ['00', '000-3', '0'.repeat(30)]) expect(refusal(() => parsePageRange(text)).code).toBe('INVALID_PAGE_RANGE');
    expect(refusal(() => resolvePageRange(parsePageRange(`0${'9'.repeat(25)}`), 5)).code).toBe('PAGE_OUT_OF_RANGE');
  });

  it('refuses pages past the end with the document size', () => {
    const err = refusal(() => resolvePageRange(parsePageRange('1,8-end'), 5, { filename: 'a.pdf', input_index: 1 }));
    expect(err.code).toBe('PAGE_OUT_OF_RANGE');
    expect(err.details).toMatchObject({ total_pages: 5, token: '8-end', filename: 'a.pdf', input_index: 1 });
    expect(resolvePageRange(parsePageRange('5-end, 2,2 , 1'), 5)).toEqual([5, 2, 2, 1]);
    expect(resolvePageRange(parsePageRange('3-END'), 4)).toEqual([3, 4]);
  });
});
