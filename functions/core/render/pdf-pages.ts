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

/** A page's `/MediaBox [x0 y0 x1 y1]` as Chromium writes it (page dictionaries uncompressed). */
const MEDIA_BOX = /\/MediaBox\s*\[\s*(-?\d*\.?\d+)\s+(-?\d*\.?\d+)\s+(-?\d*\.?\d+)\s+(-?\d*\.?\d+)\s*\]/g;

/**
 * The longest side, in points, of any page of a PDF we just printed (0 when no MediaBox can be read). With
 * `preferCSSPageSize` the document's own `@page` size is the paper, so this is where a page larger than the
 * options would allow shows.
 */
export function largestPageSidePt(pdf: Uint8Array): number {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  let largest = 0;
  for (const m of text.matchAll(MEDIA_BOX)) {
    largest = Math.max(largest, Math.abs(Number(m[3]) - Number(m[1])), Math.abs(Number(m[4]) - Number(m[2])));
  }
  return largest;
}
