/**
 * A lazy PDF reader: it reads the cross-reference sections the trailer points to and parses an object
 * only when something asks for it, so copying 2 pages out of a 200-object file parses ~30 objects, not 200.
 * Objects are pdf-lib objects, so the rest of pdf-lib's object API works on them.
 *
 * Structure rules (anything else is INVALID_PDF): a `%PDF-` header in the first KB, `startxref` and `%%EOF`
 * in the last 64 KB (a truncated file has neither), and a cross-reference table or stream at the offset
 * `startxref` gives. Individual object offsets that are off are repaired by scanning the file once.
 */
import {
  PDFArray,
  PDFContext,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  type PDFObject,
  PDFRawStream,
  PDFRef,
  PDFString,
  hasUtf16BOM,
  pdfDocEncodingDecode,
  utf16Decode,
} from 'pdf-lib';
import { PdfProblem, passDeadline } from './errors';
import { ReadBudget } from './budget';
import { decodeStructureStream } from './filters';
import { ObjectParser, refOf } from './parser';

type XrefEntry = { kind: 'offset'; offset: number; gen: number } | { kind: 'compressed'; stream: number; index: number } | { kind: 'free' };

/** More objects than this in one file is refused as too complex. */
export const MAX_OBJECTS = 5_000_000;
/**
 * A file may list at most one object per byte of itself (and at least this many): a cross-reference stream of 5 KB
 * listed 5 million objects (450 MB of table), and a dozen such files ended the process. Real files hold tens of bytes
 * per object even when compressed.
 */
export const MIN_OBJECTS_ALLOWED = 100_000;

/** The objects a file of `byteLength` bytes may list. */
export function maxObjectsFor(byteLength: number): number {
  return Math.min(MAX_OBJECTS, Math.max(MIN_OBJECTS_ALLOWED, byteLength));
}

/** More pages than this in one page tree is refused as too complex (the limits are far lower anyway). */
export const MAX_PAGE_TREE_PAGES = 1_000_000;

export interface PageInfo {
  index: number;
  /** The page object's reference (a page written inline in /Kids has none). */
  ref: PDFRef | null;
  dict: PDFDict;
  /** Values inherited from ancestors (or the page's own): references or direct objects as written. */
  resources: PDFObject | undefined;
  mediaBox: PDFObject | undefined;
  cropBox: PDFObject | undefined;
  rotate: PDFObject | undefined;
}

export const N = {
  Type: PDFName.of('Type'),
  Pages: PDFName.of('Pages'),
  Page: PDFName.of('Page'),
  Kids: PDFName.of('Kids'),
  Count: PDFName.of('Count'),
  Parent: PDFName.of('Parent'),
  Resources: PDFName.of('Resources'),
  MediaBox: PDFName.of('MediaBox'),
  CropBox: PDFName.of('CropBox'),
  Rotate: PDFName.of('Rotate'),
  Root: PDFName.of('Root'),
  Info: PDFName.of('Info'),
  Encrypt: PDFName.of('Encrypt'),
  ID: PDFName.of('ID'),
  Size: PDFName.of('Size'),
  Prev: PDFName.of('Prev'),
  XRefStm: PDFName.of('XRefStm'),
  XRef: PDFName.of('XRef'),
  W: PDFName.of('W'),
  Index: PDFName.of('Index'),
  First: PDFName.of('First'),
  N: PDFName.of('N'),
  ObjStm: PDFName.of('ObjStm'),
  Length: PDFName.of('Length'),
  Annots: PDFName.of('Annots'),
  AcroForm: PDFName.of('AcroForm'),
  Fields: PDFName.of('Fields'),
  Outlines: PDFName.of('Outlines'),
  StructTreeRoot: PDFName.of('StructTreeRoot'),
  Names: PDFName.of('Names'),
  Dests: PDFName.of('Dests'),
  Perms: PDFName.of('Perms'),
} as const;

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

function lastIndexOf(data: Uint8Array, needle: string, from: number, downTo: number): number {
  const codes = Array.from(needle, (c) => c.charCodeAt(0));
  for (let i = Math.min(from, data.length - codes.length); i >= downTo; i--) {
    let ok = true;
    for (let j = 0; j < codes.length; j++) {
      if (data[i + j] !== codes[j]) {
        ok = false;
        break;
      }
    }
    if (ok) return i;
  }
  return -1;
}

export class PdfReader {
  /** Object factory for parsed objects; `lookup` on it resolves lazily through this reader. */
  readonly context: PDFContext;
  readonly version: string;
  readonly trailer: PDFDict;
  readonly encrypted: boolean;
  private readonly xref = new Map<number, XrefEntry>();
  private readonly cache = new Map<number, PDFObject | null>();
  private readonly objectStreams = new Map<number, { data: Uint8Array; offsets: Map<number, number>; first: number }>();
  private recovered: Map<number, number> | null = null;
  private pageList: PageInfo[] | null = null;
  private pageTreeNodes: Set<PDFRef> | null = null;
  private resolving = 0;
  /** Objects being parsed right now (a stream's /Length may not be read through the stream itself). */
  private readonly parsing = new Set<number>();

  private readonly maxObjects: number;

  private constructor(
    readonly bytes: Uint8Array,
    private readonly budget: ReadBudget,
  ) {
    this.maxObjects = maxObjectsFor(bytes.length);
    this.context = PDFContext.create();
    // pdf-lib's dict.lookup()/context.lookup() read indirectObjects: make that map resolve through this reader.
    const reader = this;
    const lazy = new (class extends Map<PDFRef, PDFObject> {
      override get(ref: PDFRef) {
        return reader.lookupRef(ref) ?? undefined;
      }
      override has(ref: PDFRef) {
        return reader.lookupRef(ref) !== null;
      }
    })();
    (this.context as unknown as { indirectObjects: Map<PDFRef, PDFObject> }).indirectObjects = lazy;

    const head = latin1(bytes.subarray(0, 1024));
    const h = head.indexOf('%PDF-');
    if (h < 0) throw new PdfProblem('INVALID_PDF', 'not_a_pdf', 'This is not a PDF (no %PDF- header).');
    this.version = /^%PDF-(\d\.\d)/.exec(head.slice(h))?.[1] ?? '1.4';

    // Some writers leave junk after %%EOF: look for the trailer in the last 64 KB.
    const tailFrom = Math.max(0, bytes.length - 65536);
    const eof = lastIndexOf(bytes, '%%EOF', bytes.length, tailFrom);
    const sx = lastIndexOf(bytes, 'startxref', eof >= 0 ? eof : bytes.length, tailFrom);
    if (eof < 0 || sx < 0) throw new PdfProblem('INVALID_PDF', 'truncated', 'The file is truncated (its end-of-file trailer is missing).');
    const p = new ObjectParser(bytes, this.context, undefined, budget).moveTo(sx + 'startxref'.length);
    p.skipSpace();
    const start = p.readInt();
    if (start === null) throw new PdfProblem('INVALID_PDF', 'truncated', 'The file is truncated or damaged (startxref has no offset).');

    this.trailer = this.readXrefChain(start, h);
    const root = this.trailer.get(N.Root);
    if (!(root instanceof PDFRef) || !(this.lookupRef(root) instanceof PDFDict)) {
      throw new PdfProblem('INVALID_PDF', 'no_catalog', 'The document catalog is missing or damaged.');
    }
    this.encrypted = this.trailer.get(N.Encrypt) !== undefined;
  }

  /**
   * Opens a PDF; throws PdfProblem (INVALID_PDF, PDF_TOO_COMPLEX) for files whose structure is unusable, and
   * PdfDeadlineExceeded when the budget's deadline passes while it is read (now or later, as objects are read).
   * The inputs of one request share one budget; by default a document has one of its own.
   */
  static open(bytes: Uint8Array, budget: ReadBudget = ReadBudget.forInputs(bytes.length)): PdfReader {
    try {
      return new PdfReader(bytes, budget);
    } catch (err) {
      throw asProblem(err);
    }
  }

  // ---- cross-reference sections -------------------------------------------------------------------

  private readXrefChain(first: number, headerOffset: number): PDFDict {
    const merged = PDFDict.withContext(this.context);
    const seen = new Set<number>();
    const seenStreams = new Set<number>();
    let offset: number | undefined = first;
    let newest = true;
    while (offset !== undefined) {
      if (seen.has(offset) || seen.size > 1000) throw new PdfProblem('INVALID_PDF', 'xref_loop', 'The cross-reference sections form a loop.');
      seen.add(offset);
      let section = this.readXrefSection(offset);
      // Some writers count offsets from the %PDF- header rather than the file start.
      if (!section && headerOffset > 0) section = this.readXrefSection(offset + headerOffset);
      if (!section) {
        if (newest) throw new PdfProblem('INVALID_PDF', 'xref_not_found', 'The cross-reference table the trailer points to does not exist; the file is damaged.');
        break; // a broken older section: keep what the newer ones say
      }
      for (const [key, value] of section.trailer.entries()) if (!merged.has(key)) merged.set(key, value);
      const stm = section.trailer.get(N.XRefStm);
      // A hybrid file's stream section adds the objects its classic table leaves out (or marks free); each is read once.
      if (stm instanceof PDFNumber && !seenStreams.has(stm.asNumber())) {
        seenStreams.add(stm.asNumber());
        this.readXrefSection(stm.asNumber(), true);
      }
      const prev = section.trailer.get(N.Prev);
      offset = prev instanceof PDFNumber ? prev.asNumber() : undefined;
      newest = false;
    }
    merged.delete(N.Prev);
    merged.delete(N.XRefStm);
    return merged;
  }

  private tooManyObjects(): PdfProblem {
    return new PdfProblem('PDF_TOO_COMPLEX', 'too_many_objects', `The file lists more than ${this.maxObjects} objects (at most one per byte of the file, ${MAX_OBJECTS} in all).`);
  }

  private setEntry(num: number, entry: XrefEntry, overrideFree = false) {
    const existing = this.xref.get(num);
    if (!existing || (overrideFree && existing.kind === 'free' && entry.kind !== 'free')) {
      if (this.xref.size >= this.maxObjects) throw this.tooManyObjects();
      this.xref.set(num, entry);
    }
  }

  /** One section at `offset`: a classic table (`xref` … `trailer`) or a cross-reference stream. */
  private readXrefSection(offset: number, overrideFree = false): { trailer: PDFDict } | null {
    if (!Number.isInteger(offset) || offset < 0 || offset >= this.bytes.length) return null;
    const p = new ObjectParser(this.bytes, this.context, undefined, this.budget).moveTo(offset);
    p.skipSpace();
    if (p.matches('xref')) return this.readXrefTable(p);
    p.moveTo(offset);
    const header = p.readObjectHeader();
    if (!header) return null;
    let obj: PDFObject;
    try {
      obj = p.parseObject();
    } catch (err) {
      passDeadline(err);
      return null;
    }
    if (!(obj instanceof PDFRawStream) || obj.dict.get(N.Type) !== N.XRef) return null;
    this.readXrefStream(obj, overrideFree);
    return { trailer: obj.dict };
  }

  private readXrefTable(p: ObjectParser): { trailer: PDFDict } | null {
    for (;;) {
      p.skipSpace();
      if (p.matches('trailer')) break;
      const start = p.readInt();
      p.skipSpace();
      const count = p.readInt();
      if (start === null || count === null) return null;
      if (count > this.maxObjects) throw this.tooManyObjects();
      for (let i = 0; i < count; i++) {
        if (i % 65536 === 65535) this.budget.deadline.check();
        p.skipSpace();
        const off = p.readInt();
        p.skipSpace();
        const gen = p.readInt();
        p.skipSpace();
        if (off === null || gen === null) return null;
        const kind = p.matches('n') ? 'n' : p.matches('f') ? 'f' : null;
        if (!kind) return null;
        this.setEntry(start + i, kind === 'n' && off > 0 ? { kind: 'offset', offset: off, gen } : { kind: 'free' });
      }
    }
    let trailer: PDFObject;
    try {
      trailer = p.parseObject();
    } catch (err) {
      passDeadline(err);
      return null;
    }
    return trailer instanceof PDFDict ? { trailer } : null;
  }

  /** A structure stream's bytes, charged to the request's decoding budget. */
  private decode(stream: PDFRawStream): Uint8Array {
    return decodeStructureStream(stream, (o) => this.resolve(o as PDFObject), this.budget);
  }

  private readXrefStream(stream: PDFRawStream, overrideFree: boolean) {
    const dict = stream.dict;
    const w = dict.get(N.W);
    if (!(w instanceof PDFArray) || w.size() !== 3) throw new PdfProblem('INVALID_PDF', 'bad_xref', 'The cross-reference stream is damaged (/W).');
    const widths = w.asArray().map((x) => (x instanceof PDFNumber ? x.asNumber() : -1));
    if (widths.some((x) => !Number.isInteger(x) || x < 0 || x > 8)) throw new PdfProblem('INVALID_PDF', 'bad_xref', 'The cross-reference stream is damaged (/W).');
    const size = dict.get(N.Size);
    const indexObj = dict.get(N.Index);
    const index =
      indexObj instanceof PDFArray ? indexObj.asArray().map((x) => (x instanceof PDFNumber ? x.asNumber() : 0)) : [0, size instanceof PDFNumber ? size.asNumber() : 0];
    const data = this.decode(stream);
    const rowLength = widths[0] + widths[1] + widths[2];
    if (rowLength === 0) return;
    let pos = 0;
    const field = (width: number, fallback: number) => {
      if (width === 0) return fallback;
      let v = 0;
      for (let i = 0; i < width; i++) v = v * 256 + data[pos++];
      return v;
    };
    for (let s = 0; s + 1 < index.length; s += 2) {
      const start = index[s];
      const count = index[s + 1];
      if (count > this.maxObjects) throw this.tooManyObjects();
      for (let i = 0; i < count && pos + rowLength <= data.length; i++) {
        const type = field(widths[0], 1);
        const a = field(widths[1], 0);
        const b = field(widths[2], 0);
        if (type === 1) this.setEntry(start + i, a > 0 ? { kind: 'offset', offset: a, gen: b } : { kind: 'free' }, overrideFree);
        else if (type === 2) this.setEntry(start + i, { kind: 'compressed', stream: a, index: b }, overrideFree);
        else this.setEntry(start + i, { kind: 'free' });
      }
    }
  }

  // ---- objects ------------------------------------------------------------------------------------

  /** The object a reference points to; null for free or missing objects (the PDF null). */
  lookupRef(ref: PDFRef): PDFObject | null {
    this.budget.onLookup();
    const num = ref.objectNumber;
    const cached = this.cache.get(num);
    if (cached !== undefined) return cached;
    this.resolving++;
    try {
      if (this.resolving > 200) throw new PdfProblem('PDF_TOO_COMPLEX', 'nesting', 'Objects refer to each other too deeply.');
      const obj = this.loadObject(num);
      this.cache.set(num, obj);
      return obj;
    } finally {
      this.resolving--;
    }
  }

  /** A value with references followed (up to a few hops); undefined for null/missing. */
  resolve(obj: PDFObject | undefined): PDFObject | undefined {
    let cur = obj;
    for (let hops = 0; cur instanceof PDFRef && hops < 8; hops++) cur = this.lookupRef(cur) ?? undefined;
    if (cur instanceof PDFRef || cur === PDFNull) return undefined;
    return cur;
  }

  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  get<T extends PDFObject>(dict: PDFDict | undefined, key: PDFName, type: Function & { prototype: T }): T | undefined {
    if (!dict) return undefined;
    const v = this.resolve(dict.get(key));
    return v instanceof type ? (v as T) : undefined;
  }

  private loadObject(num: number): PDFObject | null {
    const entry = this.xref.get(num);
    if (!entry || entry.kind === 'free') return null;
    if (entry.kind === 'compressed') return this.loadCompressed(num, entry.stream);
    const obj = this.parseAt(entry.offset, num);
    if (obj !== undefined) return obj;
    const offset = this.recover().get(num);
    if (offset !== undefined) {
      const again = this.parseAt(offset, num);
      if (again !== undefined) return again;
    }
    return null;
  }

  /** Parses `num G obj …` at `offset`; undefined when the object is not there. */
  private parseAt(offset: number, num: number): PDFObject | undefined {
    if (offset < 0 || offset >= this.bytes.length) return undefined;
    const p = new ObjectParser(
      this.bytes,
      this.context,
      (ref) => {
        // A /Length naming the stream itself (or a stream naming this one back) is no length: the end is searched.
        if (this.parsing.has(ref.objectNumber)) return undefined;
        const len = this.resolve(ref);
        return len instanceof PDFNumber ? len.asNumber() : undefined;
      },
      this.budget,
    ).moveTo(offset);
    const header = p.readObjectHeader();
    if (!header || header.num !== num) return undefined;
    this.parsing.add(num);
    try {
      return p.parseObject();
    } catch (err) {
      if (err instanceof RangeError) throw new PdfProblem('PDF_TOO_COMPLEX', 'nesting', 'An object is nested too deeply.');
      if (err instanceof PdfProblem) throw err;
      passDeadline(err);
      return undefined;
    } finally {
      this.parsing.delete(num);
    }
  }

  private loadCompressed(num: number, streamNum: number): PDFObject | null {
    let objStm = this.objectStreams.get(streamNum);
    if (!objStm) {
      const stream = this.lookupRef(refOf(this.context, streamNum));
      if (!(stream instanceof PDFRawStream)) return null;
      const data = this.decode(stream);
      const n = this.resolve(stream.dict.get(N.N));
      const first = this.resolve(stream.dict.get(N.First));
      if (!(n instanceof PDFNumber) || !(first instanceof PDFNumber)) return null;
      const offsets = new Map<number, number>();
      const p = new ObjectParser(data, this.context, undefined, this.budget);
      for (let i = 0; i < n.asNumber(); i++) {
        p.skipSpace();
        const objNum = p.readInt();
        p.skipSpace();
        const off = p.readInt();
        if (objNum === null || off === null) break;
        if (!offsets.has(objNum)) offsets.set(objNum, off);
      }
      objStm = { data, offsets, first: first.asNumber() };
      this.objectStreams.set(streamNum, objStm);
    }
    const off = objStm.offsets.get(num);
    if (off === undefined) return null;
    const p = new ObjectParser(objStm.data, this.context, undefined, this.budget).moveTo(objStm.first + off);
    try {
      return p.parseObject();
    } catch (err) {
      if (err instanceof RangeError) throw new PdfProblem('PDF_TOO_COMPLEX', 'nesting', 'An object is nested too deeply.');
      passDeadline(err);
      return null;
    }
  }

  /** One pass over the file finding every `N G obj`, used when an xref offset is wrong. */
  private recover(): Map<number, number> {
    if (!this.recovered) {
      this.recovered = new Map();
      const text = latin1(this.bytes);
      const re = /(\d{1,10})[ \t\r\n\f\0]+(\d{1,5})[ \t\r\n\f\0]+obj\b/g;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        const atLineStart = m.index === 0 || /[\s>]/.test(text[m.index - 1]);
        if (atLineStart) this.recovered.set(Number(m[1]), m.index);
      }
    }
    return this.recovered;
  }

  // ---- document structure ---------------------------------------------------------------------------

  get catalogRef(): PDFRef {
    return this.trailer.get(N.Root) as PDFRef;
  }

  get catalog(): PDFDict {
    return this.lookupRef(this.catalogRef) as PDFDict;
  }

  /** Every page in order, with inherited attributes resolved. Throws INVALID_PDF for a broken page tree. */
  pages(): PageInfo[] {
    if (this.pageList) return this.pageList;
    if (this.encrypted) throw new PdfProblem('PDF_ENCRYPTED', 'encrypted', 'The PDF is encrypted or password-protected.');
    const rootObj = this.catalog.get(N.Pages);
    const root = this.resolve(rootObj);
    if (!(root instanceof PDFDict)) throw new PdfProblem('INVALID_PDF', 'no_page_tree', 'The page tree is missing or damaged.');
    const pages: PageInfo[] = [];
    const nodes = new Set<PDFRef>();
    const visited = new Set<PDFDict>();
    type Frame = { node: PDFDict; ref: PDFRef | null; inherited: Pick<PageInfo, 'resources' | 'mediaBox' | 'cropBox' | 'rotate'>; depth: number };
    const stack: Frame[] = [{ node: root, ref: rootObj instanceof PDFRef ? rootObj : null, inherited: { resources: undefined, mediaBox: undefined, cropBox: undefined, rotate: undefined }, depth: 0 }];
    while (stack.length) {
      const { node, ref, inherited, depth } = stack.pop()!;
      if (visited.has(node)) {
        // A page listed twice is no loop, but which number would it have? Viewers disagree, so it is refused too.
        const type = node.get(N.Type);
        const isPage = type === N.Page || (type !== N.Pages && !(this.resolve(node.get(N.Kids)) instanceof PDFArray));
        const which = ref ? `page object ${ref.objectNumber}` : 'a page';
        throw new PdfProblem(
          'INVALID_PDF',
          'page_tree_loop',
          isPage ? `The page tree lists ${which} more than once, so pages cannot be numbered.` : 'The page tree refers back to itself or lists one of its branches twice.',
        );
      }
      visited.add(node);
      if (depth > 256) throw new PdfProblem('PDF_TOO_COMPLEX', 'page_tree_depth', 'The page tree is nested too deeply.');
      const own = {
        resources: node.get(N.Resources) ?? inherited.resources,
        mediaBox: node.get(N.MediaBox) ?? inherited.mediaBox,
        cropBox: node.get(N.CropBox) ?? inherited.cropBox,
        rotate: node.get(N.Rotate) ?? inherited.rotate,
      };
      const type = node.get(N.Type);
      const kids = this.resolve(node.get(N.Kids));
      if (type === N.Pages || (type !== N.Page && kids instanceof PDFArray)) {
        if (ref) nodes.add(ref);
        if (!(kids instanceof PDFArray)) continue;
        // Push in reverse so the first kid is processed first.
        for (let i = kids.size() - 1; i >= 0; i--) {
          const kidObj = kids.get(i);
          const kid = this.resolve(kidObj);
          // Skipping it would shift every later page: "page 2" would select what the author calls page 3.
          if (!(kid instanceof PDFDict)) {
            const which = kidObj instanceof PDFRef ? `object ${kidObj.objectNumber}` : `entry ${i + 1} of a /Kids list`;
            throw new PdfProblem('INVALID_PDF', 'damaged_page', `A page of the page tree (${which}) is missing or damaged, so pages cannot be numbered.`);
          }
          stack.push({ node: kid, ref: kidObj instanceof PDFRef ? kidObj : null, inherited: own, depth: depth + 1 });
        }
      } else {
        if (pages.length >= MAX_PAGE_TREE_PAGES) throw new PdfProblem('PDF_TOO_COMPLEX', 'too_many_pages', 'The page tree is too large.');
        pages.push({ index: pages.length, ref, dict: node, ...own });
      }
    }
    this.pageList = pages;
    this.pageTreeNodes = nodes;
    return pages;
  }

  /** References of the intermediate page-tree nodes (never copied). */
  treeNodeRefs(): Set<PDFRef> {
    this.pages();
    return this.pageTreeNodes!;
  }
}

/**
 * pdf-lib's parse errors (PDFParsingError and its kinds, NumberParsingError), told by their messages: pdf-lib is
 * compiled to ES5, where a subclass of Error loses its prototype, so `instanceof` and the class name both fail.
 */
const PDF_LIB_PARSE_ERROR = /^Failed to parse (PDF document|number)\b/;

/** Any failure while reading (including stack exhaustion on hostile nesting) as a PdfProblem. */
export function asProblem(err: unknown): PdfProblem {
  if (err instanceof PdfProblem) return err;
  if (err instanceof RangeError) return new PdfProblem('PDF_TOO_COMPLEX', 'nesting', 'The document is nested too deeply to process.');
  if (err instanceof Error && PDF_LIB_PARSE_ERROR.test(err.message)) {
    return new PdfProblem('INVALID_PDF', 'unreadable', 'The PDF structure is damaged and cannot be read.');
  }
  throw err;
}

/** Bytes of a string decoded at a time: pdf-lib decodes with one String.fromCodePoint call, which overflows the stack past ~125,000. */
const TEXT_PIECE_BYTES = 16 * 1024;
/** Each string is decoded once: many fields naming one long value decoded it again for each (100 fields of 8 MB: 40 s). */
const texts = new WeakMap<PDFString | PDFHexString, string | undefined>();

function decodeText(obj: PDFString | PDFHexString): string {
  const bytes = obj.asBytes();
  if (bytes.length <= TEXT_PIECE_BYTES) return obj.decodeText();
  if (!hasUtf16BOM(bytes)) {
    let text = '';
    for (let at = 0; at < bytes.length; at += TEXT_PIECE_BYTES) text += pdfDocEncodingDecode(bytes.subarray(at, at + TEXT_PIECE_BYTES));
    return text;
  }
  // UTF-16 in pieces of whole code units, each after the byte order mark, never ending between a surrogate pair's halves.
  const bigEndian = bytes[0] === 0xfe;
  const piece = new Uint8Array(TEXT_PIECE_BYTES + 4);
  piece.set(bytes.subarray(0, 2));
  let text = '';
  for (let at = 2; at < bytes.length; ) {
    let end = Math.min(bytes.length, at + TEXT_PIECE_BYTES);
    const high = bigEndian ? bytes[end - 2] : bytes[end - 1];
    if (end < bytes.length && high >= 0xd8 && high <= 0xdb) end = Math.min(bytes.length, end + 2);
    piece.set(bytes.subarray(at, end), 2);
    text += utf16Decode(piece.subarray(0, 2 + end - at));
    at = end;
  }
  return text;
}

/** Text of a PDF string (PDFDocEncoding or UTF-16 with BOM). */
export function textOf(obj: PDFObject | undefined): string | undefined {
  if (obj instanceof PDFString || obj instanceof PDFHexString) {
    if (texts.has(obj)) return texts.get(obj);
    let text: string | undefined;
    try {
      text = decodeText(obj);
    } catch {
      text = undefined;
    }
    texts.set(obj, text);
    return text;
  }
  if (obj instanceof PDFName) return obj.decodeText();
  return undefined;
}

export function numberOf(obj: PDFObject | undefined): number | undefined {
  return obj instanceof PDFNumber ? obj.asNumber() : undefined;
}
