import { PDFArray, PDFDict, PDFName, PDFRawStream } from 'pdf-lib';
import { parseFilenamePattern } from '../../../../functions/core/pdf/filenames';
import { INSTANT_LIMITS } from '../../../../functions/core/pdf/limits';
import { openInput, planSplit, produce } from '../../../../functions/core/pdf/operations';
import { parsePageRange } from '../../../../functions/core/pdf/page-ranges';
import { ServiceError } from '../../../../functions/core/errors';
import { PdfReader } from '../../../../functions/core/pdf/reader';
import { pdfWith } from '../../../support/pdf-fixtures';

async function splitOnePage(pdf: Uint8Array): Promise<Uint8Array> {
  const input = { bytes: pdf, filename: 'in.pdf', index: 0 };
  const plan = planSplit({ input, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
  const result = await produce(plan, { limits: INSTANT_LIMITS });
  return result.files[0].bytes;
}

describe('PageCopier: internal links', () => {
  it('copies an explicit destination as the page, its fit type and at most four numbers, whatever the source array holds', async () => {
    // Every link gets its own copy of its destination: a few KB naming one shared array of a million numbers from a
    // few hundred links filled the heap (300 links: out of memory with 1.7 GB).
    const numbers = Array.from({ length: 1000 }, (_, i) => i).join(' ');
    const links = Array.from({ length: 3 }, (_, i) => `${i + 5} 0 R`).join(' ');
    const pdf = pdfWith(`/Annots [${links}]`, [
      `[3 0 R /FitR 10 20 30 40 ${numbers}]`,
      '<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /Dest 4 0 R >>',
      '<< /Type /Annot /Subtype /Link /Rect [0 10 10 20] /A << /S /GoTo /D 4 0 R >> >>',
      '<< /Type /Annot /Subtype /Link /Rect [0 20 10 30] /Dest [3 0 R /XYZ 1 2 3] >>',
    ]);
    const out = PdfReader.open(await splitOnePage(pdf));
    const page = out.pages()[0];
    const annots = out.get(page.dict, PDFName.of('Annots'), PDFArray)!;
    const dests = annots.asArray().map((a) => (out.resolve(a) as PDFDict).get(PDFName.of('Dest')) as PDFArray);
    expect(dests.map((d) => d.asArray().slice(1).map(String))).toEqual([
      ['/FitR', '10', '20', '30', '40'],
      ['/FitR', '10', '20', '30', '40'],
      ['/XYZ', '1', '2', '3'],
    ]);
    expect(dests.every((d) => d.get(0) === page.ref)).toBe(true);
  });
});

describe('PageCopier: a page selected many times', () => {
  it('stops by what the copies hold in memory, not only by what they write (500 copies of a page holding a million zeros: out of memory)', async () => {
    const pdf = pdfWith(`/Junk [${'0 '.repeat(100_000)}]`);
    const limits = { ...INSTANT_LIMITS, maxOutputBytes: 2 * 1024 * 1024 };
    const input = { bytes: pdf, filename: 'in.pdf', index: 0 };
    const pages = parsePageRange(Array.from({ length: 20 }, () => '1').join(','));
    const plan = planSplit({ input, split: { mode: 'extract', pages }, pattern: parseFilenamePattern(undefined) }, openInput(input), limits);
    // Written, the 20 copies take 4 MB (compressed, a few KB); held, 36 MB.
    const err = await produce(plan, { limits }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).code).toBe('OUTPUT_TOO_LARGE');
  });
});

describe('PageCopier: page dictionaries', () => {
  it("drops a page's /Kids and /Count: a leaf of the page tree copied with them became a node of the output's tree", async () => {
    const out = PdfReader.open(await splitOnePage(pdfWith('/Kids [3 0 R] /Count 7 /Rotate 90')));
    const page = out.pages()[0];
    expect([page.dict.has(PDFName.of('Kids')), page.dict.has(PDFName.of('Count')), String(page.dict.get(PDFName.of('Rotate')))]).toEqual([false, false, '90']);
    expect(out.pages()).toHaveLength(1);
  });

  it('keeps of /Contents only the streams it names: the page tree, the catalog or a missing object there became null in the output (qpdf refuses it)', async () => {
    const contentsOf = async (contents: string) => {
      const out = PdfReader.open(await splitOnePage(pdfWith(`/Contents ${contents}`, ['<< /Length 3 >>\nstream\nq Q\nendstream'])));
      const value = out.resolve(out.pages()[0].dict.get(PDFName.of('Contents')));
      const items = value instanceof PDFArray ? value.asArray().map((c) => out.resolve(c)) : value === undefined ? [] : [value];
      return items.map((c) => (c instanceof PDFRawStream ? Buffer.from(c.contents).toString('latin1') : String(c)));
    };
    expect(await contentsOf('[4 0 R 2 0 R 1 0 R 99 0 R 4 0 R]')).toEqual(['q Q', 'q Q']);
    expect(await contentsOf('[4 0 R]')).toEqual(['q Q']);
    expect(await contentsOf('4 0 R')).toEqual(['q Q']);
    expect(await contentsOf('2 0 R')).toEqual([]);
  });
});

describe('PageCopier: flattened widgets', () => {
  it('places an appearance with numbers written without exponents, however far its box is stretched', async () => {
    const pdf = pdfWith('/Contents 4 0 R /Annots [5 0 R]', [
      '<< /Length 3 >>\nstream\nq Q\nendstream',
      '<< /Type /Annot /Subtype /Widget /FT /Tx /T (a) /Rect [0 0 10000000000000000 10] /AP << /N 6 0 R >> >>',
      '<< /Type /XObject /Subtype /Form /BBox [0 0 0.00000001 10] /Length 0 >>\nstream\n\nendstream',
    ]);
    const out = PdfReader.open(await splitOnePage(pdf));
    const contents = out.resolve(out.pages()[0].dict.get(PDFName.of('Contents'))) as PDFArray;
    const draws = Buffer.from((out.resolve(contents.get(contents.size() - 1)) as PDFRawStream).contents).toString('latin1');
    // The box's width is clamped to 2^53 − 1 when read, then stretched 10^8 times: 9.007199254740991e+23 before.
    expect(draws).toBe('Q\nq 900719925474099100000000 0 0 1 0 0 cm /FlatW0 Do Q\n');
  });
});
