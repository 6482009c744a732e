import { PDFDocument } from 'pdf-lib';

/**
 * `/Count` within the same dictionary as `/Type /Pages`. The gap between them is bounded: unbounded, a document
 * title full of "/Count 1 " made this take quadratic time (Chromium's page-tree nodes are short; kids are at most 8).
 */
const PAGES_DICT_COUNT = /\/Type\s*\/Pages\b[^>]{0,1024}?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]{0,1024}?\/Type\s*\/Pages\b/g;

/**
 * Page count of a PDF we just printed. Chromium writes its page tree uncompressed, so the root
 * `/Type /Pages` dictionary's `/Count` (the largest one) is read straight from the bytes; anything
 * else falls back to a full parse.
 */
export async function countPdfPages(pdf: Uint8Array): Promise<number> {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  let max = -1;
  for (const m of text.matchAll(PAGES_DICT_COUNT)) max = Math.max(max, Number(m[1] ?? m[2]));
  if (max >= 0) return max;
  const doc = await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false });
  return doc.getPageCount();
}

/**
 * The longest side, in points, of any page of a PDF we just printed (each page's MediaBox, inherited ones included).
 * With `preferCSSPageSize` the document's own `@page` size is the paper, so this is where a page larger than the
 * options would allow shows. Read by parsing the PDF, not by searching its bytes: a document's title can spell
 * "/MediaBox [0 0 99999 1]" too.
 */
export async function largestPageSidePt(pdf: Uint8Array): Promise<number> {
  const doc = await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false });
  let largest = 0;
  for (const page of doc.getPages()) {
    const { width, height } = page.getMediaBox();
    largest = Math.max(largest, Math.abs(width), Math.abs(height));
  }
  return largest;
}
