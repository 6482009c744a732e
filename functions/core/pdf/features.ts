/**
 * What a source document carries that merge/split cannot keep: form fields, bookmarks, digital signatures.
 * Detection is structural and truthful: a warning is raised only when the thing is really there.
 */
import { PDFArray, PDFDict, PDFName, type PDFObject, PDFRef } from 'pdf-lib';
import { N, type PdfReader } from './reader';

export const WARNINGS = ['FORM_FIELDS_NOT_PRESERVED', 'BOOKMARKS_NOT_PRESERVED', 'SIGNATURE_INVALIDATED'] as const;
export type PdfWarning = (typeof WARNINGS)[number];

/** Warnings in their canonical order, without duplicates. */
export function orderWarnings(set: Iterable<PdfWarning>): PdfWarning[] {
  const have = new Set(set);
  return WARNINGS.filter((w) => have.has(w));
}

const FT = PDFName.of('FT');
const V = PDFName.of('V');
const Sig = PDFName.of('Sig');
const XFA = PDFName.of('XFA');
const Kids = PDFName.of('Kids');
const Parent = PDFName.of('Parent');

export interface DocFeatures {
  /** A signature field holds a signature value, or the catalog has /Perms (DocMDP / usage rights). */
  signed: boolean;
  /** The outline (bookmarks) has at least one item. */
  hasBookmarks: boolean;
  /** The interactive form has at least one field (signature fields included). */
  hasForms: boolean;
  /** Any signature field, signed or not. */
  hasSignatureFields: boolean;
  /** The form is (also) an XFA form. */
  xfa: boolean;
}

const MAX_FIELDS = 100_000;

/** Visits every field of the AcroForm tree once (terminal fields and their ancestors). */
export function walkFields(reader: PdfReader, visit: (field: PDFDict, ref: PDFRef | null, depth: number) => void): void {
  const acro = reader.get(reader.catalog, N.AcroForm, PDFDict);
  const fields = reader.get(acro, N.Fields, PDFArray);
  if (!fields) return;
  const seen = new Set<PDFDict>();
  const stack: { obj: PDFObject | undefined; depth: number }[] = fields.asArray().map((obj) => ({ obj, depth: 0 })).reverse();
  while (stack.length && seen.size < MAX_FIELDS) {
    const { obj, depth } = stack.pop()!;
    const field = reader.resolve(obj);
    if (!(field instanceof PDFDict) || seen.has(field) || depth > 64) continue;
    seen.add(field);
    visit(field, obj instanceof PDFRef ? obj : null, depth);
    const kids = reader.get(field, Kids, PDFArray);
    if (kids) for (let i = kids.size() - 1; i >= 0; i--) stack.push({ obj: kids.get(i), depth: depth + 1 });
  }
}

/** A field attribute, inherited from ancestors when not set on the field itself. */
export function inheritedField(reader: PdfReader, field: PDFDict, key: PDFName): PDFObject | undefined {
  let cur: PDFDict | undefined = field;
  for (let i = 0; cur && i < 64; i++) {
    const v = cur.get(key);
    if (v !== undefined) return reader.resolve(v);
    cur = reader.get(cur, Parent, PDFDict);
  }
  return undefined;
}

export function detectFeatures(reader: PdfReader): DocFeatures {
  const catalog = reader.catalog;
  const outlines = reader.get(catalog, N.Outlines, PDFDict);
  const hasBookmarks = !!outlines && reader.resolve(outlines.get(N.First)) instanceof PDFDict;
  let signed = catalog.get(N.Perms) !== undefined && reader.resolve(catalog.get(N.Perms)) instanceof PDFDict;
  let hasForms = false;
  let hasSignatureFields = false;
  walkFields(reader, (field) => {
    hasForms = true;
    if (inheritedField(reader, field, FT) === Sig) {
      hasSignatureFields = true;
      if (reader.resolve(field.get(V)) instanceof PDFDict) signed = true;
    }
  });
  const acro = reader.get(catalog, N.AcroForm, PDFDict);
  const xfa = !!acro && acro.get(XFA) !== undefined;
  return { signed, hasBookmarks, hasForms: hasForms || xfa, hasSignatureFields, xfa };
}
