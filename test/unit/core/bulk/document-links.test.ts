import { PDFDocument, PDFName, PDFString } from 'pdf-lib';
import { linkDocumentPdfs } from '../../../../functions/core/bulk/document-links';
import type { BundleIndex } from '../../../../functions/core/bulk/storage';
import type { JobFileRow } from '../../../../functions/core/jobs/files';
import { parsePdfOptions } from '../../../../functions/core/render/options';
import { readPdfLinks } from '../../../support/pdf';

const at = (start: number) => ({ start, compressed: 10, method: 0, size: 10, crc: 0 });

/** Three documents (one failed) and a stylesheet, as Prepare indexes them. */
const bundle: BundleIndex = {
  bundle_type: 'html',
  options: parsePdfOptions({}),
  zip_key: 'zip',
  files: [
    { index: 0, path: 'index.html', size: 10, entry: at(0) },
    { index: 1, path: 'guide/intro.html', size: 10, entry: at(100) },
    { index: 2, path: 'guide/failed.html', size: 10, entry: at(200) },
  ],
  entries: { 'index.html': at(0), 'guide/intro.html': at(100), 'guide/failed.html': at(200), 'site.css': at(300) },
};

async function pdfLinkingTo(...uris: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([300, 300]);
  const links = uris.map((uri, i) => doc.context.register(doc.context.obj({ Type: 'Annot', Subtype: 'Link', Rect: [10, 10 + 30 * i, 50, 30 + 30 * i], A: { S: 'URI', URI: PDFString.of(uri) } })));
  page.node.set(PDFName.of('Annots'), doc.context.obj(links));
  return doc.save();
}

/**
 * `pdf` naming destinations on its first page: `dests` in the catalog's /Dests, by PDF name, as Chromium writes them
 * (the fragment as the URL has it); `tree` in a /Names /Dests name tree, by string, as a writer that decodes ids does.
 */
async function withDestinations(pdf: Uint8Array, dests: string[], tree: string[] = []): Promise<Uint8Array> {
  const doc = await PDFDocument.load(pdf);
  const page = doc.getPage(0).ref;
  if (dests.length) doc.catalog.set(PDFName.of('Dests'), doc.context.obj(Object.fromEntries(dests.map((name) => [name, [page, 'Fit']]))));
  if (tree.length) {
    const names = [...tree].sort().flatMap((name) => [PDFString.of(name), doc.context.obj([page, 'Fit'])]);
    doc.catalog.set(PDFName.of('Names'), doc.context.obj({ Dests: doc.context.obj({ Names: doc.context.obj(names) }) }));
  }
  return doc.save();
}

const row = (index: number, input: string, output: string, documentLinks?: number): JobFileRow => ({
  index, input, output, status: 'success', pages: 1, error_code: null, error_message: null, blocked_requests: 0, render_timeout: false, missing_assets: 0,
  ...(documentLinks ? { document_links: documentLinks } : {}),
});

describe('linkDocumentPdfs', () => {
  it('points links at the PDFs the documents became, relative to the linking PDF; links to documents without a PDF go', async () => {
    const index = await pdfLinkingTo('https://bundle.invalid/guide/intro.html', 'https://bundle.invalid/guide/failed.html', 'https://bundle.invalid/site.css');
    const intro = await pdfLinkingTo('https://bundle.invalid/index.html#top');
    const made = [row(0, 'index.html', 'index.pdf', 2), row(1, 'guide/intro.html', 'guide/intro.pdf', 1)];
    const pdfs = [index, intro];
    linkDocumentPdfs(bundle, made, pdfs, () => undefined);
    expect((await readPdfLinks(pdfs[0]))[0].map((l) => l.target)).toEqual(['guide/intro.pdf#[0,{"name":"Fit"}]']);
    // No destination "top" in index.pdf: its first page.
    expect((await readPdfLinks(pdfs[1]))[0].map((l) => l.target)).toEqual(['../index.pdf#[0,{"name":"Fit"}]']);
  });

  it('opens a linked PDF at the destination its fragment names, as Chromium names it or decoded; an empty fragment is the first page', async () => {
    const index = await withDestinations(await pdfLinkingTo(), ['setup', 'na%20me'], ['sect one', '']);
    const links = ['index.html#setup', 'index.html#sect%20one', 'index.html#na%20me', 'index.html#', 'index.html#missing'];
    const intro = await pdfLinkingTo(...links.map((l) => `https://bundle.invalid/${l}`));
    const made = [row(0, 'index.html', 'index.pdf'), row(1, 'guide/intro.html', 'guide/intro.pdf', links.length)];
    const pdfs = [index, intro];
    linkDocumentPdfs(bundle, made, pdfs, () => undefined);
    // `#sect%20one` finds `sect one` decoded; `index.html#` is the document, not a destination named "".
    expect((await readPdfLinks(pdfs[1]))[0].map((l) => l.target)).toEqual([
      '../index.pdf#setup',
      '../index.pdf#sect one',
      '../index.pdf#na%20me',
      '../index.pdf#[0,{"name":"Fit"}]',
      '../index.pdf#[0,{"name":"Fit"}]',
    ]);
  });

  it('finds each linked PDF by its file index, not by its position among the PDFs made (a failed file in between)', async () => {
    const index = await pdfLinkingTo('https://bundle.invalid/guide/intro.html');
    const failed = await pdfLinkingTo('https://bundle.invalid/index.html', 'https://bundle.invalid/guide/failed.html');
    // File 1 (guide/intro.html) made no PDF: the link to it goes, never to the PDF second in the list (file 2's).
    const made = [row(0, 'index.html', 'index.pdf', 1), row(2, 'guide/failed.html', 'guide/failed.pdf', 2)];
    const pdfs = [index, failed];
    linkDocumentPdfs(bundle, made, pdfs, () => undefined);
    expect((await readPdfLinks(pdfs[0]))[0].map((l) => l.target)).toEqual([]);
    expect((await readPdfLinks(pdfs[1]))[0].map((l) => l.target)).toEqual(['../index.pdf#[0,{"name":"Fit"}]', 'failed.pdf#[0,{"name":"Fit"}]']);
  });

  it('leaves PDFs without document links alone, and keeps one it cannot rewrite as printed, saying so', async () => {
    const plain = await pdfLinkingTo('https://bundle.invalid/guide/intro.html');
    const damaged = Buffer.from('%PDF-1.7\nnot really\n');
    const pdfs: Uint8Array[] = [plain, damaged];
    const told: number[] = [];
    linkDocumentPdfs(bundle, [row(0, 'index.html', 'index.pdf'), row(1, 'guide/intro.html', 'guide/intro.pdf', 1)], pdfs, (r) => told.push(r.index));
    expect(pdfs[0]).toBe(plain);
    expect(pdfs[1]).toBe(damaged);
    expect(told).toEqual([1]);
  });
});
