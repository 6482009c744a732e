/**
 * Links of a printed PDF pointed somewhere else after printing: web links (`/URI`) whose address starts with a given
 * prefix become links to another PDF file beside this one (`/GoToR`, relative path), or are removed. Written as an
 * incremental update (the changed annotations and pages appended with their own cross-reference section), so the
 * printed bytes, tagged structure included, stay as they were.
 */
import { PDFArray, PDFDict, PDFHexString, PDFName, PDFNumber, type PDFObject, PDFRef, PDFString } from 'pdf-lib';
import { SourceDocument } from './copier';
import { N, PdfReader, textOf } from './reader';
import { serialize } from './writer';

/** Where a matching link goes: a PDF file by path relative to this one, at a named destination or its first page. */
export interface FileLinkTarget {
  file: string;
  destination: string | null;
}

const K = {
  Subtype: PDFName.of('Subtype'),
  Link: PDFName.of('Link'),
  A: PDFName.of('A'),
  S: PDFName.of('S'),
  URI: PDFName.of('URI'),
  Type: PDFName.of('Type'),
  Action: PDFName.of('Action'),
  GoToR: PDFName.of('GoToR'),
  F: PDFName.of('F'),
  UF: PDFName.of('UF'),
  Filespec: PDFName.of('Filespec'),
  D: PDFName.of('D'),
  Fit: PDFName.of('Fit'),
  NewWindow: PDFName.of('NewWindow'),
} as const;

const enc = (s: string) => Buffer.from(s, 'latin1');

/**
 * `pdf` with every `/URI` link starting with `prefix` re-pointed: to `target(uri)` when it names a file, else removed
 * (the text stays, without a link). The same bytes when no link starts with `prefix`.
 */
export function retargetLinks(pdf: Uint8Array, prefix: string, target: (uri: string) => FileLinkTarget | null): Uint8Array {
  const reader = PdfReader.open(pdf);
  const changed = new Map<number, { gen: number; obj: PDFObject }>();
  for (const page of reader.pages()) {
    const listed = page.dict.get(N.Annots);
    const annots = reader.resolve(listed);
    if (!(annots instanceof PDFArray)) continue;
    const kept: PDFObject[] = [];
    let listChanged = false;
    for (const entry of annots.asArray()) {
      const annot = reader.resolve(entry);
      const uri = annot instanceof PDFDict ? linkUri(reader, annot) : undefined;
      if (!uri?.startsWith(prefix)) {
        kept.push(entry);
        continue;
      }
      const to = target(uri);
      if (!to) {
        listChanged = true;
        continue;
      }
      const relinked = (annot as PDFDict).clone(reader.context);
      relinked.set(K.A, goToFile(reader, to));
      if (entry instanceof PDFRef) changed.set(entry.objectNumber, { gen: entry.generationNumber, obj: relinked });
      else listChanged = true;
      kept.push(entry instanceof PDFRef ? entry : relinked);
    }
    if (!listChanged) continue;
    const list = reader.context.obj(kept);
    if (listed instanceof PDFRef) {
      changed.set(listed.objectNumber, { gen: listed.generationNumber, obj: list });
    } else if (page.ref) {
      const pageDict = page.dict.clone(reader.context);
      pageDict.set(N.Annots, list);
      changed.set(page.ref.objectNumber, { gen: page.ref.generationNumber, obj: pageDict });
    }
  }
  return changed.size === 0 ? pdf : appendUpdate(pdf, reader, changed);
}

/**
 * Names of the document's named destinations, as a `/GoToR` link from another file may give them (the catalog's
 * `/Dests` and the `/Names` tree).
 */
export function hasNamedDestination(pdf: Uint8Array): (name: string) => boolean {
  // The names only: holding the parsed document would hold `pdf` too, and Finish keeps one of these per linked PDF
  // while it replaces the PDFs with their rewritten copies (every printed copy stayed beside its rewritten one).
  const names = new Set(new SourceDocument(PdfReader.open(pdf), { filename: '', index: 0 }).namedDestinationNames());
  return (name) => names.has(name);
}

function linkUri(reader: PdfReader, annot: PDFDict): string | undefined {
  if (annot.get(K.Subtype) !== K.Link) return undefined;
  const action = reader.resolve(annot.get(K.A));
  if (!(action instanceof PDFDict) || action.get(K.S) !== K.URI) return undefined;
  const uri = reader.resolve(action.get(K.URI));
  return uri instanceof PDFString || uri instanceof PDFHexString ? Buffer.from(uri.asBytes()).toString('latin1') : textOf(uri);
}

/**
 * A go-to-file action: the file as a file specification (`/F` its UTF-8 bytes, `/UF` the same name as text, for
 * readers that take either), the destination a name, else the first page fitted to the window.
 */
function goToFile(reader: PdfReader, to: FileLinkTarget): PDFDict {
  const { context } = reader;
  const utf8 = Buffer.from(to.file, 'utf8');
  const file = /^[\x20-\x7e]*$/.test(to.file) ? PDFString.of(escapeLiteral(to.file)) : PDFHexString.of(utf8.toString('hex'));
  const spec = context.obj({ Type: K.Filespec, F: file, UF: PDFHexString.fromText(to.file) });
  const destination = to.destination === null ? context.obj([PDFNumber.of(0), K.Fit]) : PDFName.of(to.destination);
  return context.obj({ Type: K.Action, S: K.GoToR, F: spec, D: destination, NewWindow: false });
}

/** pdf-lib writes a PDFString's text as given between the parentheses: its backslashes and parentheses escaped here. */
function escapeLiteral(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

/** `pdf` with `changed` objects appended as an incremental update (a classic cross-reference section). */
function appendUpdate(pdf: Uint8Array, reader: PdfReader, changed: Map<number, { gen: number; obj: PDFObject }>): Uint8Array {
  const chunks: Uint8Array[] = [pdf, enc('\n')];
  let offset = pdf.length + 1;
  const offsets = new Map<number, number>();
  const numbers = [...changed.keys()].sort((a, b) => a - b);
  for (const num of numbers) {
    const { gen, obj } = changed.get(num)!;
    offsets.set(num, offset);
    for (const piece of [enc(`${num} ${gen} obj\n`), serialize(obj), enc('\nendobj\n')]) {
      chunks.push(piece);
      offset += piece.length;
    }
  }
  const xrefAt = offset;
  const rows = ['xref'];
  for (const num of numbers) rows.push(`${num} 1`, `${String(offsets.get(num)).padStart(10, '0')} ${String(changed.get(num)!.gen).padStart(5, '0')} n\r`);
  const size = Math.max(numbers[numbers.length - 1] + 1, (reader.trailer.get(N.Size) as PDFNumber | undefined)?.asNumber() ?? 0);
  const trailer = reader.context.obj({ Size: size, Root: reader.catalogRef, Prev: previousXref(pdf) });
  for (const key of [N.Info, N.ID]) {
    const value = reader.trailer.get(key);
    if (value) trailer.set(key, value);
  }
  chunks.push(enc(`${rows.join('\n')}\ntrailer\n`), serialize(trailer), enc(`\nstartxref\n${xrefAt}\n%%EOF\n`));
  return Buffer.concat(chunks);
}

/** The offset the file's last `startxref` gives (PdfReader.open has checked it is there). */
function previousXref(pdf: Uint8Array): number {
  const tail = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).subarray(Math.max(0, pdf.length - 65536)).toString('latin1');
  const offset = /^startxref\s+(\d+)/.exec(tail.slice(tail.lastIndexOf('startxref')))?.[1];
  if (offset === undefined) throw new Error('the PDF has no startxref offset');
  return Number(offset);
}
