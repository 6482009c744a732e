import ByteStream from 'pdf-lib/cjs/core/parser/ByteStream';
import { PDFArray, PDFContext, PDFName, PDFObjectParser, PDFRawStream, PDFRef } from 'pdf-lib';
import { MAX_DISTINCT_NAMES, MAX_NAME_BYTES, MAX_TOKEN_BYTES, MIN_DECODED_STRUCTURE_BYTES, ReadBudget } from '../../../../functions/core/pdf/budget';
import { Deadline, PdfDeadlineExceeded, ReadBudgetExceeded } from '../../../../functions/core/pdf/errors';
import { ObjectParser, type ParseMeter } from '../../../../functions/core/pdf/parser';
import { PdfReader } from '../../../../functions/core/pdf/reader';
import { parseFilenamePattern } from '../../../../functions/core/pdf/filenames';
import { INSTANT_LIMITS } from '../../../../functions/core/pdf/limits';
import { openInput, planSplit } from '../../../../functions/core/pdf/operations';
import { ServiceError } from '../../../../functions/core/errors';
import { thrownBy } from '../../../support/errors';
import { runIsolated } from '../../../support/hang-guard';
import { pdfWith } from '../../../support/pdf-fixtures';

const bytes = (text: string) => Buffer.from(text, 'latin1');

/** What pdf-lib's own parser makes of `text`: the value as written, or the error's class. */
function pdfLibParse(text: string): string {
  try {
    const o = new PDFObjectParser(ByteStream.of(bytes(text)), PDFContext.create(), false).parseObject();
    return `${o.constructor.name} ${o.toString()}`;
  } catch (err) {
    return `throws ${(err as Error).constructor.name}`;
  }
}

function ourParse(text: string, meter?: ParseMeter): string {
  try {
    const o = new ObjectParser(bytes(text), PDFContext.create(), undefined, meter).parseObject();
    return `${o.constructor.name} ${o.toString()}`;
  } catch (err) {
    return `throws ${(err as Error).constructor.name}`;
  }
}

describe('ObjectParser', () => {
  it('reads strings, hex strings and names as pdf-lib does (escapes kept, nesting balanced), and fails where it fails', () => {
    const cases = [
      '(plain)',
      '(a\\)b(c)d)',
      '(ends with escaped backslash\\\\)',
      '()',
      '(unbalanced (',
      '<48656C6C6F>',
      '<>',
      '<4865',
      '/Name#20x',
      '/',
      '/A/B',
      '[ /A (x) <41> 1 0 R true null ]',
      '<< /K (v) /L <41> /M /N >>',
      '<< (not a name) 1 >>',
      '<< /K',
    ];
    for (const text of cases) expect([text, ourParse(text)]).toEqual([text, pdfLibParse(text)]);
  });

  it('keeps numbers within ±(2^53 − 1), without a console warning per number (copied as written, 10^20 made outputs qpdf cannot open)', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(ourParse('[99999999999999999999 -123456789012345678901234567890.5 1.5 -3 +7 .5 4.]')).toBe('PDFArray [ 9007199254740991 -9007199254740991 1.5 -3 7 0.5 4 ]');
      expect(ourParse('[1 -]')).toBe(pdfLibParse('[1 -]'));
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it("reads references as one object per number within a document, outside pdf-lib's process-wide pool (2.9 million of them stayed in memory for good, 630 MB a request)", () => {
    const context = PDFContext.create();
    const parse = (text: string) => new ObjectParser(bytes(text), context).parseObject() as PDFArray;
    const [a, b, c] = parse('[987654321012 0 R 987654321012 5 R 987654321013 0 R]').asArray();
    expect(a).toBeInstanceOf(PDFRef);
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(parse('[987654321012 0 R]').get(0)).toBe(a);
    expect([String(a), (a as PDFRef).objectNumber, (a as PDFRef).generationNumber]).toEqual(['987654321012 0 R', 987654321012, 0]);
    // Not pdf-lib's pooled instance, and another document has its own.
    expect(PDFRef.of(987654321012)).not.toBe(a);
    expect(new ObjectParser(bytes('987654321012 0 R'), PDFContext.create()).parseObject()).not.toBe(a);
  });

  it('counts every value it parses and measures strings and names before building them', () => {
    const seen = { values: 0, tokens: [] as string[], names: [] as string[] };
    const meter: ParseMeter = { onValue: () => void seen.values++, onToken: (n, kind) => void seen.tokens.push(`${kind} ${n}`), onName: (name) => void seen.names.push(name) };
    ourParse('[ 1 2 (abc) /Name << /K <4142> >> ]', meter);
    // The array, its five elements and the dictionary's one value.
    expect(seen.values).toBe(7);
    expect(seen.tokens).toEqual(['string 3', 'name 4', 'name 1', 'string 4']);
    expect(seen.names).toEqual(['Name', 'K']);
  });
});

describe('reading with a ReadBudget', () => {
  it('refuses a document whose structure holds more values than the budget, while the huge object is being read', () => {
    const pdf = pdfWith(`/Junk [${' 0'.repeat(20_000)} ]`);
    const reader = PdfReader.open(pdf, new ReadBudget(MIN_DECODED_STRUCTURE_BYTES, Deadline.none(), 5_000));
    expect(thrownBy(() => reader.pages(), ReadBudgetExceeded)).toMatchObject({ code: 'PDF_TOO_COMPLEX', reason: 'too_many_values' });
    expect(PdfReader.open(pdf).pages()).toHaveLength(1);
  });

  it('names the input when the budget runs out while the outputs are planned (an image the page names holds the bulk)', () => {
    const pdf = pdfWith('/Resources << /XObject << /Im1 4 0 R >> >>', [`<< /Type /XObject /Subtype /Image /Junk [${' 0'.repeat(20_000)} ] /Length 1 >>\nstream\nx\nendstream`]);
    const input = { bytes: pdf, filename: 'heavy.pdf', index: 0 };
    const source = openInput(input, new ReadBudget(MIN_DECODED_STRUCTURE_BYTES, Deadline.none(), 5_000));
    const err = thrownBy(() => planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, source, INSTANT_LIMITS), ServiceError);
    expect(err).toMatchObject({ code: 'PDF_TOO_COMPLEX', details: { filename: 'heavy.pdf', input_index: 0, reason: 'too_many_values' } });
  });

  it('ends at the deadline while one huge object is parsed', () => {
    const pdf = pdfWith(`/Junk [${' 0'.repeat(50_000)} ]`);
    let looks = 0;
    const reader = PdfReader.open(pdf, new ReadBudget(MIN_DECODED_STRUCTURE_BYTES, new Deadline(2, () => ++looks)));
    expect(() => reader.pages()).toThrow(PdfDeadlineExceeded);
  });

  it(`refuses a string longer than ${MAX_TOKEN_BYTES} bytes before building it`, () => {
    const reader = PdfReader.open(pdfWith(`/Junk (${'x'.repeat(MAX_TOKEN_BYTES + 1)})`));
    expect(thrownBy(() => reader.pages(), ReadBudgetExceeded)).toMatchObject({ code: 'PDF_TOO_COMPLEX', reason: 'token_too_long' });
    expect(PdfReader.open(pdfWith(`/Junk (${'x'.repeat(100_000)})`)).pages()).toHaveLength(1);
  });

  it(`refuses a name longer than ${MAX_NAME_BYTES} bytes, and more than ${MAX_DISTINCT_NAMES} distinct names in one request (pdf-lib keeps every name for good)`, () => {
    const long = PdfReader.open(pdfWith(`/${'N'.repeat(MAX_NAME_BYTES + 1)} 1`));
    expect(thrownBy(() => long.pages(), ReadBudgetExceeded)).toMatchObject({ reason: 'token_too_long' });
    const names = (n: number, tag: string) => pdfWith(`/Junk [${Array.from({ length: n }, (_, i) => ` /${tag}${i}`).join('')} ]`);
    const many = PdfReader.open(names(MAX_DISTINCT_NAMES + 10, 'Many'));
    expect(thrownBy(() => many.pages(), ReadBudgetExceeded)).toMatchObject({ reason: 'too_many_names' });
    // The same names again and again count once.
    const repeated = pdfWith(`/Junk [${' /Same'.repeat(MAX_DISTINCT_NAMES + 10)} ]`);
    expect(PdfReader.open(repeated).pages()).toHaveLength(1);
  });

  it('reads a stream whose /Length names the stream itself (or one naming it back) by finding endstream', () => {
    const self = pdfWith('/Contents 4 0 R', ['<< /Length 4 0 R >>\nstream\nq Q\nendstream']);
    const mutual = pdfWith('/Contents 4 0 R', ['<< /Length 5 0 R >>\nstream\nq Q\nendstream', '<< /Length 4 0 R >>\nstream\nx\nendstream']);
    for (const pdf of [self, mutual]) {
      const reader = PdfReader.open(pdf);
      expect(reader.pages()).toHaveLength(1);
      const contents = reader.resolve(reader.pages()[0].dict.get(PDFName.of('Contents')));
      expect(contents).toBeInstanceOf(PDFRawStream);
      expect(Buffer.from((contents as PDFRawStream).contents).toString('latin1').trim()).toBe('q Q');
    }
  });
});

describe('ObjectParser: a stream whose /Length is unusable', () => {
  it('ends at the first endstream after its data, even when the data says "stream"', () => {
    const pdf = pdfWith('/Contents [4 0 R 5 0 R]', ['<< /Length 999 >>\nstream\nBT (upstream) Tj ET\nendstream', '<< /Length 3 >>\nstream\nq Q\nendstream']);
    const reader = PdfReader.open(pdf);
    const [first, second] = (reader.resolve(reader.pages()[0].dict.get(PDFName.of('Contents'))) as PDFArray).asArray().map((ref) => reader.resolve(ref) as PDFRawStream);
    expect(Buffer.from(first.contents).toString('latin1')).toBe('BT (upstream) Tj ET');
    expect(Buffer.from(second.contents).toString('latin1')).toBe('q Q');
  });

  it('finds the ends of many such streams without searching the rest of the file for each (8,000 took 36 s to inspect)', () => {
    // Hang guard in a separate process: a quadratic search blocks the event loop, which jest cannot interrupt.
    const outcome = runIsolated(`
      const { inspectPdf } = load('functions/core/pdf/inspect.ts');
      const { pdfOfObjects } = load('test/support/pdf-fixtures.ts');
      const streams = 8000, first = 10;
      let refs = ''; for (let i = 0; i < streams; i++) refs += (first + i) + ' 0 R ';
      const objects = {
        1: '\\n<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[' + refs + ']>>>>\\nendobj\\n',
        2: '\\n<</Type/Pages/Kids[3 0 R]/Count 1>>\\nendobj\\n',
        3: '\\n<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>\\nendobj\\n',
      };
      for (let i = 0; i < streams; i++) objects[first + i] = '<<>>stream\\n';
      const result = inspectPdf(pdfOfObjects(objects, { unterminated: true }), { filename: 'f.pdf', maxPages: 500, forEdit: false });
      console.log(JSON.stringify({ pages: result.page_count }));
    `, 10_000);
    expect(outcome).toEqual({ pages: 1 });
  });
});
