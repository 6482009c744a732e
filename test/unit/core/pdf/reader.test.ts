import { PDFDict, PDFName } from 'pdf-lib';
import { refusal, thrownBy } from '../../../support/errors';
import { unpredict } from '../../../../functions/core/pdf/filters';
import { openInput } from '../../../../functions/core/pdf/operations';
import { PdfReader } from '../../../../functions/core/pdf/reader';
import { PdfProblem } from '../../../../functions/core/pdf/errors';
import {
  NOT_A_PDF,
  deeplyNestedPdf,
  encryptedPdf,
  simplePdf,
  truncated,
  xrefPointingNowhere,
  zeroPagePdf,
} from '../../../support/pdf-fixtures';

const problemOf = (fn: () => unknown) => thrownBy(fn, PdfProblem);


const input = (bytes: Uint8Array) => ({ bytes, filename: 'in.pdf', index: 3 });

describe('PdfReader', () => {
  it('reads pages of a classic-xref file and of an object-stream/xref-stream file', async () => {
    for (const objectStreams of [false, true]) {
      const r = PdfReader.open(await simplePdf(3, { objectStreams }));
      expect(r.encrypted).toBe(false);
      expect(r.pages()).toHaveLength(3);
      expect(r.pages()[0].mediaBox).toBeDefined();
    }
  });

  it('parses objects lazily: opening reads the structure, not every object', async () => {
    const r = PdfReader.open(await simplePdf(200));
    const cache = (r as unknown as { cache: Map<number, unknown> }).cache;
    expect(cache.size).toBeLessThan(5);
    r.pages();
    expect(cache.size).toBeLessThan(210); // page objects, not their contents or fonts
  });

  it('repairs object offsets that are off by scanning the file once', async () => {
    const text = Buffer.from(await simplePdf(2)).toString('latin1');
    // Shift every object by inserting bytes after the header, without touching the xref offsets...
    const shifted = text.replace('%PDF-1.7\n', '%PDF-1.7\n%padding-padding\n');
    // ...but keep startxref right, so only the object offsets are wrong.
    const delta = shifted.length - text.length;
    const fixed = shifted.replace(/startxref\s+(\d+)/, (_m, n) => `startxref\n${Number(n) + delta}`);
    const r = PdfReader.open(Buffer.from(fixed, 'latin1'));
    expect(r.pages()).toHaveLength(2);
  });

  it.each([
    ['a truncated file', async () => truncated(await simplePdf(3)), 'truncated'],
    ['an xref pointing nowhere', async () => xrefPointingNowhere(await simplePdf(3)), 'xref_not_found'],
    ['not a PDF', async () => NOT_A_PDF, 'not_a_pdf'],
    ['an empty file', async () => new Uint8Array(0), 'not_a_pdf'],
  ])('refuses %s as INVALID_PDF naming the input', async (_name, make, reason) => {
    const bytes = await make();
    expect(problemOf(() => PdfReader.open(bytes))).toMatchObject({ code: 'INVALID_PDF', reason });
    const err = refusal(() => openInput(input(bytes)));
    expect(err.code).toBe('INVALID_PDF');
    expect(err.details).toMatchObject({ filename: 'in.pdf', input_index: 3, reason });
  });

  it('refuses encrypted PDFs, including those that open without a password (owner password only)', async () => {
    for (const passwords of [{ userPassword: 'secret', ownerPassword: 'owner' }, { userPassword: '', ownerPassword: 'owner' }]) {
      const bytes = await encryptedPdf(passwords);
      expect(PdfReader.open(bytes).encrypted).toBe(true);
      const err = refusal(() => openInput(input(bytes)));
      expect(err.code).toBe('PDF_ENCRYPTED');
      expect(err.details).toMatchObject({ filename: 'in.pdf', input_index: 3 });
    }
  });

  it('refuses a document without pages', async () => {
    expect(refusal(() => openInput(input(Buffer.from([]))))).toMatchObject({ code: 'INVALID_PDF' });
    const err = refusal(() => openInput(input(Buffer.from(zeroPagePdfSync)))); // built below
    expect(err.code).toBe('PDF_NO_PAGES');
  });

  it('reports hostile nesting as PDF_TOO_COMPLEX rather than crashing', async () => {
    const bytes = await deeplyNestedPdf();
    const err = refusal(() => {
      const source = openInput(input(bytes));
      // Touch the page dictionary's every entry, as the copier does.
      for (const [, v] of source.pages[0].dict.entries()) source.reader.resolve(v);
    });
    expect(err.code).toBe('PDF_TOO_COMPLEX');
    expect(err.details).toMatchObject({ filename: 'in.pdf', input_index: 3 });
  });

  it('undoes PNG predictors (xref streams) row by row', () => {
    // Two rows of 3 bytes with filter Up (2): second row adds the first.
    const encoded = Uint8Array.from([2, 1, 2, 3, 2, 1, 1, 1]);
    expect(Array.from(unpredict(encoded, { predictor: 12, colors: 1, bitsPerComponent: 8, columns: 3 }))).toEqual([1, 2, 3, 2, 3, 4]);
    // Sub (1) and Paeth (4).
    expect(Array.from(unpredict(Uint8Array.from([1, 5, 1, 1]), { predictor: 12, colors: 1, bitsPerComponent: 8, columns: 3 }))).toEqual([5, 6, 7]);
    expect(Array.from(unpredict(Uint8Array.from([0, 9, 9, 4, 1, 0]), { predictor: 12, colors: 1, bitsPerComponent: 8, columns: 2 }))).toEqual([9, 9, 10, 10]);
  });

  it('exposes lazily resolved objects through pdf-lib lookups', async () => {
    const r = PdfReader.open(await simplePdf(1));
    const pages = r.catalog.lookup(PDFName.of('Pages'), PDFDict);
    expect(pages.get(PDFName.of('Type'))).toBe(PDFName.of('Pages'));
  });
});

let zeroPagePdfSync: Uint8Array;
beforeAll(async () => {
  zeroPagePdfSync = await zeroPagePdf();
});
