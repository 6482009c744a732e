import { execFile } from 'node:child_process';
import path from 'node:path';

export interface PdfPageInfo {
  width: number;
  height: number;
  rotate: number;
  text: string;
}

/** Page sizes (points) and text of every page, read by pdfjs in a child process. */
export function readPdf(bytes: Uint8Array): Promise<PdfPageInfo[]> {
  return runPdfScript('text', bytes);
}

export interface PdfDrawnImage {
  /** Lower-left corner, in points from the page's lower-left corner. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PdfPageDrawing {
  /** Every image painted on the page, in painting order: its box before clipping (a cropped image reaches past what shows). */
  images: PdfDrawnImage[];
  /** The distinct RGB fill colours the page's content sets, as '#rrggbb'. */
  fillColors: string[];
}

/** Runs pdf-read.mjs (pdfjs, an ES module, in its own process) in one of its modes. */
function runPdfScript<T>(mode: 'text' | 'drawing' | 'links', bytes: Uint8Array): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [path.join(__dirname, 'pdf-read.mjs'), mode], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`pdf-read.mjs ${mode} failed: ${stderr || err.message}`));
      resolve(JSON.parse(stdout).pages);
    });
    child.stdin!.end(Buffer.from(bytes));
  });
}

/** Where each page draws its images and which fill colours it uses, read by pdfjs in a child process. */
export function readPdfDrawing(bytes: Uint8Array): Promise<PdfPageDrawing[]> {
  return runPdfScript('drawing', bytes);
}

export interface PdfLink {
  /** A web address, a file (with `#` and where in it), or `page:<index>` for a link inside the document; null for none. */
  target: string | null;
  /** The text under the link. */
  text: string;
}

/** The link annotations of every page, read by pdfjs in a child process. */
export async function readPdfLinks(bytes: Uint8Array): Promise<PdfLink[][]> {
  return (await runPdfScript<{ links: PdfLink[] }[]>('links', bytes)).map((page) => page.links);
}

export const MM_PER_POINT = 25.4 / 72;

/** Every dictionary among a PDF's indirect objects (fonts, graphics states, …), read with pdf-lib. */
async function pdfDicts(bytes: Uint8Array) {
  const lib = await import('pdf-lib');
  const doc = await lib.PDFDocument.load(bytes);
  const dicts = doc.context.enumerateIndirectObjects().map(([, obj]) => obj).filter((obj): obj is import('pdf-lib').PDFDict => obj instanceof lib.PDFDict);
  return { lib, dicts };
}

/** The base names of the fonts a PDF embeds, subset prefixes removed (`AAAAAA+DejaVuSans` → `DejaVuSans`). */
export async function pdfFontNames(bytes: Uint8Array): Promise<string[]> {
  const { lib, dicts } = await pdfDicts(bytes);
  const names = new Set<string>();
  for (const dict of dicts) {
    if (dict.get(lib.PDFName.of('Type')) !== lib.PDFName.of('Font')) continue;
    const base = dict.get(lib.PDFName.of('BaseFont'));
    if (base instanceof lib.PDFName) names.add(base.decodeText().replace(/^[A-Z]{6}\+/, ''));
  }
  return [...names].sort();
}

/** The distinct opacities (`ca`, `CA` of every graphics state) a PDF paints with: 0 is something drawn invisible. */
export async function pdfOpacities(bytes: Uint8Array): Promise<number[]> {
  const { lib, dicts } = await pdfDicts(bytes);
  const values = new Set<number>();
  for (const dict of dicts) {
    for (const key of ['ca', 'CA']) {
      const value = dict.get(lib.PDFName.of(key));
      if (value instanceof lib.PDFNumber) values.add(value.asNumber());
    }
  }
  return [...values].sort();
}
