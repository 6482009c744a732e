import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRawStream, PDFRef } from 'pdf-lib';
import { ServiceError } from '../../../../functions/core/errors';
import { Deadline, PdfDeadlineExceeded } from '../../../../functions/core/pdf/errors';
import { parseFilenamePattern } from '../../../../functions/core/pdf/filenames';
import { INSTANT_LIMITS, JOB_LIMITS, type PdfToolLimits } from '../../../../functions/core/pdf/limits';
import { type MergeSpec, type SplitMode, openInput, outputsAtLeast, planMerge, planSplit, produce } from '../../../../functions/core/pdf/operations';
import { parsePageRange } from '../../../../functions/core/pdf/page-ranges';
import { inspectPdf } from '../../../../functions/core/pdf/inspect';
import { PdfReader, textOf } from '../../../../functions/core/pdf/reader';
import { OutputDocument } from '../../../../functions/core/pdf/writer';
import { readPdf } from '../../../support/pdf';
import { pdfWithBookmarksAndLinks, pdfWithForm, pdfWithSignature, simplePdf } from '../../../support/pdf-fixtures';

const file = (bytes: Uint8Array, filename: string, index = 0) => ({ bytes, filename, index });

async function merge(inputs: { bytes: Uint8Array; filename: string; pages?: string }[], opts: Partial<MergeSpec> = {}, limits: PdfToolLimits = INSTANT_LIMITS) {
  const spec: MergeSpec = { inputs: inputs.map((i, index) => ({ ...file(i.bytes, i.filename, index), pages: i.pages ? parsePageRange(i.pages) : null })), ...opts };
  const plan = planMerge(spec, spec.inputs.map((i) => openInput(i)), limits);
  return produce(plan, { limits });
}

async function split(bytes: Uint8Array, mode: SplitMode, pattern?: string, filename = 'report.pdf', limits: PdfToolLimits = INSTANT_LIMITS) {
  const input = file(bytes, filename);
  const plan = planSplit({ input, split: mode, pattern: parseFilenamePattern(pattern) }, openInput(input), limits);
  return produce(plan, { limits });
}

/** All objects of an output, resolved. */
function objectsOf(bytes: Uint8Array) {
  const r = PdfReader.open(bytes);
  const xref = (r as unknown as { xref: Map<number, unknown> }).xref;
  return { reader: r, objects: [...xref.keys()].map((n) => r.lookupRef(PDFRef.of(n))).filter(Boolean) };
}

async function refusal(p: Promise<unknown> | (() => unknown)): Promise<ServiceError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

let a: Uint8Array;
let b: Uint8Array;
let rotated: Uint8Array;
beforeAll(async () => {
  a = await simplePdf(3, { label: 'A' });
  b = await simplePdf(2, { label: 'B', objectStreams: true });
  rotated = await simplePdf(2, { label: 'R', size: [300, 500], rotate: 90 });
});

describe('merge', () => {
  it('copies the selected pages in the written order, repeats included, keeping size and rotation', async () => {
    const result = await merge([
      { bytes: a, filename: 'a.pdf', pages: '3,1,1' },
      { bytes: rotated, filename: 'r.pdf', pages: '2' },
      { bytes: b, filename: 'b.pdf' },
    ]);
    expect(result.plan).toMatchObject({ inputPages: 7, pagesProcessed: 6 });
    const [out] = result.files;
    expect(out).toMatchObject({ name: 'merged.pdf', pages: 6, page_range: '1-6', warnings: [] });
    const pages = await readPdf(out.bytes);
    expect(pages.map((p) => p.text)).toEqual(['A page 3', 'A page 1', 'A page 1', 'R page 2', 'B page 1', 'B page 2']);
    expect(pages[3]).toMatchObject({ width: 300, height: 500, rotate: 90 });
    expect(pages[0]).toMatchObject({ width: 595, height: 842, rotate: 0 });
  });

  it('gives a repeated page its own page object but shares content and fonts; copies each font once', async () => {
    const { files } = await merge([
      { bytes: a, filename: 'a.pdf', pages: '2,2,1-3' },
      { bytes: b, filename: 'b.pdf' },
    ]);
    const { reader, objects } = objectsOf(files[0].bytes);
    const pages = reader.pages();
    expect(new Set(pages.map((p) => p.ref)).size).toBe(pages.length);
    expect(pages[0].dict).not.toBe(pages[1].dict);
    expect(String(pages[0].dict.get(PDFName.of('Contents')))).toBe(String(pages[1].dict.get(PDFName.of('Contents'))));
    const fonts = objects.filter((o) => o instanceof PDFDict && o.get(PDFName.of('Type')) === PDFName.of('Font'));
    expect(fonts).toHaveLength(2); // one Helvetica from a.pdf, one from b.pdf, however many pages use them
  });

  it('sets the title and sanitises output_filename', async () => {
    const { files } = await merge([{ bytes: a, filename: 'a.pdf' }, { bytes: b, filename: 'b.pdf' }], { title: 'Quarterly — Q3', outputFilename: 'Q3/report:final.pdf' });
    expect(files[0].name).toBe('Q3_report_final.pdf');
    const r = PdfReader.open(files[0].bytes);
    const info = r.resolve(r.trailer.get(PDFName.of('Info'))) as PDFDict;
    expect(textOf(info.get(PDFName.of('Title')))).toBe('Quarterly — Q3');
  });

  it('keeps annotations (on their page), re-points internal links, and warns that bookmarks are dropped', async () => {
    const source = await pdfWithBookmarksAndLinks();
    const { files, warnings } = await merge([{ bytes: source, filename: 'book.pdf' }, { bytes: b, filename: 'b.pdf' }]);
    expect(warnings).toEqual(['BOOKMARKS_NOT_PRESERVED']);
    const r = PdfReader.open(files[0].bytes);
    const pages = r.pages();
    const annots = (i: number) => (r.resolve(pages[i].dict.get(PDFName.of('Annots'))) as PDFArray | undefined)?.asArray().map((x) => r.resolve(x) as PDFDict) ?? [];
    const link = annots(0)[0];
    expect((link.get(PDFName.of('Dest')) as PDFArray).get(0)).toBe(pages[2].ref);
    const [web, note] = annots(1);
    const action = r.resolve(web.get(PDFName.of('A')));
    expect(action).toBeInstanceOf(PDFDict);
    expect((action as PDFDict).get(PDFName.of('S'))).toBe(PDFName.of('URI'));
    expect(textOf(r.resolve((action as PDFDict).get(PDFName.of('URI'))))).toBe('https://example.com/');
    expect(note.get(PDFName.of('Subtype'))).toBe(PDFName.of('Text'));
    expect(note.get(PDFName.of('P'))).toBe(pages[1].ref);
    expect(r.catalog.get(PDFName.of('Outlines'))).toBeUndefined();
  });

  it('drops an internal link whose target page is not in the output, keeps web links', async () => {
    const { files } = await split(await pdfWithBookmarksAndLinks(), { mode: 'extract', pages: parsePageRange('1,2') });
    const r = PdfReader.open(files[0].bytes);
    const [p1, p2] = r.pages();
    expect(p1.dict.get(PDFName.of('Annots'))).toBeUndefined();
    expect((r.resolve(p2.dict.get(PDFName.of('Annots'))) as PDFArray).size()).toBe(2);
  });

  it('flattens form fields (shown, no longer fillable) and says so, only when a copied page had fields', async () => {
    const form = await pdfWithForm();
    const withFields = await merge([{ bytes: form, filename: 'form.pdf' }, { bytes: b, filename: 'b.pdf' }]);
    expect(withFields.warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED']);
    expect(withFields.files[0].warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED']);
    const { reader, objects } = objectsOf(withFields.files[0].bytes);
    expect(reader.catalog.get(PDFName.of('AcroForm'))).toBeUndefined();
    expect(objects.some((o) => o instanceof PDFDict && o.get(PDFName.of('Subtype')) === PDFName.of('Widget'))).toBe(false);
    const pages = await readPdf(withFields.files[0].bytes);
    expect(pages[0].text).toContain('Ada Lovelace'); // the field's value is now page content

    const withoutFields = await merge([{ bytes: form, filename: 'form.pdf', pages: '2' }, { bytes: b, filename: 'b.pdf' }]);
    expect(withoutFields.warnings).toEqual([]);
  });

  it('says an XFA form is not preserved, as inspect predicts, though its pages carry no widgets', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([595, 842]);
    const xfa = doc.context.flateStream('<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"></xdp:xdp>');
    doc.catalog.set(PDFName.of('AcroForm'), doc.context.obj({ Fields: [], XFA: doc.context.register(xfa) }));
    const form = await doc.save();
    const merged = await merge([{ bytes: form, filename: 'xfa.pdf' }, { bytes: b, filename: 'b.pdf' }]);
    expect(merged.warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED']);
    expect(merged.files[0].warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED']);
    expect(inspectPdf(form, { filename: 'xfa.pdf', maxPages: 2000, forEdit: false }).warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED']);
  });

  it('warns that signatures are invalidated when a signed document is used', async () => {
    const { warnings } = await merge([{ bytes: await pdfWithSignature(), filename: 'signed.pdf' }, { bytes: a, filename: 'a.pdf' }]);
    expect(warnings).toEqual(['SIGNATURE_INVALIDATED']);
  });

  it('refuses more selected pages than the limit, naming the input where the total passed it', async () => {
    const limits = { ...INSTANT_LIMITS, maxPages: 4 };
    const err = await refusal(() => merge([{ bytes: a, filename: 'a.pdf' }, { bytes: a, filename: 'a2.pdf', pages: '1-2' }], {}, limits));
    expect(err.code).toBe('PDF_PAGE_LIMIT_EXCEEDED');
    expect(err.details).toMatchObject({ pages: 5, max_pages: 4, filename: 'a2.pdf', input_index: 1 });
    // The count is the whole request's, not the running total where it passed the limit (it said 5 for 7 here).
    const more = await refusal(() => merge([{ bytes: a, filename: 'a.pdf' }, { bytes: a, filename: 'a2.pdf', pages: '1-2' }, { bytes: a, filename: 'a3.pdf', pages: '2-3' }], {}, limits));
    expect(more.details).toMatchObject({ pages: 7, max_pages: 4, filename: 'a2.pdf', input_index: 1 });
  });

  it('refuses pages past the end naming file, input and total', async () => {
    const err = await refusal(() => merge([{ bytes: a, filename: 'a.pdf' }, { bytes: b, filename: 'b.pdf', pages: '1-4' }]));
    expect(err.code).toBe('PAGE_OUT_OF_RANGE');
    expect(err.details).toMatchObject({ filename: 'b.pdf', input_index: 1, total_pages: 2, parameter: 'inputs[1].pages' });
    // Also when the range would pass the page limit as well: the page past the end is the mistake to report.
    const far = await refusal(() => merge([{ bytes: a, filename: 'a.pdf' }, { bytes: b, filename: 'b.pdf', pages: '1-1000' }], {}, { ...INSTANT_LIMITS, maxPages: 10 }));
    expect(far.code).toBe('PAGE_OUT_OF_RANGE');
    expect(far.details).toMatchObject({ filename: 'b.pdf', total_pages: 2, page: 1000 });
  });
});

describe('split', () => {
  let twelve: Uint8Array;
  beforeAll(async () => {
    twelve = await simplePdf(12, { label: 'S' });
  });

  it('extract: one file with the chosen pages', async () => {
    const { files } = await split(twelve, { mode: 'extract', pages: parsePageRange('3-5,1') });
    expect(files.map((f) => [f.name, f.pages, f.page_range])).toEqual([['report-001.pdf', 4, '3-5,1']]);
    expect((await readPdf(files[0].bytes)).map((p) => p.text)).toEqual(['S page 3', 'S page 4', 'S page 5', 'S page 1']);
  });

  it('ranges (overlapping allowed), every_n (last shorter) and each_page', async () => {
    const ranges = await split(twelve, { mode: 'ranges', ranges: [parsePageRange('1-3'), parsePageRange('2-4'), parsePageRange('12-end')] });
    expect(ranges.files.map((f) => f.page_range)).toEqual(['1-3', '2-4', '12']);
    const everyN = await split(twelve, { mode: 'every_n', every_n: 5 });
    expect(everyN.files.map((f) => [f.page_range, f.pages])).toEqual([['1-5', 5], ['6-10', 5], ['11-12', 2]]);
    // An every_n past the page count, however large, is one file of every page.
    expect((await split(twelve, { mode: 'every_n', every_n: 1e308 })).files.map((f) => [f.page_range, f.pages])).toEqual([['1-12', 12]]);
    const each = await split(twelve, { mode: 'each_page' });
    expect(each.files).toHaveLength(12);
    expect(each.files[11]).toMatchObject({ index: 11, name: 'report-012.pdf', page_range: '12', pages: 1 });
    expect((await readPdf(each.files[6].bytes))[0].text).toBe('S page 7');
  });

  it('names files by pattern: tokens, unsafe characters replaced, duplicates suffixed -2, -3', async () => {
    const tokens = await split(twelve, { mode: 'every_n', every_n: 6 }, 'part {index} of {basename} ({pages}) #{index:03}.pdf', 'My: Report?.PDF');
    expect(tokens.files.map((f) => f.name)).toEqual(['part 1 of My_ Report_ (1-6) #001.pdf', 'part 2 of My_ Report_ (7-12) #002.pdf']);
    const dupes = await split(twelve, { mode: 'ranges', ranges: ['1', '2', '3'].map((r) => parsePageRange(r)) }, '{basename}.pdf');
    expect(dupes.files.map((f) => f.name)).toEqual(['report.pdf', 'report-2.pdf', 'report-3.pdf']);
    const slashes = await split(twelve, { mode: 'extract', pages: parsePageRange('1') }, '../{basename}/x.pdf');
    expect(slashes.files[0].name).toBe('_report_x.pdf');
  });

  it('copies shared resources once per output file', async () => {
    const { files } = await split(twelve, { mode: 'every_n', every_n: 4 });
    for (const f of files) {
      const fonts = objectsOf(f.bytes).objects.filter((o) => o instanceof PDFDict && o.get(PDFName.of('Type')) === PDFName.of('Font'));
      expect(fonts).toHaveLength(1);
    }
  });

  it('counts document pages against the page limit, and refuses a file whose selection repeats past it before expanding it', async () => {
    const repeated = Array(500).fill('1-end').join(',');
    const extract = await refusal(() => split(twelve, { mode: 'extract', pages: parsePageRange(repeated) }));
    expect(extract).toMatchObject({
      code: 'OUTPUT_TOO_LARGE',
      details: { parameter: 'split.pages', output_index: 0, pages: 6000, max_pages_per_file: INSTANT_LIMITS.maxPages, filename: 'report.pdf' },
    });
    const ranges = await refusal(() => split(twelve, { mode: 'ranges', ranges: [parsePageRange('1'), ...Array.from({ length: 99 }, () => parsePageRange(repeated))] }));
    expect(ranges).toMatchObject({ code: 'OUTPUT_TOO_LARGE', details: { parameter: 'split.ranges[1]', output_index: 1, pages: 6000 } });
    // Overlapping ranges of the whole document are fine: the split processes the document's 12 pages, within 12.
    const twelvePages = { ...INSTANT_LIMITS, maxPages: 12 };
    const overlapping = await split(twelve, { mode: 'ranges', ranges: [parsePageRange('1-end'), parsePageRange('1-end')] }, undefined, 'report.pdf', twelvePages);
    expect(overlapping.files.map((f) => f.pages)).toEqual([12, 12]);
    expect(overlapping.plan.pagesProcessed).toBe(12);
    expect((await refusal(() => split(twelve, { mode: 'extract', pages: parsePageRange('1-end,1') }, undefined, 'report.pdf', twelvePages))).code).toBe('OUTPUT_TOO_LARGE');
    // Within the limit, repeats are fine.
    expect((await split(twelve, { mode: 'extract', pages: parsePageRange('1-end,1-end') })).files[0].pages).toBe(24);
    // A page past the end is still named as such, not as a page-limit refusal.
    expect((await refusal(() => split(twelve, { mode: 'ranges', ranges: [parsePageRange('1'), parsePageRange('99')] }))).code).toBe('PAGE_OUT_OF_RANGE');
  });

  it('refuses too many outputs, too many pages, too large outputs, and stops at the deadline', async () => {
    const each = await refusal(() => split(twelve, { mode: 'each_page' }, undefined, 'r.pdf', { ...INSTANT_LIMITS, maxOutputs: 10 }));
    expect(each.code).toBe('OUTPUT_COUNT_EXCEEDED');
    expect(each.details).toMatchObject({ output_count: 12, max_outputs: 10, filename: 'r.pdf', input_index: 0 });
    const pages = await refusal(() => split(twelve, { mode: 'each_page' }, undefined, 'r.pdf', { ...INSTANT_LIMITS, maxPages: 11 }));
    expect(pages.code).toBe('PDF_PAGE_LIMIT_EXCEEDED');
    const size = await refusal(() => split(twelve, { mode: 'each_page' }, undefined, 'r.pdf', { ...INSTANT_LIMITS, maxOutputBytes: 5000 }));
    expect(size.code).toBe('OUTPUT_TOO_LARGE');
    const input = file(twelve, 'r.pdf');
    const plan = planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    await expect(produce(plan, { limits: INSTANT_LIMITS, deadline: Deadline.in(-1) })).rejects.toBeInstanceOf(PdfDeadlineExceeded);
  });

  it('takes exactly as many files as the limit in every mode, and refuses one more ranges than files before copying', async () => {
    const twelveFiles = { ...INSTANT_LIMITS, maxOutputs: 12 };
    expect((await split(twelve, { mode: 'each_page' }, undefined, 'r.pdf', twelveFiles)).files).toHaveLength(12);
    expect((await split(twelve, { mode: 'every_n', every_n: 1 }, undefined, 'r.pdf', twelveFiles)).files).toHaveLength(12);
    const ranges = (n: number) => ({ mode: 'ranges', ranges: Array.from({ length: n }, () => parsePageRange('1')) }) as SplitMode;
    expect((await split(twelve, ranges(12), undefined, 'r.pdf', twelveFiles)).files).toHaveLength(12);
    expect(await refusal(() => split(twelve, ranges(13), undefined, 'r.pdf', twelveFiles))).toMatchObject({
      code: 'OUTPUT_COUNT_EXCEEDED',
      details: { output_count: 13, max_outputs: 12, filename: 'r.pdf', input_index: 0 },
    });
  });

  it('refuses files that pass the output limit once made, though their planned floor fitted', async () => {
    const input = file(twelve, 'r.pdf');
    const plan = planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    const made = (await produce(plan, { limits: INSTANT_LIMITS })).files.reduce((n, f) => n + f.size_bytes, 0);
    // Page dictionaries and cross-reference sections weigh something too: the files are larger than their floor.
    expect(outputsAtLeast(plan.outputs)).toBeLessThan(made - 1);
    const limits = { ...INSTANT_LIMITS, maxOutputBytes: made - 1 };
    const tight = planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(input), limits);
    expect(await refusal(() => produce(tight, { limits }))).toMatchObject({ code: 'OUTPUT_TOO_LARGE', details: { max_bytes: made - 1, output_count: 12 } });
    expect((await produce(tight, { limits: { ...limits, maxOutputBytes: made } })).files).toHaveLength(12);
  });

  it('does not deliver a file whose writing ended after the deadline (the clock is looked at after the last byte too)', async () => {
    const input = file(twelve, 'r.pdf');
    const plan = planSplit({ input, split: { mode: 'extract', pages: parsePageRange('1-end') }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    let looks = 0;
    let looksWhenWritten = -1;
    const save = OutputDocument.prototype.save;
    const spy = jest.spyOn(OutputDocument.prototype, 'save').mockImplementation(function (this: OutputDocument) {
      const bytes = save.call(this);
      looksWhenWritten = looks;
      return bytes;
    });
    try {
      // A deadline that passes at the first look after the file is written.
      const deadline = new Deadline(0, () => (looksWhenWritten >= 0 ? ++looks : (++looks, -1)));
      await expect(produce(plan, { limits: INSTANT_LIMITS, deadline })).rejects.toBeInstanceOf(PdfDeadlineExceeded);
      expect(looks).toBe(looksWhenWritten + 1);
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses before copying when the files certainly pass the output limit, and never over-estimates them', async () => {
    const input = file(twelve, 'r.pdf');
    const plan = (limits: PdfToolLimits, mode: SplitMode = { mode: 'ranges', ranges: Array.from({ length: 10 }, () => parsePageRange('1-end')) }) =>
      planSplit({ input, split: mode, pattern: parseFilenamePattern(undefined) }, openInput(input), limits);
    const atLeast = outputsAtLeast(plan(INSTANT_LIMITS).outputs);
    expect(atLeast).toBeGreaterThan(0);
    // Counting stops after a bounded number of streams, and what it has summed is still a floor.
    const early = outputsAtLeast(plan(INSTANT_LIMITS).outputs, Infinity, 5);
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(atLeast);
    // Ten copies of the document: certainly over a limit below what ten content sets weigh, found while planning.
    expect(() => plan({ ...INSTANT_LIMITS, maxOutputBytes: atLeast - 1 })).toThrow(expect.objectContaining({ code: 'OUTPUT_TOO_LARGE', details: expect.objectContaining({ output_count: 10 }) }));
    const mergeSpec: MergeSpec = { inputs: [0, 1].map((index) => ({ ...file(twelve, `m${index}.pdf`, index), pages: null })) };
    expect(() => planMerge(mergeSpec, mergeSpec.inputs.map((i) => openInput(i)), { ...INSTANT_LIMITS, maxOutputBytes: atLeast / 10 })).toThrow(
      expect.objectContaining({ code: 'OUTPUT_TOO_LARGE' }),
    );
    // The floor is a floor: for every fixture and mode the files made weigh at least that much.
    const fixtures = [twelve, a, rotated, await pdfWithBookmarksAndLinks(), await pdfWithForm(), await pdfWithSignature()];
    for (const bytes of fixtures) {
      for (const mode of [{ mode: 'each_page' }, { mode: 'extract', pages: parsePageRange('1-end,1') }] as SplitMode[]) {
        const split = planSplit({ input: file(bytes, 'f.pdf'), split: mode, pattern: parseFilenamePattern(undefined) }, openInput(file(bytes, 'f.pdf')), INSTANT_LIMITS);
        const made = await produce(split, { limits: INSTANT_LIMITS });
        expect(outputsAtLeast(split.outputs)).toBeLessThanOrEqual(made.files.reduce((n, f) => n + f.size_bytes, 0));
      }
    }
  });

  it('counts in its floor the streams nested resources reach: an image drawn by a Form XObject, a font file', async () => {
    const doc = await PDFDocument.create();
    const ctx = doc.context;
    const image = ctx.register(ctx.stream(new Uint8Array(100_000).fill(66), { Type: 'XObject', Subtype: 'Image', Width: 10, Height: 10, ColorSpace: 'DeviceGray', BitsPerComponent: 8 }));
    const form = ctx.register(ctx.stream('q /Im Do Q', { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 10, 10], Resources: { XObject: { Im: image } } }));
    const fontFile = ctx.register(ctx.stream(new Uint8Array(50_000).fill(67)));
    const font = ctx.obj({ Type: 'Font', Subtype: 'TrueType', BaseFont: 'X', FontDescriptor: ctx.obj({ Type: 'FontDescriptor', FontName: 'X', FontFile2: fontFile }) });
    for (let i = 0; i < 4; i++) {
      const page = doc.addPage([100, 100]);
      page.node.set(PDFName.of('Resources'), ctx.obj({ XObject: { Fm: form }, Font: { F1: font } }));
      page.node.set(PDFName.of('Contents'), ctx.register(ctx.stream('/Fm Do')));
    }
    const bytes = await doc.save({ useObjectStreams: false });
    const input = file(bytes, 'nested.pdf');
    const planned = planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    // Each of the four files carries the image and the font file once.
    const floor = outputsAtLeast(planned.outputs);
    expect(floor).toBeGreaterThanOrEqual(4 * 150_000);
    const made = await produce(planned, { limits: INSTANT_LIMITS });
    expect(floor).toBeLessThanOrEqual(made.files.reduce((n, f) => n + f.size_bytes, 0));
    // So a limit below that is refused while planning, before any file is made.
    expect(() => planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(input), { ...INSTANT_LIMITS, maxOutputBytes: 500_000 })).toThrow(
      expect.objectContaining({ code: 'OUTPUT_TOO_LARGE' }),
    );
  });

  it('copies an object once however many generations name it (a small file cannot ask for a huge one)', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([200, 200]);
    const blob = doc.context.register(doc.context.stream(new Uint8Array(200_000).fill(65)));
    // The same object named 100 times, under generations 0..99: the reader finds objects by number alone.
    page.node.set(PDFName.of('Junk'), doc.context.obj(Array.from({ length: 100 }, (_, gen) => PDFRef.of(blob.objectNumber, gen))));
    const bytes = await doc.save({ useObjectStreams: false });
    const { files } = await split(bytes, { mode: 'extract', pages: parsePageRange('1') });
    expect(files[0].size_bytes).toBeLessThan(400_000);
  });

  it('never pulls in the catalog or other pages through a reference under another generation', async () => {
    const doc = await PDFDocument.load(await simplePdf(3, { label: 'G' }));
    const catalog = doc.context.trailerInfo.Root as PDFRef;
    const other = doc.getPage(1).ref;
    doc.getPage(0).node.set(PDFName.of('Junk'), doc.context.obj([PDFRef.of(catalog.objectNumber, 7), PDFRef.of(other.objectNumber, 3)]));
    const { files } = await split(await doc.save({ useObjectStreams: false }), { mode: 'extract', pages: parsePageRange('1') });
    const pages = objectsOf(files[0].bytes).objects.filter((o) => o instanceof PDFDict && o.get(PDFName.of('Type')) === PDFName.of('Page'));
    expect(pages).toHaveLength(1);
  });

  it('stops building a file once it passes the bytes left, instead of finishing it first', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([200, 200]);
    // Heavy direct data on the page itself: every copy of the page carries it again.
    page.node.set(PDFName.of('Junk'), doc.context.obj(Array.from({ length: 50_000 }, (_, i) => PDFNumber.of(i))));
    const bytes = await doc.save();
    const input = file(bytes, 'heavy.pdf');
    const plan = planSplit({ input, split: { mode: 'extract', pages: parsePageRange(Array(400).fill('1').join(',')) }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    let copied = 0;
    const limits = { ...INSTANT_LIMITS, maxOutputBytes: 3_000_000 };
    await expect(produce(plan, { limits, onProgress: (pages) => (copied = pages) })).rejects.toMatchObject({ code: 'OUTPUT_TOO_LARGE', details: { filename: 'heavy.pdf' } });
    // About 300 KB a copy: stopped after a dozen copies, not 400.
    expect(copied).toBeLessThan(40);
  });

  it('stops building a file once it holds more objects than one file may (annotations copied with every repeat of their page)', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([200, 200]);
    const notes = Array.from({ length: 200 }, (_, i) => doc.context.register(doc.context.obj({ Type: 'Annot', Subtype: 'Text', Rect: [i, 0, i + 1, 1] })));
    page.node.set(PDFName.of('Annots'), doc.context.obj(notes));
    const input = file(await doc.save(), 'notes.pdf');
    const plan = planSplit({ input, split: { mode: 'extract', pages: parsePageRange(Array(100).fill('1').join(',')) }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    let copied = 0;
    const limits = { ...INSTANT_LIMITS, maxObjectsPerOutput: 5_000 };
    const err = await refusal(() => produce(plan, { limits, onProgress: (pages) => (copied = pages) }));
    expect(err).toMatchObject({ code: 'OUTPUT_TOO_LARGE', details: { filename: 'notes.pdf', max_objects: 5_000, output_count: 1 } });
    expect(err.message).toMatch(/more than 5,000 PDF objects/);
    // About 200 objects a copy: stopped at the 25th copy, not after 100.
    expect(copied).toBeLessThan(30);
    // Within the limit the same file is made.
    expect((await produce(plan, { limits: INSTANT_LIMITS })).files[0].pages).toBe(100);
  });

  it('writes files other readers accept: a classic xref for small files, object streams and an xref stream for larger ones', async () => {
    const hasObjectStreams = (bytes: Uint8Array) => objectsOf(bytes).objects.some((o) => o instanceof PDFRawStream && o.dict.get(PDFName.of('Type')) === PDFName.of('ObjStm'));
    const small = await split(await pdfWithBookmarksAndLinks(), { mode: 'each_page' });
    for (const f of small.files) {
      expect(Buffer.from(f.bytes.subarray(0, 8)).toString()).toBe('%PDF-1.7');
      expect(await readPdf(f.bytes)).toHaveLength(1);
      expect(hasObjectStreams(f.bytes)).toBe(false);
    }
    const large = await split(twelve, { mode: 'extract', pages: parsePageRange('1-end') });
    expect(hasObjectStreams(large.files[0].bytes)).toBe(true);
    expect((await readPdf(large.files[0].bytes)).map((p) => p.text)).toEqual(Array.from({ length: 12 }, (_, i) => `S page ${i + 1}`));
  });
});

describe('background job limits at their values', () => {
  const planJobMerge = (inputs: { bytes: Uint8Array; pages?: string }[]) => {
    const spec: MergeSpec = { inputs: inputs.map((i, index) => ({ ...file(i.bytes, `in${index}.pdf`, index), pages: i.pages ? parsePageRange(i.pages) : null })) };
    return planMerge(spec, spec.inputs.map((i) => openInput(i)), JOB_LIMITS);
  };
  const planJobSplit = (bytes: Uint8Array, mode: SplitMode) => {
    const input = file(bytes, 'big.pdf');
    return planSplit({ input, split: mode, pattern: parseFilenamePattern(undefined) }, openInput(input), JOB_LIMITS);
  };

  it('merges 5000 selected pages and refuses 5001, naming the input that passed the limit', async () => {
    const hundred = await simplePdf(100);
    const times49 = Array(49).fill('1-end').join(',');
    expect(planJobMerge([{ bytes: hundred, pages: times49 }, { bytes: hundred }]).pagesProcessed).toBe(5000);
    const err = await refusal(() => planJobMerge([{ bytes: hundred, pages: times49 }, { bytes: hundred }, { bytes: a, pages: '3' }]));
    expect(err).toMatchObject({ code: 'PDF_PAGE_LIMIT_EXCEEDED', details: { pages: 5001, max_pages: 5000, filename: 'in2.pdf', input_index: 2 } });
  });

  it('splits a 5000-page document and refuses one of 5001; 500 files and not 501', async () => {
    const doc = await simplePdf(5001);
    const fiveThousand = await (async () => {
      const d = await PDFDocument.load(doc);
      d.removePage(5000);
      return d.save({ useObjectStreams: false });
    })();
    expect(planJobSplit(fiveThousand, { mode: 'every_n', every_n: 10 }).outputs).toHaveLength(500);
    const pages = await refusal(() => planJobSplit(doc, { mode: 'extract', pages: parsePageRange('1') }));
    expect(pages).toMatchObject({ code: 'PDF_PAGE_LIMIT_EXCEEDED', details: { pages: 5001, max_pages: 5000 } });
    const files = await refusal(() => planJobSplit(fiveThousand, { mode: 'every_n', every_n: 9 }));
    expect(files).toMatchObject({ code: 'OUTPUT_COUNT_EXCEEDED', details: { output_count: 556, max_outputs: 500 } });
    const five01 = await simplePdf(501);
    expect(planJobSplit(five01, { mode: 'ranges', ranges: Array(500).fill(parsePageRange('1')) }).outputs).toHaveLength(500);
    expect(await refusal(() => planJobSplit(five01, { mode: 'each_page' }))).toMatchObject({ code: 'OUTPUT_COUNT_EXCEEDED', details: { output_count: 501, max_outputs: 500 } });
  }, 60_000);
});
