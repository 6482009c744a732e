import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, type PDFObject, PDFString } from 'pdf-lib';
import { hasNamedDestination, retargetLinks } from '../../../../functions/core/pdf/links';
import { PdfReader, textOf } from '../../../../functions/core/pdf/reader';
import { readPdfLinks } from '../../../support/pdf';

const ORIGIN = 'https://bundle.invalid/';

function uriLink(doc: PDFDocument, uri: string, x: number) {
  return doc.context.obj({ Type: 'Annot', Subtype: 'Link', Rect: [x, 700, x + 40, 720], A: { Type: 'Action', S: 'URI', URI: PDFString.of(uri) } });
}

/**
 * Two pages, as printers write them and not: page 1 lists indirect link annotations in a direct /Annots array (as
 * Chromium does), page 2 has one direct annotation in an indirect /Annots array. The catalog names one destination.
 */
async function linkedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const one = doc.addPage([300, 800]);
  const two = doc.addPage([300, 800]);
  const refs = [uriLink(doc, `${ORIGIN}guide.html`, 10), uriLink(doc, `${ORIGIN}gone.html`, 60), uriLink(doc, 'https://example.com/', 110)].map((a) => doc.context.register(a));
  one.node.set(PDFName.of('Annots'), doc.context.obj(refs));
  two.node.set(PDFName.of('Annots'), doc.context.register(doc.context.obj([uriLink(doc, `${ORIGIN}guide.html#setup`, 10)])));
  doc.catalog.set(PDFName.of('Dests'), doc.context.obj({ setup: [one.ref, 'Fit'] }));
  return doc.save({ useObjectStreams: false });
}

function annotationsOf(reader: PdfReader, pageIndex: number): PDFDict[] {
  const annots = reader.resolve(reader.pages()[pageIndex].dict.get(PDFName.of('Annots'))) as PDFArray;
  return annots.asArray().map((a) => reader.resolve(a) as PDFDict);
}

/** A byte string's bytes as UTF-8 text (a file specification's /F). */
function utf8Of(value: PDFObject | undefined): string | undefined {
  return value instanceof PDFString || value instanceof PDFHexString ? Buffer.from(value.asBytes()).toString('utf8') : undefined;
}

function actionOf(reader: PdfReader, annot: PDFDict) {
  const action = reader.resolve(annot.get(PDFName.of('A'))) as PDFDict;
  const spec = reader.resolve(action.get(PDFName.of('F'))) as PDFDict | undefined;
  return {
    S: action.get(PDFName.of('S'))?.toString(),
    F: utf8Of(spec?.get(PDFName.of('F'))),
    UF: textOf(spec?.get(PDFName.of('UF'))),
    D: action.get(PDFName.of('D'))?.toString(),
    URI: textOf(action.get(PDFName.of('URI'))),
  };
}

describe('retargetLinks', () => {
  it('points matching web links at files beside the PDF, removes those without a file, and keeps the printed bytes (an incremental update)', async () => {
    const pdf = await linkedPdf();
    const seen: string[] = [];
    const out = retargetLinks(pdf, ORIGIN, (uri) => {
      seen.push(uri);
      if (uri.startsWith(`${ORIGIN}guide.html`)) return { file: '../docs/guide.pdf', destination: uri.endsWith('#setup') ? 'setup' : null };
      return null;
    });
    expect(seen.sort()).toEqual([`${ORIGIN}gone.html`, `${ORIGIN}guide.html`, `${ORIGIN}guide.html#setup`]);
    expect(Buffer.from(out.subarray(0, pdf.length)).equals(Buffer.from(pdf))).toBe(true);

    const reader = PdfReader.open(out);
    const first = annotationsOf(reader, 0).map((a) => actionOf(reader, a));
    expect(first).toEqual([
      { S: '/GoToR', F: '../docs/guide.pdf', UF: '../docs/guide.pdf', D: '[ 0 /Fit ]', URI: undefined },
      { S: '/URI', F: undefined, UF: undefined, D: undefined, URI: 'https://example.com/' },
    ]);
    expect(annotationsOf(reader, 1).map((a) => actionOf(reader, a))).toEqual([{ S: '/GoToR', F: '../docs/guide.pdf', UF: '../docs/guide.pdf', D: '/setup', URI: undefined }]);

    // Another reader (pdf.js) follows the update too; pdf-lib loads it.
    expect((await readPdfLinks(out)).map((page) => page.map((l) => l.target))).toEqual([
      ['../docs/guide.pdf#[0,{"name":"Fit"}]', 'https://example.com/'],
      ['../docs/guide.pdf#setup'],
    ]);
    expect((await PDFDocument.load(out)).getPageCount()).toBe(2);
  });

  it('gives back the same bytes when no link matches', async () => {
    const pdf = await linkedPdf();
    expect(retargetLinks(pdf, 'https://elsewhere.invalid/', () => ({ file: 'x.pdf', destination: null }))).toBe(pdf);
  });

  it('writes file names with parentheses, backslashes and non-ASCII letters so that they read back as given', async () => {
    const pdf = await linkedPdf();
    for (const file of ['a (1)\\b).pdf', 'über/日本.pdf']) {
      const reader = PdfReader.open(retargetLinks(pdf, `${ORIGIN}guide.html`, () => ({ file, destination: null })));
      const action = actionOf(reader, annotationsOf(reader, 0)[0]);
      expect([action.F, action.UF]).toEqual([file, file]);
    }
  });

  it('refuses what is not a PDF as the reader does', () => {
    expect(() => retargetLinks(Buffer.from('not a pdf'), ORIGIN, () => null)).toThrow(expect.objectContaining({ code: 'INVALID_PDF' }));
  });
});

describe('hasNamedDestination', () => {
  it('knows the names of the catalog /Dests', async () => {
    const has = hasNamedDestination(await linkedPdf());
    expect([has('setup'), has('other')]).toEqual([true, false]);
  });

  it('keeps the names only, not the PDF they were read from (Finish holds one per linked PDF while replacing them)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let pdf: Uint8Array | undefined = new Uint8Array(await linkedPdf()); // a copy in an ArrayBuffer of its own
    const bytes = new WeakRef(pdf.buffer);
    const has = hasNamedDestination(pdf);
    pdf = undefined;
    for (let i = 0; i < 5 && bytes.deref(); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(bytes.deref()).toBeUndefined();
    expect(has('setup')).toBe(true);
  });
});
