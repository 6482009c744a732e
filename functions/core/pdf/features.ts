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
/**
 * Kid references read in one walk. A real form's tree has one per field; a hostile one whose fields all share one
 * /Kids array of all of them has N² (8,000 fields blocked a process for 19 s), so the walk stops here.
 */
export const MAX_FIELD_REFERENCES = 8 * MAX_FIELDS;

/** Visits every field of the AcroForm tree once (terminal fields and their ancestors), within MAX_FIELD_REFERENCES. */
export function walkFields(reader: PdfReader, visit: (field: PDFDict, ref: PDFRef | null, depth: number) => void): void {
  const acro = reader.get(reader.catalog, N.AcroForm, PDFDict);
  const fields = reader.get(acro, N.Fields, PDFArray);
  if (!fields) return;
  const seen = new Set<PDFDict>();
  let references = fields.size();
  const stack: { obj: PDFObject | undefined; depth: number }[] = fields.asArray().slice(0, MAX_FIELD_REFERENCES).map((obj) => ({ obj, depth: 0 })).reverse();
  while (stack.length && seen.size < MAX_FIELDS) {
    const { obj, depth } = stack.pop()!;
    const field = reader.resolve(obj);
    if (!(field instanceof PDFDict) || seen.has(field) || depth > 64) continue;
    seen.add(field);
    visit(field, obj instanceof PDFRef ? obj : null, depth);
    const kids = reader.get(field, Kids, PDFArray);
    if (!kids) continue;
    for (let i = kids.size() - 1; i >= 0 && references < MAX_FIELD_REFERENCES; i--, references++) {
      const kid = kids.get(i);
      // A kid visited already is not stacked again (the stack of a shared /Kids array would grow as N²).
      const resolved = kid instanceof PDFRef ? reader.resolve(kid) : kid;
      if (resolved instanceof PDFDict && !seen.has(resolved)) stack.push({ obj: kid, depth: depth + 1 });
    }
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
