import { z } from 'zod';
import { pdfUploadUrlBodySchema, parseUploadSize } from '../../../../functions/core/pdfops/background';
import { inspectFormSchema, inspectJsonBodySchema, parseInspectRequest } from '../../../../functions/core/pdfops/inspect';
import {
  type FormFile,
  mergeFormSchema,
  mergeJsonBodySchema,
  parseMergeRequest,
  parsePdfJobRequest,
  parseSplitRequest,
  pdfJobBodySchema,
  splitFormSchema,
  splitJsonBodySchema,
} from '../../../../functions/core/pdfops/requests';
import { refusal } from '../../../support/errors';
import { runIsolated } from '../../../support/hang-guard';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const PDF = b64('%PDF-1.4 x');
const pdf = (extra: Record<string, unknown> = {}) => ({ pdf_base64: PDF, ...extra });
const file = (filename: string | null, data: string | Buffer = '%PDF-1.4 x'): FormFile => ({ filename, data: Buffer.from(data) });

/** The refusal's code and details alone, to compare them exactly. */
function refused(fn: () => unknown) {
  const { code, details } = refusal(fn);
  return { code, details };
}

const merge = (json: unknown) => parseMergeRequest({ json });
const split = (json: unknown) => parseSplitRequest({ json });

describe('POST /pdf/merge (JSON)', () => {
  it('reads inputs in order with their names and ranges; null options and store mean the defaults', () => {
    const request = merge({ inputs: [pdf({ filename: 'a/b.pdf', pages: '3,1' }), pdf({ filename: null, pages: null })], options: null, store: null });
    expect(request.inputs.map((i) => [i.index, i.filename, i.pages?.text ?? null, i.bytes.length])).toEqual([
      [0, 'a_b.pdf', '3,1', 10],
      [1, 'input-2.pdf', null, 10],
    ]);
    expect(request).toMatchObject({ outputFilename: null, title: null, store: false });
    expect(merge({ inputs: [pdf(), pdf()], store: 'true', options: { output_filename: '', title: 'T', unknown: 1 } })).toMatchObject({ outputFilename: null, title: 'T', store: true });
  });

  it('names inputs the spec way, with the input index and file name', () => {
    // INVALID_BASE64 belongs to the bulk routes (document 1); the PDF tools answer INVALID_PARAMETER.
    const badBase64 = refusal(() => merge({ inputs: [pdf(), pdf({ filename: 'z.pdf', pdf_base64: '%%%' })] }));
    expect({ code: badBase64.code, details: badBase64.details }).toEqual({
      code: 'INVALID_PARAMETER',
      details: { filename: 'z.pdf', input_index: 1, parameter: 'inputs[1].pdf_base64' },
    });
    expect(badBase64.message).toMatch(/^inputs\[1\]\.pdf_base64 is not valid base64/);
    expect(refused(() => merge({ inputs: [pdf(), pdf({ pdf_base64: null })] }))).toMatchObject({ code: 'MISSING_PDF', details: { parameter: 'inputs[1].pdf_base64', input_index: 1 } });
    expect(refused(() => merge({ inputs: [pdf(), pdf({ pdf_base64: 5 })] }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'inputs[1].pdf_base64', filename: 'input-2.pdf', input_index: 1 } });
    expect(refused(() => merge({ inputs: [pdf({ filename: 7 }), pdf()] }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'inputs[0].filename', input_index: 0 } });
    expect(refused(() => merge({ inputs: [pdf(), pdf({ filename: 'b.pdf', pages: '2-1' })] }))).toEqual({
      code: 'INVALID_PAGE_RANGE',
      details: { filename: 'b.pdf', input_index: 1, parameter: 'inputs[1].pages', token: '2-1' },
    });
    expect(refused(() => merge({ inputs: [pdf({ pages: 3 }), pdf()] }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'inputs[0].pages', filename: 'input-1.pdf', input_index: 0 } });
    expect(refused(() => merge({ inputs: 'x' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'inputs' } });
    expect(refused(() => merge({ inputs: [pdf(), pdf()], options: { title: 5 } }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'options.title' } });
    expect(refused(() => merge({ inputs: [pdf(), pdf()], store: 'yes' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'store' } });
  });

  it('answers the first problem in the spec order: count, objects, names and data, size, pages, options, store', () => {
    expect(refused(() => merge({ inputs: [7], options: 'x' })).code).toBe('MISSING_PDFS');
    expect(refused(() => merge({ inputs: Array(21).fill(7) })).details).toEqual({ file_count: 21, max_files: 20 });
    // Every input is an object before any one's data is read.
    expect(refused(() => merge({ inputs: [pdf({ pdf_base64: '%%%' }), 7] })).details).toEqual({ parameter: 'inputs[1]', input_index: 1 });
    // The data of a later input comes before the pages of an earlier one.
    expect(refused(() => merge({ inputs: [pdf({ pages: 5 }), {}] })).code).toBe('MISSING_PDF');
    // An input's name before its data.
    expect(refused(() => merge({ inputs: [pdf(), { filename: 7, pdf_base64: '%%%' }] })).details).toEqual({ parameter: 'inputs[1].filename', input_index: 1 });
    expect(refused(() => merge({ inputs: [pdf({ pages: '0' }), pdf({ pdf_base64: b64(Buffer.alloc(4 * 1024 * 1024)) })] }))).toMatchObject({
      code: 'PDF_INPUT_TOO_LARGE',
      details: { file_count: 2, max_bytes: 4 * 1024 * 1024 },
    });
    expect(refused(() => merge({ inputs: [pdf({ pages: '0' }), pdf()], options: 'x', store: 5 })).code).toBe('INVALID_PAGE_RANGE');
    expect(refused(() => merge({ inputs: [pdf(), pdf()], options: 'x', store: 5 })).details).toEqual({ parameter: 'options' });
  });
});

describe('POST /pdf/merge: the input that takes the total over 4 MB', () => {
  const MB = 1024 * 1024;
  const sized = (bytes: number) => Buffer.alloc(bytes, 0x20);

  it('is named in JSON, with the whole total and the file count', () => {
    const inputs = [pdf({ filename: 'a.pdf' }), { pdf_base64: b64(sized(3 * MB)), filename: 'big.pdf' }, { pdf_base64: b64(sized(MB)), filename: 'over.pdf' }, pdf({ filename: 'd.pdf' })];
    expect(refused(() => merge({ inputs }))).toEqual({
      code: 'PDF_INPUT_TOO_LARGE',
      details: { filename: 'over.pdf', input_index: 2, file_count: 4, size_bytes: 4 * MB + 20, max_bytes: 4 * MB },
    });
  });

  it('says how far over the limit the total is (a total just past 4 MB read "4.0 MB; the limit is 4 MB")', () => {
    const inputs = [{ pdf_base64: b64(sized(3 * MB)), filename: 'big.pdf' }, { pdf_base64: b64(sized(MB + 20)), filename: 'over.pdf' }];
    expect(refusal(() => merge({ inputs })).message).toMatch(/^The PDF input is 4194324 bytes; the limit is 4 MB \(4194304 bytes\)\./);
  });

  it('takes exactly 4 MB and refuses one byte more (merge JSON and form, split JSON and form)', () => {
    const json = (last: number) => merge({ inputs: [{ pdf_base64: b64(sized(3 * MB)) }, { pdf_base64: b64(sized(last)) }] });
    expect(json(MB).inputs).toHaveLength(2);
    expect(refused(() => json(MB + 1))).toMatchObject({ code: 'PDF_INPUT_TOO_LARGE', details: { size_bytes: 4 * MB + 1, input_index: 1 } });
    const form = (last: number) => parseMergeRequest({ form: { files: [file('a.pdf', sized(3 * MB)), file('b.pdf', sized(last))] } });
    expect(form(MB).inputs).toHaveLength(2);
    expect(refused(() => form(MB + 1))).toMatchObject({ code: 'PDF_INPUT_TOO_LARGE', details: { size_bytes: 4 * MB + 1, input_index: 1 } });
    const each = { mode: 'each_page' };
    expect(split({ input: { pdf_base64: b64(sized(4 * MB)) }, split: each }).input.bytes).toHaveLength(4 * MB);
    expect(refused(() => split({ input: { pdf_base64: b64(sized(4 * MB + 1)) }, split: each }))).toMatchObject({ code: 'PDF_INPUT_TOO_LARGE', details: { size_bytes: 4 * MB + 1 } });
    const splitForm = (bytes: number) => parseSplitRequest({ form: { file: [file('s.pdf', sized(bytes))], split: '{"mode":"each_page"}' } });
    expect(splitForm(4 * MB).input.bytes).toHaveLength(4 * MB);
    expect(refused(() => splitForm(4 * MB + 1))).toMatchObject({ code: 'PDF_INPUT_TOO_LARGE', details: { size_bytes: 4 * MB + 1 } });
  });

  it('is named in a form, with the whole total and the file count', () => {
    const files = [file('a.pdf'), file('big.pdf', sized(3 * MB)), file(null, sized(MB)), file('d.pdf')];
    expect(refused(() => parseMergeRequest({ form: { files } }))).toEqual({
      code: 'PDF_INPUT_TOO_LARGE',
      details: { filename: 'input-3.pdf', input_index: 2, file_count: 4, size_bytes: 4 * MB + 20, max_bytes: 4 * MB },
    });
  });
});

describe('POST /pdf/merge (multipart)', () => {
  const form = (fields: Record<string, unknown>) => parseMergeRequest({ form: { files: [file('a.pdf'), file('b.pdf')], ...fields } });

  it('reads page_ranges, options and store from their text fields', () => {
    const request = form({ page_ranges: '["3,1", null]', options: '{"output_filename": "o"}', store: 'true' });
    expect(request.inputs.map((i) => [i.filename, i.pages?.text ?? null])).toEqual([
      ['a.pdf', '3,1'],
      ['b.pdf', null],
    ]);
    expect(request).toMatchObject({ outputFilename: 'o', store: true });
    expect(form({ page_ranges: ' ', options: '' })).toMatchObject({ store: false, outputFilename: null });
  });

  it('says what is wrong inside a JSON text field, not that the field is missing', () => {
    const err = refusal(() => form({ options: '{"title": 5}' }));
    expect(err).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'options.title' } });
    expect(err.message).toBe('options.title: expected a string.');
  });

  it('refuses a page_ranges far longer than the files without validating its entries', () => {
    // Validating 3 million entries (a 6 MB form) took seconds of CPU. The entries' reads are counted: the JSON parser's
    // nesting walk reads each once, validation would read each again.
    const outcome = runIsolated(`
      const { parseMergeRequest } = load('functions/core/pdfops/requests.ts');
      const file = (name) => ({ filename: name, data: Buffer.from('%PDF-1.4') });
      const length = 500_000;
      let reads = 0;
      const parse = JSON.parse;
      JSON.parse = (text, reviver) => {
        const value = parse(text, reviver);
        if (!Array.isArray(value) || value.length !== length) return value;
        return new Proxy(value, { get: (target, key) => { if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads += 1; return target[key]; } });
      };
      const page_ranges = JSON.stringify(new Array(length).fill(1));
      let refusal = null;
      try { parseMergeRequest({ form: { files: [file('a.pdf'), file('b.pdf')], page_ranges } }); } catch (err) { refusal = { code: err.code, details: err.details }; }
      console.log(JSON.stringify({ refusal, readsPerEntry: reads / length }));
    `) as { refusal: { code: string; details: Record<string, unknown> }; readsPerEntry: number };
    expect(outcome.refusal).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'page_ranges' } });
    expect(outcome.readsPerEntry).toBeLessThanOrEqual(1);
  });

  it('refuses in the spec order: count, page_ranges, options JSON, empty files, size, ranges, options, store', () => {
    expect(refused(() => parseMergeRequest({ form: { files: [file('a.pdf')], page_ranges: '[', options: '{' } })).code).toBe('MISSING_PDFS');
    expect(refused(() => form({ page_ranges: '["1"]', options: '{' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'page_ranges' } });
    expect(refused(() => form({ page_ranges: '{"a": 1}' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'page_ranges' } });
    expect(refused(() => parseMergeRequest({ form: { files: [file('a.pdf'), file('e.pdf', '')], options: '{' } }))).toEqual({ code: 'INVALID_OPTIONS_JSON', details: { parameter: 'options' } });
    expect(refused(() => parseMergeRequest({ form: { files: [file('a.pdf'), file('e.pdf', '')], page_ranges: '["0", null]' } }))).toEqual({
      code: 'MISSING_PDF',
      details: { filename: 'e.pdf', input_index: 1 },
    });
    expect(refused(() => form({ page_ranges: '[null, 5]', options: '{"title": 5}', store: 'x' }))).toEqual({
      code: 'INVALID_PARAMETER',
      details: { parameter: 'page_ranges[1]', filename: 'b.pdf', input_index: 1 },
    });
    expect(refused(() => form({ page_ranges: '["1-x", null]' }))).toEqual({ code: 'INVALID_PAGE_RANGE', details: { filename: 'a.pdf', input_index: 0, parameter: 'page_ranges[0]', token: '1-x' } });
  });

  it('names page_ranges[i] (not the JSON body\'s inputs[i].pages) in the parameter and the message', () => {
    for (const [ranges, code] of [['[null, 5]', 'INVALID_PARAMETER'], ['[null, "2-1"]', 'INVALID_PAGE_RANGE']]) {
      const err = refusal(() => form({ page_ranges: ranges }));
      expect(err.code).toBe(code);
      expect(err.details).toMatchObject({ parameter: 'page_ranges[1]', filename: 'b.pdf', input_index: 1 });
      expect(err.message).toContain('page_ranges[1]');
      expect(err.message).not.toContain('inputs[');
    }
    expect(refused(() => form({ options: '{"title": 5}', store: 'x' })).details).toEqual({ parameter: 'options.title' });
    expect(refused(() => form({ store: 'x' })).details).toEqual({ parameter: 'store' });
  });
});

describe('POST /pdf/split', () => {
  const input = { pdf_base64: PDF, filename: 'r.pdf' };

  it('reads every mode; options default to the standard file names', () => {
    expect(split({ input, split: { mode: 'ranges', ranges: ['1-3', '4-end'] }, store: 'false' })).toMatchObject({
      input: { filename: 'r.pdf', index: 0 },
      split: { mode: 'ranges', ranges: [{ text: '1-3' }, { text: '4-end' }] },
      pattern: { text: '{basename}-{index:03}.pdf' },
      store: false,
    });
    expect(split({ input, split: { mode: 'every_n', every_n: 2 }, options: { filename_pattern: null } }).split).toEqual({ mode: 'every_n', every_n: 2 });
    // Whole numbers past 2^53 are still whole numbers of at least 1 (one file, as any every_n past the page count).
    for (const n of [2 ** 53 + 2, 1e308]) expect(split({ input, split: { mode: 'every_n', every_n: n } }).split).toEqual({ mode: 'every_n', every_n: n });
  });

  it('names the input in every split refusal', () => {
    const where = { filename: 'r.pdf', input_index: 0 };
    expect(refused(() => split({ input, split: { mode: 'halves' } }))).toEqual({ code: 'INVALID_SPLIT_MODE', details: { ...where, mode: 'halves', supported: ['extract', 'ranges', 'every_n', 'each_page'] } });
    expect(refused(() => split({ input }))).toMatchObject({ code: 'INVALID_SPLIT_MODE', details: { mode: null } });
    // A mode name sent as the whole of split: the message shows the object it should be.
    const bare = refusal(() => split({ input, split: 'every_n' }));
    expect(bare).toMatchObject({ code: 'INVALID_SPLIT_MODE', details: { ...where, mode: null } });
    expect(bare.message).toBe('split must be a JSON object with a mode, such as {"mode": "every_n"}; got the string "every_n".');
    expect(refusal(() => split({ input, split: ['each_page'] })).message).toMatch(/such as \{"mode": "each_page"\}; got an array/);
    // A mode that is not a string is named by its kind, never as "[object Object]"; null is a missing mode.
    expect(refusal(() => split({ input, split: { mode: {} } }))).toMatchObject({ message: 'split.mode must be one of extract, ranges, every_n, each_page (a string), not an object.', details: { mode: null } });
    expect(refusal(() => split({ input, split: { mode: [] } })).message).toMatch(/\(a string\), not an array\.$/);
    expect(refusal(() => split({ input, split: { mode: null } })).message).toMatch(/^split\.mode is required/);
    expect(refusal(() => split({ input, split: { mode: 'x'.repeat(5000) } }))).toMatchObject({ message: expect.stringMatching(/^split\.mode "x{60}…" is not known/), details: { mode: 'x'.repeat(100) } });
    expect(refused(() => split({ input, split: { mode: 'extract', pages: 3 } }))).toEqual({ code: 'INVALID_PARAMETER', details: { ...where, parameter: 'split.pages' } });
    expect(refused(() => split({ input, split: { mode: 'every_n', every_n: 1.5 } }))).toEqual({ code: 'INVALID_PARAMETER', details: { ...where, parameter: 'split.every_n' } });
    // Every range must be a string before any is parsed.
    expect(refused(() => split({ input, split: { mode: 'ranges', ranges: ['x', 5] } }))).toEqual({ code: 'INVALID_PARAMETER', details: { ...where, parameter: 'split.ranges' } });
    expect(refused(() => split({ input, split: { mode: 'ranges', ranges: ['1', 'x'] } }))).toEqual({ code: 'INVALID_PAGE_RANGE', details: { ...where, parameter: 'split.ranges[1]', token: 'x' } });
  });

  it('refuses more than 100 ranges before reading the PDF, as the split itself would (JSON and form)', () => {
    const where = { filename: 'r.pdf', input_index: 0 };
    const ranges = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1));
    expect(split({ input, split: { mode: 'ranges', ranges: ranges(100) } }).split).toMatchObject({ mode: 'ranges', ranges: { length: 100 } });
    const err = refusal(() => split({ input, split: { mode: 'ranges', ranges: [...ranges(100), 'x'] } }));
    expect({ code: err.code, details: err.details }).toEqual({ code: 'OUTPUT_COUNT_EXCEEDED', details: { ...where, output_count: 101, max_outputs: 100 } });
    expect(err.message).toContain('POST /pdf/jobs');
    const form = { file: [file('r.pdf')], split: JSON.stringify({ mode: 'ranges', ranges: ranges(101) }) };
    expect(refused(() => parseSplitRequest({ form }))).toEqual({ code: 'OUTPUT_COUNT_EXCEEDED', details: { ...where, output_count: 101, max_outputs: 100 } });
    // A range that is not a string is still the first problem.
    expect(refused(() => split({ input, split: { mode: 'ranges', ranges: [...ranges(101), 5] } })).details).toEqual({ ...where, parameter: 'split.ranges' });
  });

  it('takes a page number past any document as valid syntax (the document check answers it)', () => {
    const huge = '9999999999999999999999';
    expect(split({ input, split: { mode: 'extract', pages: huge } }).split).toMatchObject({ mode: 'extract', pages: { text: huge } });
    expect(merge({ inputs: [pdf({ pages: `1-${huge}` }), pdf()] }).inputs[0].pages?.text).toBe(`1-${huge}`);
  });

  it('refuses a missing input first, then the file, the split settings, the options and store', () => {
    for (const missing of [undefined, null]) expect(refused(() => split({ input: missing, split: 'x', store: 5 })).code).toBe('MISSING_PDF');
    expect(refused(() => split({ input: 5 })).details).toEqual({ parameter: 'input' });
    expect(refused(() => split({ input: { pdf_base64: '' }, split: 'x' })).code).toBe('MISSING_PDF');
    expect(refused(() => split({ input, split: 'x', options: { filename_pattern: '{name}' } })).code).toBe('INVALID_SPLIT_MODE');
    expect(refused(() => split({ input, split: { mode: 'each_page' }, options: { filename_pattern: '{name}' }, store: 5 }))).toMatchObject({
      code: 'INVALID_PARAMETER',
      details: { parameter: 'options.filename_pattern', token: '{name}' },
    });
  });

  it('takes one file part in a form; JSON errors in the form fields come first', () => {
    const form = (fields: Record<string, unknown>) => parseSplitRequest({ form: { file: [file('r.pdf')], ...fields } });
    expect(form({ split: '{"mode": "extract", "pages": "2"}', options: '{"filename_pattern": "p.pdf"}' })).toMatchObject({ split: { mode: 'extract', pages: { text: '2' } }, pattern: { text: 'p.pdf' } });
    expect(refused(() => parseSplitRequest({ form: { file: [], split: '{' } })).details).toEqual({ parameter: 'split' });
    expect(refused(() => parseSplitRequest({ form: { file: [], options: '{' } })).code).toBe('INVALID_OPTIONS_JSON');
    expect(refused(() => parseSplitRequest({ form: { file: [], split: '{"mode": "x"}' } })).code).toBe('MISSING_PDF');
    expect(refused(() => parseSplitRequest({ form: { file: [file('a.pdf'), file('b.pdf')] } })).details).toEqual({ file_count: 2, max_files: 1 });
    expect(refused(() => form({ split: '{"mode": "halves"}' })).details).toMatchObject({ filename: 'r.pdf', mode: 'halves' });
    // A bare mode name is not JSON: the refusal shows the object it should be.
    const bare = refusal(() => form({ split: ' each_page ' }));
    expect(bare).toMatchObject({ code: 'INVALID_SPLIT_MODE', details: { parameter: 'split', mode: null } });
    expect(bare.message).toMatch(/such as \{"mode": "each_page"\}/);
    expect(refused(() => form({ split: 'halves' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'split' } });
  });
});

describe('POST /pdf/jobs', () => {
  it('holds a split job to one input with a non-empty s3_key, and every_n to at least 1', () => {
    const job = (extra: Record<string, unknown>) => parsePdfJobRequest({ operation: 'split', inputs: [{ s3_key: 'a' }], split: { mode: 'each_page' }, ...extra });
    expect(refused(() => job({ inputs: [{ s3_key: 'a' }, { s3_key: 'b' }] }))).toMatchObject({ code: 'TOO_MANY_FILES', details: { file_count: 2, max_files: 1 } });
    expect(refused(() => job({ inputs: [{ s3_key: '' }] }))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'inputs[0].s3_key' } });
    expect(refused(() => job({ split: { mode: 'every_n', every_n: 0 } }))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'split.every_n' } });
    expect(job({ split: { mode: 'every_n', every_n: 1 } }).split).toEqual({ mode: 'every_n', every_n: 1 });
  });

  it('takes output_filename up to 200 characters and title up to 1000', () => {
    const opts = (options: Record<string, unknown>) => merge({ inputs: [pdf(), pdf()], options });
    expect(opts({ output_filename: 'n'.repeat(200), title: 't'.repeat(1000) })).toMatchObject({ outputFilename: 'n'.repeat(200), title: 't'.repeat(1000) });
    expect(refused(() => opts({ output_filename: 'n'.repeat(201) }))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'options.output_filename' } });
    expect(refused(() => opts({ title: 't'.repeat(1001) }))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'options.title' } });
  });

  it('keeps the split settings and options as sent, and page ranges as text', () => {
    expect(parsePdfJobRequest({ operation: 'merge', inputs: [{ s3_key: 'a', pages: '2' }, { s3_key: 'b', filename: 'b.pdf', pages: null }], options: null })).toEqual({
      operation: 'merge',
      inputs: [
        { s3_key: 'a', filename: 'input-1.pdf', pages: '2' },
        { s3_key: 'b', filename: 'b.pdf', pages: null },
      ],
      split: null,
      options: {},
    });
    const sent = { operation: 'split', inputs: [{ s3_key: 'a' }], split: { mode: 'every_n', every_n: 3, extra: 1 }, options: { filename_pattern: 'x.pdf' } };
    expect(parsePdfJobRequest(sent)).toMatchObject({ split: sent.split, options: sent.options });
  });

  it('merges 2 to 100 uploads: 100 taken, 101 TOO_MANY_FILES, 1 MISSING_PDFS (the instant routes: 2 to 20)', () => {
    const job = (n: number) => ({ operation: 'merge', inputs: Array.from({ length: n }, (_, i) => ({ s3_key: `k${i}` })) });
    expect(parsePdfJobRequest(job(100)).inputs).toHaveLength(100);
    expect(parsePdfJobRequest(job(2)).inputs).toHaveLength(2);
    expect(refused(() => parsePdfJobRequest(job(101)))).toEqual({ code: 'TOO_MANY_FILES', details: { file_count: 101, max_files: 100 } });
    expect(refused(() => parsePdfJobRequest(job(1)))).toEqual({ code: 'MISSING_PDFS', details: { file_count: 1, min_files: 2 } });
    const inline = (n: number) => ({ inputs: Array.from({ length: n }, () => pdf()) });
    expect(merge(inline(20)).inputs).toHaveLength(20);
    expect(refused(() => merge(inline(21)))).toEqual({ code: 'TOO_MANY_FILES', details: { file_count: 21, max_files: 20 } });
  });

  it('refuses a split into more than 500 ranges at submission, as the job itself would', () => {
    const ranges = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}-end`);
    const job = (n: number) => ({ operation: 'split', inputs: [{ s3_key: 'a', filename: 'big.pdf' }], split: { mode: 'ranges', ranges: ranges(n) } });
    expect(parsePdfJobRequest(job(500)).split).toMatchObject({ mode: 'ranges' });
    const err = refusal(() => parsePdfJobRequest(job(501)));
    expect({ code: err.code, details: err.details }).toEqual({ code: 'OUTPUT_COUNT_EXCEEDED', details: { filename: 'big.pdf', input_index: 0, output_count: 501, max_outputs: 500 } });
    expect(err.message).toContain('at most 500');
  });

  it('refuses in the spec order: operation, inputs, options object, split settings, options fields', () => {
    expect(refused(() => parsePdfJobRequest({ inputs: 5 }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'operation', operation: null } });
    expect(refused(() => parsePdfJobRequest([]))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'body' } });
    expect(refused(() => parsePdfJobRequest({ operation: 'split', split: 'x' })).code).toBe('MISSING_PDF');
    expect(refused(() => parsePdfJobRequest({ operation: 'split', inputs: [{ s3_key: 'a', filename: 'a.pdf', pages: '1' }] }))).toEqual({
      code: 'INVALID_PARAMETER',
      details: { parameter: 'inputs[0].pages', filename: 'a.pdf', input_index: 0 },
    });
    expect(refused(() => parsePdfJobRequest({ operation: 'merge', inputs: [{ s3_key: 'a' }, { filename: 'b.pdf' }] }))).toEqual({
      code: 'INVALID_PARAMETER',
      details: { parameter: 'inputs[1].s3_key', filename: 'b.pdf', input_index: 1 },
    });
    const one = [{ s3_key: 'a', filename: 'a.pdf' }];
    expect(refused(() => parsePdfJobRequest({ operation: 'split', inputs: one, split: { mode: 'x' }, options: 'x' })).details).toEqual({ parameter: 'options' });
    expect(refused(() => parsePdfJobRequest({ operation: 'split', inputs: one, split: { mode: 'every_n', every_n: 0.5 }, options: 'x' })).details).toEqual({ parameter: 'options' });
    expect(refused(() => parsePdfJobRequest({ operation: 'split', inputs: one, split: { mode: 'x' }, options: { filename_pattern: '{x}' } })).code).toBe('INVALID_SPLIT_MODE');
    expect(refused(() => parsePdfJobRequest({ operation: 'merge', inputs: [{ s3_key: 'a' }, { s3_key: 'b' }], split: 'ignored', options: { filename_pattern: '{x}', title: 5 } })).details).toEqual({
      parameter: 'options.title',
    });
  });
});

describe('POST /pdf/inspect', () => {
  const inspect = (json: unknown) => parseInspectRequest({ json });

  it('takes inline data, an upload, or a form file; for: "edit" or nothing', () => {
    expect(inspect({ input: { pdf_base64: PDF, filename: 'i.pdf' }, for: '' })).toMatchObject({ source: { kind: 'inline', filename: 'i.pdf' }, forEdit: false });
    expect(inspect({ s3_key: 'uploads/a.pdf', filename: 'u.pdf', for: 'edit' })).toEqual({ source: { kind: 'upload', s3_key: 'uploads/a.pdf', filename: 'u.pdf' }, forEdit: true });
    expect(parseInspectRequest({ form: { file: [file('f.pdf')], for: 'edit' } })).toMatchObject({ source: { kind: 'inline', filename: 'f.pdf' }, forEdit: true });
  });

  it('reads the top-level filename only for an upload', () => {
    expect(inspect({ input: { pdf_base64: PDF }, filename: 5 }).source).toMatchObject({ filename: 'input-1.pdf' });
    expect(refused(() => inspect({ s3_key: 'k', filename: 5 }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'filename', input_index: 0 } });
  });

  it('refuses in order: for, both inputs, s3_key, no input, the input fields', () => {
    expect(refused(() => inspect({ for: 'print', s3_key: 'k', input: {} }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'for', for: 'print' } });
    expect(refused(() => inspect({ s3_key: 5, input: null })).details).toEqual({ parameter: 's3_key' });
    expect(refused(() => inspect({ s3_key: '' })).details).toEqual({ parameter: 's3_key' });
    for (const body of [{}, { input: null }]) expect(refused(() => inspect(body)).code).toBe('MISSING_PDF');
    // An input that is not an object is malformed, as for a split: named, not reported missing.
    for (const input of ['x', 5, [], true]) expect(refused(() => inspect({ input }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'input' } });
    expect(refused(() => inspect({ input: { pdf_base64: '@@', filename: 'x.pdf' } }))).toEqual({ code: 'INVALID_PARAMETER', details: { filename: 'x.pdf', input_index: 0, parameter: 'input.pdf_base64' } });
    // An upload sent inside input: refused, saying where an s3_key goes (for an instant split: to the background jobs).
    expect(refusal(() => inspect({ input: { s3_key: 'uploads/a.pdf', filename: 'u.pdf' } })).message).toMatch(/An uploaded file \(s3_key\) goes at the top level of the body: \{"s3_key"/);
    expect(refusal(() => parseSplitRequest({ json: { input: { s3_key: 'uploads/a.pdf' }, split: { mode: 'each_page' } } })).message).toMatch(/An uploaded file \(s3_key\) goes to POST \/pdf\/jobs\.$/);
    // And for an instant merge whose inputs are uploads.
    const merge = refusal(() => parseMergeRequest({ json: { inputs: [{ s3_key: 'uploads/a.pdf' }, { s3_key: 'uploads/b.pdf' }] } }));
    expect(merge).toMatchObject({ code: 'MISSING_PDF', details: { parameter: 'inputs[0].pdf_base64', input_index: 0 } });
    expect(merge.message).toMatch(/An uploaded file \(s3_key\) goes to POST \/pdf\/jobs\.$/);
    expect(refused(() => parseInspectRequest({ form: { file: [file('a.pdf'), file('b.pdf')], for: 'x' } })).code).toBe('TOO_MANY_FILES');
    expect(refused(() => parseInspectRequest({ form: { file: [] } })).code).toBe('MISSING_PDF');
  });
});

describe('POST /pdf/upload-url body', () => {
  it('needs a whole number of bytes, at most 150 MB', () => {
    expect(parseUploadSize({ content_length_bytes: 150 * 1024 * 1024 })).toBe(150 * 1024 * 1024);
    expect(refused(() => parseUploadSize({ content_length_bytes: 150 * 1024 * 1024 + 1 }))).toEqual({
      code: 'PDF_INPUT_TOO_LARGE',
      details: { size_bytes: 150 * 1024 * 1024 + 1, max_bytes: 150 * 1024 * 1024 },
    });
    for (const body of [{}, null, [1], { content_length_bytes: null }, { content_length_bytes: 0 }, { content_length_bytes: 2.5 }, { content_length_bytes: '9' }]) {
      expect(refused(() => parseUploadSize(body))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'content_length_bytes' } });
    }
    // Past 2^53 a number is no longer a whole number to JavaScript: still too large, not malformed.
    expect(refused(() => parseUploadSize({ content_length_bytes: 1e20 }))).toEqual({ code: 'PDF_INPUT_TOO_LARGE', details: { size_bytes: 1e20, max_bytes: 150 * 1024 * 1024 } });
  });
});

describe('the schemas as the OpenAPI document reads them', () => {
  const schemas = { mergeJsonBodySchema, mergeFormSchema, splitJsonBodySchema, splitFormSchema, pdfJobBodySchema, inspectJsonBodySchema, inspectFormSchema, pdfUploadUrlBodySchema };

  /** Properties without a description (literals excepted), anywhere in a JSON schema. */
  function undescribed(node: unknown, path: string): string[] {
    if (!node || typeof node !== 'object') return [];
    const n = node as Record<string, unknown>;
    const own = Object.entries((n.properties ?? {}) as Record<string, Record<string, unknown>>).flatMap(([key, child]) => [
      ...(child.description || child.const !== undefined ? [] : [`${path}.${key}`]),
      ...undescribed(child, `${path}.${key}`),
    ]);
    const nested = [...((n.anyOf ?? []) as unknown[]), ...((n.oneOf ?? []) as unknown[]), ...(n.items ? [n.items] : [])].flatMap((child) => undescribed(child, path));
    return [...own, ...nested];
  }

  it.each(Object.entries(schemas))('%s converts to JSON Schema with every field described', (_name, schema) => {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
    expect(undescribed(json, '')).toEqual([]);
  });

  it('describes form files as binary and JSON form fields as text', () => {
    const json = z.toJSONSchema(mergeFormSchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, Record<string, unknown>> };
    expect(json.properties.files.items).toMatchObject({ type: 'string', format: 'binary' });
    expect(json.properties.page_ranges.type).toBe('string');
  });
});

describe('oversized input arrays', () => {
  it('refuses a count past the limit before reading any element (a 2 MB body of 700,000 inputs)', () => {
    // Every element was validated and then matched against every issue: minutes for one request. Element reads are
    // counted through a proxy (run where a hang fails).
    const outcomes = runIsolated(`
      const { parseMergeRequest, parsePdfJobRequest } = load('functions/core/pdfops/requests.ts');
      let reads = 0;
      const counted = () => new Proxy(Array.from({ length: 700_000 }, () => ({})), {
        get: (target, key) => { if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads += 1; return target[key]; },
      });
      const attempt = (fn) => { reads = 0; try { fn(); return { reads }; } catch (err) { return { code: err.code, details: err.details, reads }; } };
      console.log(JSON.stringify([
        attempt(() => parseMergeRequest({ json: { inputs: counted() } })),
        attempt(() => parsePdfJobRequest({ operation: 'merge', inputs: counted() })),
        attempt(() => parsePdfJobRequest({ operation: 'split', inputs: counted(), split: { mode: 'each_page' } })),
      ]));
    `) as { code: string; details: Record<string, unknown>; reads: number }[];
    expect(outcomes.map((o) => o.code)).toEqual(['TOO_MANY_FILES', 'TOO_MANY_FILES', 'TOO_MANY_FILES']);
    // (A job request names its first input in split refusals: two reads of element 0.)
    expect(Math.max(...outcomes.map((o) => o.reads))).toBeLessThanOrEqual(2);
    expect(outcomes[0].details).toMatchObject({ file_count: 700_000, max_files: 20 });
    expect(outcomes[1].details).toMatchObject({ file_count: 700_000, max_files: 100 });
  });
});
