/**
 * POST /pdf/inspect: what a PDF is, read without copying anything. An encrypted file is described, not refused.
 */
import { PDFArray, PDFName, PDFNumber, type PDFObject } from 'pdf-lib';
import { ServiceError } from '../errors';
import { Deadline, PdfDeadlineExceeded, inputProblem } from './errors';
import { ReadBudget } from './budget';
import { type DocFeatures, type PdfWarning, detectFeatures, inheritedField, orderWarnings, walkFields } from './features';
import { type FormField, listFormFields } from './forms';
import { type PageInfo, PdfReader, asProblem } from './reader';

export interface PageBox {
  width: number;
  height: number;
}

export interface InspectResult {
  filename: string;
  size_bytes: number;
  page_count: number | null;
  encrypted: boolean;
  has_forms: boolean;
  has_signatures: boolean;
  first_page: PageBox | null;
  warnings: PdfWarning[];
  max_pages: number;
  pages?: ({ id: string; rotation: number } & PageBox)[] | null;
  form?: FormField[] | null;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

type Rect = [number, number, number, number];
const LETTER: PageBox = { width: 612, height: 792 };

/** A box array as [left, bottom, right, top]; null unless it has four finite numbers. */
function rectOf(reader: PdfReader, value: PDFObject | undefined): Rect | null {
  const box = reader.resolve(value);
  if (!(box instanceof PDFArray) || box.size() < 4) return null;
  const n = box.asArray().slice(0, 4).map((x: PDFObject) => reader.resolve(x)).map((x) => (x instanceof PDFNumber ? x.asNumber() : NaN));
  if (n.some((v) => !Number.isFinite(v))) return null;
  return [Math.min(n[0], n[2]), Math.min(n[1], n[3]), Math.max(n[0], n[2]), Math.max(n[1], n[3])];
}

/**
 * The visible box of a page, unrotated, in points: the CropBox clipped to the MediaBox (PDF 32000-1 14.11.2; a
 * CropBox that misses the MediaBox is ignored, as viewers do), scaled by the page's /UserUnit (PDF 1.6; points
 * are 1/72 inch only when it is 1). Missing or unreadable boxes read as US Letter, as viewers assume.
 */
export function pageBox(reader: PdfReader, page: PageInfo): PageBox {
  const media = rectOf(reader, page.mediaBox);
  const crop = rectOf(reader, page.cropBox);
  let visible = media ?? crop;
  if (media && crop) {
    const clipped: Rect = [Math.max(media[0], crop[0]), Math.max(media[1], crop[1]), Math.min(media[2], crop[2]), Math.min(media[3], crop[3])];
    if (clipped[2] > clipped[0] && clipped[3] > clipped[1]) visible = clipped;
  }
  if (!visible) return LETTER;
  const unitValue = reader.resolve(page.dict?.get(PDFName.of('UserUnit')));
  const unit = unitValue instanceof PDFNumber && Number.isFinite(unitValue.asNumber()) && unitValue.asNumber() > 0 ? unitValue.asNumber() : 1;
  const width = (visible[2] - visible[0]) * unit;
  const height = (visible[3] - visible[1]) * unit;
  // Finite corners can still be 1e308 apart: a box no viewer can show is read as the default Letter size, like a missing one.
  if (!Number.isFinite(width) || !Number.isFinite(height)) return LETTER;
  return { width: round(width), height: round(height) };
}

/** Rotation in degrees, normalised to 0, 90, 180 or 270 (other values are ignored by viewers). */
export function pageRotation(reader: PdfReader, page: PageInfo): number {
  const r = reader.resolve(page.rotate);
  const deg = r instanceof PDFNumber ? r.asNumber() : 0;
  return Number.isInteger(deg) && deg % 90 === 0 ? ((deg % 360) + 360) % 360 : 0;
}

function predictedWarnings(reader: PdfReader, f: DocFeatures): PdfWarning[] {
  const w: PdfWarning[] = [];
  let fillable = f.xfa;
  if (!fillable && f.hasForms) {
    walkFields(reader, (field) => {
      if (inheritedField(reader, field, PDFName.of('FT')) !== PDFName.of('Sig')) fillable = true;
    });
  }
  if (fillable) w.push('FORM_FIELDS_NOT_PRESERVED');
  if (f.hasBookmarks) w.push('BOOKMARKS_NOT_PRESERVED');
  if (f.signed) w.push('SIGNATURE_INVALIDATED');
  return orderWarnings(w);
}

/** Pages of a document the editor opens (document 2, limits: "Editor: pages 200 per document"). */
export const EDITOR_MAX_PAGES = 200;

/**
 * What a PDF is. Reading ends at `deadline` (PDFOP_TIMEOUT, an instant request over its time: the caps of the reader
 * and the form listing bound every hostile file found so far, and the deadline bounds the next one).
 */
export function inspectPdf(bytes: Uint8Array, opts: { filename: string; maxPages: number; forEdit: boolean; deadline?: Deadline; timeoutSeconds?: number }): InspectResult {
  try {
    return describe(bytes, opts, ReadBudget.forInputs(bytes.length, opts.deadline));
  } catch (err) {
    if (!(err instanceof PdfDeadlineExceeded)) throw err;
    const seconds = opts.timeoutSeconds ?? null;
    throw new ServiceError(
      'PDFOP_TIMEOUT',
      `${opts.filename} could not be read${seconds ? ` within ${seconds} seconds` : ' in time'}: its structure is too large or complex to inspect. Check the file (re-export it) or split it first.`,
      { filename: opts.filename, input_index: 0, timeout_seconds: seconds },
    );
  }
}

function describe(bytes: Uint8Array, opts: { filename: string; maxPages: number; forEdit: boolean }, budget: ReadBudget): InspectResult {
  const input = { filename: opts.filename, index: 0 };
  let reader: PdfReader;
  try {
    reader = PdfReader.open(bytes, budget);
  } catch (err) {
    throw inputProblem(asProblem(err), input);
  }
  const base = { filename: opts.filename, size_bytes: bytes.length, max_pages: opts.maxPages };
  if (reader.encrypted) {
    // Dictionaries outside object streams stay readable in encrypted files: report what can be seen.
    let features: DocFeatures | null = null;
    try {
      features = detectFeatures(reader);
    } catch {
      features = null;
    }
    return {
      ...base,
      page_count: null,
      encrypted: true,
      has_forms: features?.hasForms ?? false,
      has_signatures: features?.signed ?? false,
      first_page: null,
      warnings: [],
      ...(opts.forEdit ? { pages: null, form: null } : {}),
    };
  }
  try {
    const pages = reader.pages();
    const features = detectFeatures(reader);
    const result: InspectResult = {
      ...base,
      page_count: pages.length,
      encrypted: false,
      has_forms: features.hasForms,
      has_signatures: features.signed,
      first_page: pages.length ? pageBox(reader, pages[0]) : null,
      warnings: predictedWarnings(reader, features),
    };
    if (opts.forEdit) {
      // The editor opens documents of up to 200 pages (document 2, limits); listing 200,000 page ids would not even fit a response.
      if (pages.length > EDITOR_MAX_PAGES) {
        throw new ServiceError('PDF_PAGE_LIMIT_EXCEEDED', `The editor takes documents of up to ${EDITOR_MAX_PAGES} pages; this one has ${pages.length}. Inspect it without "for": "edit", or split it first.`, {
          filename: opts.filename,
          pages: pages.length,
          max_pages: EDITOR_MAX_PAGES,
        });
      }
      result.pages = pages.map((p) => ({ id: `p${p.index}`, ...pageBox(reader, p), rotation: pageRotation(reader, p) }));
      result.form = listFormFields(reader);
    }
    return result;
  } catch (err) {
    throw inputProblem(asProblem(err), input);
  }
}
