/**
 * A new PDF file being assembled: objects numbered from 1, serialised with pdf-lib's object writers.
 * Small objects go into compressed object streams with a cross-reference stream (native zlib), which
 * keeps outputs small without touching page content; stream data is written as it came.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PDFArray, PDFContext, PDFDict, PDFHexString, PDFName, PDFNumber, type PDFObject, PDFRawStream, PDFRef } from 'pdf-lib';
import { Deadline, OutputBudgetExceeded } from './errors';
import { JOB_LIMITS } from './limits';
import { wellFormed } from '../validation/well-formed';

/** Below this many small objects a classic xref table is smaller than object streams plus their index. */
const OBJECT_STREAM_THRESHOLD = 8;
/**
 * ...unless they are big: past this many bytes of (uncompressed) small objects, object streams are used however few
 * there are, so that a long string in a dictionary (stored compressed in the input) is not written out at full length.
 */
const OBJECT_STREAM_MIN_BYTES = 4096;
const OBJECTS_PER_STREAM = 200;

const enc = (s: string) => Buffer.from(s, 'latin1');

/** Objects allocated or written between two looks at the clock. */
const OBJECTS_PER_CLOCK_CHECK = 4096;

export interface OutputDocumentOptions {
  /** Past it, allocating stops with OutputBudgetExceeded('objects'). Default: the most any operation allows (jobs'). */
  maxObjects?: number;
  /** Looked at while objects are allocated and written, so one huge page or file ends at the time limit. */
  deadline?: Deadline;
}

export class OutputDocument {
  readonly context = PDFContext.create();
  private readonly objects: (PDFObject | undefined)[] = [undefined];
  private readonly sizes: number[] = [0];
  private readonly weights: number[] = [0];
  /**
   * What the objects assigned so far weigh: their bytes as written (before compression), and the memory they hold beyond
   * that while the file is built (see weightOf).
   */
  private assignedBytes = 0;
  private readonly pageRefs: PDFRef[] = [];
  readonly pagesRef: PDFRef;
  private info: PDFDict | null = null;
  private optionalContent: { groups: PDFRef[]; hidden: PDFRef[] } | null = null;

  private readonly maxObjects: number;
  private readonly deadline: Deadline;

  constructor(options: OutputDocumentOptions = {}) {
    this.maxObjects = options.maxObjects ?? JOB_LIMITS.maxObjectsPerOutput;
    this.deadline = options.deadline ?? Deadline.none();
    this.pagesRef = this.alloc();
  }

  alloc(): PDFRef {
    if (this.objects.length > this.maxObjects) throw new OutputBudgetExceeded('objects');
    if (this.objects.length % OBJECTS_PER_CLOCK_CHECK === 0) this.deadline.check();
    this.objects.push(undefined);
    return PDFRef.of(this.objects.length - 1);
  }

  assign(ref: PDFRef, obj: PDFObject): void {
    const size = obj.sizeInBytes();
    const weight = size + weightOf(obj);
    this.assignedBytes += weight - (this.weights[ref.objectNumber] ?? 0);
    this.sizes[ref.objectNumber] = size;
    this.weights[ref.objectNumber] = weight;
    this.objects[ref.objectNumber] = obj;
  }

  /**
   * Roughly what the file weighs so far, in bytes written or held, whichever is more: checked while pages are copied, so a
   * file is not built past its budget (of output or of memory).
   */
  get bytesSoFar(): number {
    return this.assignedBytes;
  }

  get(ref: PDFRef): PDFObject | undefined {
    return this.objects[ref.objectNumber];
  }

  register(obj: PDFObject): PDFRef {
    const ref = this.alloc();
    this.assign(ref, obj);
    return ref;
  }

  dict(entries: Record<string, PDFObject> = {}): PDFDict {
    const d = PDFDict.withContext(this.context);
    for (const [k, v] of Object.entries(entries)) d.set(PDFName.of(k), v);
    return d;
  }

  array(items: PDFObject[] = []): PDFArray {
    const a = PDFArray.withContext(this.context);
    for (const item of items) a.push(item);
    return a;
  }

  /** A new uncompressed stream (small generated content such as q/Q wrappers). */
  stream(content: string, entries: Record<string, PDFObject> = {}): PDFRawStream {
    return PDFRawStream.of(this.dict(entries), enc(content));
  }

  addPage(ref: PDFRef): void {
    this.pageRefs.push(ref);
  }

  get pageCount(): number {
    return this.pageRefs.length;
  }

  /** Optional content groups of the copied pages (the catalog's /OCProperties), `hidden` off by default. */
  setOptionalContent(groups: PDFRef[], hidden: PDFRef[]): void {
    this.optionalContent = groups.length ? { groups, hidden } : null;
  }

  setTitle(title: string): void {
    this.info ??= this.dict();
    this.info.set(PDFName.of('Title'), PDFHexString.fromText(wellFormed(title)));
  }

  /** Serialises the document. Unassigned allocated numbers become free entries. */
  save(): Uint8Array {
    this.assign(this.pagesRef, this.dict({ Type: PDFName.of('Pages'), Kids: this.array(this.pageRefs), Count: PDFNumber.of(this.pageRefs.length) }));
    const catalog = this.dict({ Type: PDFName.of('Catalog'), Pages: this.pagesRef });
    if (this.optionalContent) {
      const { groups } = this.optionalContent;
      const hidden = new Set(this.optionalContent.hidden);
      catalog.set(
        PDFName.of('OCProperties'),
        this.dict({ OCGs: this.array(groups), D: this.dict({ Order: this.array(groups), ON: this.array(groups.filter((g) => !hidden.has(g))), OFF: this.array([...hidden]) }) }),
      );
    }
    const catalogRef = this.register(catalog);
    const infoRef = this.info ? this.register(this.info) : null;

    const small: number[] = [];
    let smallBytes = 0;
    for (let n = 1; n < this.objects.length; n++) {
      const obj = this.objects[n];
      if (obj && !(obj instanceof PDFRawStream)) {
        small.push(n);
        smallBytes += this.sizes[n] ?? 0;
      }
    }
    const useObjectStreams = small.length >= OBJECT_STREAM_THRESHOLD || smallBytes > OBJECT_STREAM_MIN_BYTES;

    const chunks: Uint8Array[] = [];
    let offset = 0;
    const push = (bytes: Uint8Array) => {
      chunks.push(bytes);
      offset += bytes.length;
    };
    push(enc('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n'));

    const offsets = new Array<number>(this.objects.length).fill(0);
    /** For objects inside object streams: [stream number, index]. */
    const compressed = new Map<number, [number, number]>();
    const hash = createHash('md5');

    const writeObject = (num: number, obj: PDFObject) => {
      if (num % OBJECTS_PER_CLOCK_CHECK === 0) this.deadline.check();
      offsets[num] = offset;
      const body = serialize(obj);
      hash.update(body);
      push(enc(`${num} 0 obj\n`));
      push(body);
      push(enc('\nendobj\n'));
    };

    // Streams (and, without object streams, everything) as top-level objects.
    for (let n = 1; n < this.objects.length; n++) {
      const obj = this.objects[n];
      if (!obj) continue;
      if (obj instanceof PDFRawStream || !useObjectStreams) writeObject(n, obj);
    }

    let size = this.objects.length;
    if (useObjectStreams) {
      for (let i = 0; i < small.length; i += OBJECTS_PER_STREAM) {
        const group = small.slice(i, i + OBJECTS_PER_STREAM);
        const streamNum = size++;
        const bodies: Uint8Array[] = [];
        const header: string[] = [];
        let at = 0;
        this.deadline.check();
        group.forEach((n, idx) => {
          const body = serialize(this.objects[n]!);
          hash.update(body);
          header.push(`${n} ${at}`);
          bodies.push(body, enc('\n'));
          at += body.length + 1;
          compressed.set(n, [streamNum, idx]);
        });
        const head = enc(`${header.join(' ')}\n`);
        const data = deflateSync(Buffer.concat([head, ...bodies]));
        offsets.push(0);
        writeObject(
          streamNum,
          PDFRawStream.of(
            this.dict({ Type: PDFName.of('ObjStm'), N: PDFNumber.of(group.length), First: PDFNumber.of(head.length), Filter: PDFName.of('FlateDecode') }),
            data,
          ),
        );
      }
    }

    const digest = hash.digest('hex');
    const id = this.array([PDFHexString.of(digest), PDFHexString.of(digest)]);
    const trailerEntries: Record<string, PDFObject> = { Root: catalogRef, ID: id };
    if (infoRef) trailerEntries.Info = infoRef;

    if (useObjectStreams) {
      const xrefNum = size++;
      const xrefOffset = offset;
      const offsetBytes = offset > 0xffffffff ? 5 : 4;
      const row = 1 + offsetBytes + 2;
      const table = Buffer.alloc(size * row);
      const put = (at: number, value: number, width: number) => {
        for (let i = width - 1; i >= 0; i--) {
          table[at + i] = value % 256;
          value = Math.floor(value / 256);
        }
      };
      for (let n = 0; n < size; n++) {
        const at = n * row;
        const c = compressed.get(n);
        if (n === xrefNum) {
          table[at] = 1;
          put(at + 1, xrefOffset, offsetBytes);
        } else if (c) {
          table[at] = 2;
          put(at + 1, c[0], offsetBytes);
          put(at + 1 + offsetBytes, c[1], 2);
        } else if (offsets[n]) {
          table[at] = 1;
          put(at + 1, offsets[n], offsetBytes);
        } else {
          table[at] = 0;
          put(at + 1 + offsetBytes, n === 0 ? 65535 : 0, 2);
        }
      }
      const xref = PDFRawStream.of(
        this.dict({
          ...trailerEntries,
          Type: PDFName.of('XRef'),
          Size: PDFNumber.of(size),
          W: this.array([PDFNumber.of(1), PDFNumber.of(offsetBytes), PDFNumber.of(2)]),
          Filter: PDFName.of('FlateDecode'),
        }),
        deflateSync(table),
      );
      push(enc(`${xrefNum} 0 obj\n`));
      push(serialize(xref));
      push(enc('\nendobj\n'));
      push(enc(`startxref\n${xrefOffset}\n%%EOF\n`));
    } else {
      const xrefOffset = offset;
      const lines = [`xref\n0 ${size}\n0000000000 65535 f \n`];
      for (let n = 1; n < size; n++) lines.push(offsets[n] ? `${String(offsets[n]).padStart(10, '0')} 00000 n \n` : '0000000000 00000 f \n');
      push(enc(lines.join('')));
      push(enc('trailer\n'));
      push(serialize(this.dict({ ...trailerEntries, Size: PDFNumber.of(size) })));
      push(enc(`\nstartxref\n${xrefOffset}\n%%EOF\n`));
    }

    const out = new Uint8Array(offset);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/**
 * Memory a copied object holds beyond its bytes as written: a reference per array element and dictionary entry (and the
 * room arrays and maps keep to grow). Each copy of a page (or annotation) has its own arrays, sharing the values in them:
 * a page holding an array of a million zeros (2 MB written, in a 2 KB file) selected 500 times held 8 MB per copy, and
 * ran out of memory (1.7 GB) long before its copies' 2 MB each reached the output guard.
 */
const BYTES_PER_SLOT = 16;

function weightOf(obj: PDFObject): number {
  let slots = 0;
  const stack: PDFObject[] = [obj];
  while (stack.length) {
    const o = stack.pop()!;
    if (o instanceof PDFArray) {
      slots += o.size();
      for (let i = 0; i < o.size(); i++) stack.push(o.get(i));
    } else if (o instanceof PDFDict) {
      const entries = o.entries();
      slots += 2 * entries.length;
      for (const [, v] of entries) stack.push(v);
    } else if (o instanceof PDFRawStream) {
      stack.push(o.dict);
    }
  }
  return BYTES_PER_SLOT * slots;
}

/** Bytes of one object. Streams get a direct /Length; their data is copied in one block. */
export function serialize(obj: PDFObject): Uint8Array {
  if (obj instanceof PDFRawStream) {
    obj.dict.set(PDFName.of('Length'), PDFNumber.of(obj.contents.length));
    const dict = serialize(obj.dict);
    const out = new Uint8Array(dict.length + obj.contents.length + 18);
    out.set(dict, 0);
    out.set(enc('\nstream\n'), dict.length);
    out.set(obj.contents, dict.length + 8);
    out.set(enc('\nendstream'), dict.length + 8 + obj.contents.length);
    return out;
  }
  const out = new Uint8Array(obj.sizeInBytes());
  obj.copyBytesInto(out, 0);
  return out;
}
