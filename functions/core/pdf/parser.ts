/**
 * pdf-lib's object parser, positioned at any offset, with these changes for the lazy reader: a stream's
 * `/Length` may be an indirect object (resolved through the reader), stream contents are views into
 * the file rather than copies, every reference is read as generation 0, and what is parsed is metered
 * (ParseMeter): every value counted, every string and name measured before it is built, in one piece.
 */
import ByteStream from 'pdf-lib/cjs/core/parser/ByteStream';
import { IsDelimiter } from 'pdf-lib/cjs/core/syntax/Delimiters';
import { IsDigit, IsNumeric } from 'pdf-lib/cjs/core/syntax/Numeric';
import { IsWhitespace } from 'pdf-lib/cjs/core/syntax/Whitespace';
import {
  NextByteAssertionError,
  NumberParsingError,
  type PDFContext,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFObjectParser,
  PDFRawStream,
  PDFRef,
  PDFStreamParsingError,
  PDFString,
  UnbalancedParenthesisError,
  type PDFObject,
} from 'pdf-lib';

/** What parsing may cost (the request's ReadBudget): each may throw to stop the parse. */
export interface ParseMeter {
  /** One value (number, name, string, array, dictionary, array element or dictionary entry) is about to be parsed. */
  onValue(): void;
  /** A string or name of `bytes` bytes is about to be built. */
  onToken(bytes: number, kind: 'string' | 'name'): void;
  /** A name as written (before #xx decoding) is about to be made: pdf-lib keeps every distinct name for good. */
  onName(name: string): void;
}

const UNMETERED: ParseMeter = { onValue: () => undefined, onToken: () => undefined, onName: () => undefined };

const latin1 = (data: Uint8Array, from: number, to: number) => Buffer.from(data.buffer, data.byteOffset + from, to - from).toString('latin1');

const bytesOf = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
const STREAM = bytesOf('stream');
const ENDSTREAM = bytesOf('endstream');
const OBJ = bytesOf('obj');

const isWhite = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0x0c || b === 0x00;

/**
 * References by object number, one pool per document (its PDFContext). pdf-lib's `PDFRef.of` keeps every reference it
 * ever made in a process-wide pool that never shrinks: one request whose page named 2.9 million distinct objects left
 * 630 MB behind for good, and the next one as much again. A document's references are made here and go with it; within
 * a document they are still one object per number, so everything keyed by reference agrees.
 */
const refPools = new WeakMap<PDFContext, Map<number, PDFRef>>();

export function refOf(context: PDFContext, objectNumber: number): PDFRef {
  let pool = refPools.get(context);
  if (!pool) refPools.set(context, (pool = new Map()));
  let ref = pool.get(objectNumber);
  if (!ref) {
    // What PDFRef's private constructor makes, without its pool.
    ref = Object.assign(Object.create(PDFRef.prototype) as PDFRef, { objectNumber, generationNumber: 0, tag: `${objectNumber} 0 R` });
    pool.set(objectNumber, ref);
  }
  return ref;
}

/**
 * Offsets of every `endstream` in a buffer (the file, or an object stream's data), found once per buffer: a stream
 * whose /Length is unusable ends at the first one after its data. pdf-lib's own search walks the bytes in JavaScript
 * to the end of the file for every such stream (and counts any `stream` on the way as a nested one), so a file of
 * 8,000 unterminated streams (258 KB) took 36 s to inspect.
 */
const endstreams = new WeakMap<Uint8Array, Int32Array>();

function endstreamAfter(data: Uint8Array, from: number): number {
  let found = endstreams.get(data);
  if (!found) {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const at: number[] = [];
    for (let i = buf.indexOf('endstream', 0, 'latin1'); i >= 0; i = buf.indexOf('endstream', i + ENDSTREAM.length, 'latin1')) at.push(i);
    endstreams.set(data, (found = Int32Array.from(at)));
  }
  let lo = 0;
  let hi = found.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (found[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < found.length ? found[lo] : -1;
}

export class ObjectParser extends PDFObjectParser {
  constructor(
    private readonly data: Uint8Array,
    private readonly objects: PDFContext,
    private readonly resolveLength: (ref: PDFRef) => number | undefined = () => undefined,
    private readonly meter: ParseMeter = UNMETERED,
  ) {
    super(ByteStream.of(data), objects, false);
  }

  // Array elements and dictionary values are parsed through here too, so a huge array or dictionary is counted as it
  // is read (and stopped by the meter), not after.
  override parseObject(): PDFObject {
    this.meter.onValue();
    return super.parseObject();
  }

  // pdf-lib builds strings and names a character at a time (a 100 MB string took gigabytes): they are measured first
  // and then decoded in one piece, with pdf-lib's semantics (raw bytes between the delimiters, escapes kept).
  protected override parseString(): PDFString {
    const d = this.data;
    const start = this.bytes.offset();
    this.expect(0x28);
    let depth = 0;
    let escaped = false;
    let i = start;
    for (; i < d.length; i++) {
      const b = d[i];
      if (!escaped) {
        if (b === 0x28) depth++;
        else if (b === 0x29) depth--;
      }
      if (b === 0x5c) escaped = !escaped;
      else if (escaped) escaped = false;
      if (depth === 0) break;
    }
    if (i >= d.length) throw new UnbalancedParenthesisError(this.bytes.position());
    this.meter.onToken(i - start - 1, 'string');
    const value = latin1(d, start + 1, i);
    this.bytes.moveTo(i + 1);
    return PDFString.of(value);
  }

  protected override parseHexString(): PDFHexString {
    const d = this.data;
    this.expect(0x3c);
    const start = this.bytes.offset() + 1;
    const end = d.indexOf(0x3e, start);
    if (end < 0) throw new NextByteAssertionError(this.bytes.position(), 0x3e, -1);
    this.meter.onToken(end - start, 'string');
    const value = latin1(d, start, end);
    this.bytes.moveTo(end + 1);
    return PDFHexString.of(value);
  }

  protected override parseName(): PDFName {
    const d = this.data;
    this.expect(0x2f);
    const start = this.bytes.offset() + 1;
    let end = start;
    while (end < d.length && !IsWhitespace[d[end]] && !IsDelimiter[d[end]]) end++;
    this.meter.onToken(end - start, 'name');
    const name = latin1(d, start, end);
    this.meter.onName(name);
    this.bytes.moveTo(end);
    return PDFName.of(name);
  }

  /**
   * The reader finds objects by number alone, so `5 0 R` and `5 1 R` name one object. References are read as one
   * name per object, so that everything keyed by reference (copies, blocked structures, page links, form widgets)
   * agrees: otherwise one object written under many generations would be copied once per name (a few KB of input
   * asking for gigabytes of output), or a blocked structure reached under another generation.
   */
  protected override parseNumberOrRef(): PDFNumber | PDFRef {
    // pdf-lib's, with references from the document's own pool (see refOf).
    const first = this.parseRawNumber();
    this.skipWhitespaceAndComments();
    const lookahead = this.bytes.offset();
    if (IsDigit[this.bytes.peek()]) {
      this.parseRawNumber();
      this.skipWhitespaceAndComments();
      if (this.bytes.peek() === 0x52) {
        this.bytes.next();
        return refOf(this.objects, first);
      }
    }
    this.bytes.moveTo(lookahead);
    return PDFNumber.of(first);
  }

  /**
   * pdf-lib's number syntax, read in one piece, and kept within ±(2^53 − 1) as its `capNumbers` option does (at both
   * ends, and without its console warning per number: a 51 KB file logged 2 million lines). A number past that is no
   * number any reader can use, and copied as written it made outputs qpdf cannot open: an integer past 2^63 in the
   * object stream holding the catalog loses the whole file.
   */
  protected override parseRawNumber(): number {
    const d = this.data;
    const start = this.bytes.offset();
    let end = start;
    // The integer part, with its leading + - or . (a period ends it), then the digits of the decimal part.
    while (end < d.length && IsNumeric[d[end]]) if (d[end++] === 0x2e) break;
    while (end < d.length && IsDigit[d[end]]) end++;
    this.bytes.moveTo(end);
    const value = latin1(d, start, end);
    const n = Number(value);
    if (!value || !Number.isFinite(n)) throw new NumberParsingError(this.bytes.position(), value);
    return Math.min(Number.MAX_SAFE_INTEGER, Math.max(-Number.MAX_SAFE_INTEGER, n));
  }

  /** pdf-lib's assertion that the next byte is `byte`, without consuming it. */
  private expect(byte: number): void {
    const found = this.bytes.done() ? -1 : this.bytes.peek();
    if (found !== byte) throw new NextByteAssertionError(this.bytes.position(), byte, found);
  }

  moveTo(offset: number): this {
    this.bytes.moveTo(offset);
    return this;
  }

  offset(): number {
    return this.bytes.offset();
  }

  skipSpace(): void {
    this.skipWhitespaceAndComments();
  }

  /** Reads `N G obj` at the current position; null when the bytes there are not an object header. */
  readObjectHeader(): { num: number; gen: number } | null {
    this.skipWhitespaceAndComments();
    const num = this.readInt();
    if (num === null) return null;
    this.skipWhitespaceAndComments();
    const gen = this.readInt();
    if (gen === null) return null;
    this.skipWhitespaceAndComments();
    if (!this.matchKeyword(OBJ)) return null;
    return { num, gen };
  }

  /** A non-negative integer at the current position, or null (position unchanged). */
  readInt(): number | null {
    const start = this.bytes.offset();
    let value = 0;
    let digits = 0;
    while (!this.bytes.done()) {
      const b = this.bytes.peek();
      if (b < 0x30 || b > 0x39) break;
      value = value * 10 + (b - 0x30);
      digits++;
      this.bytes.next();
    }
    if (digits === 0 || digits > 12) {
      this.bytes.moveTo(start);
      return null;
    }
    return value;
  }

  matches(keyword: string): boolean {
    return this.matchKeyword(bytesOf(keyword));
  }

  protected override parseDictOrStream(): PDFDict | PDFRawStream {
    const startPos = this.bytes.position();
    const dict = this.parseDict();
    this.skipWhitespaceAndComments();
    if (!this.matchKeyword(STREAM)) return dict;
    // The keyword is followed by CRLF or LF (a lone CR is tolerated).
    if (this.bytes.peek() === 0x0d) this.bytes.next();
    if (this.bytes.peek() === 0x0a) this.bytes.next();
    const start = this.bytes.offset();
    const lengthObj = dict.get(PDFName.of('Length'));
    const length = lengthObj instanceof PDFNumber ? lengthObj.asNumber() : lengthObj instanceof PDFRef ? this.resolveLength(lengthObj) : undefined;
    let end: number | undefined;
    if (length !== undefined && Number.isInteger(length) && length >= 0 && start + length <= this.data.length) {
      let p = start + length;
      while (p < this.data.length && isWhite(this.data[p])) p++;
      if (ENDSTREAM.every((c, i) => this.data[p + i] === c)) {
        end = start + length;
        this.bytes.moveTo(p + ENDSTREAM.length);
      }
    }
    if (end === undefined) {
      // The first `endstream` after the data, less the end-of-line before it.
      const at = endstreamAfter(this.data, start);
      if (at < 0) throw new PDFStreamParsingError(startPos);
      end = at;
      if (end > start && this.data[end - 1] === 0x0a) end--;
      if (end > start && this.data[end - 1] === 0x0d) end--;
      this.bytes.moveTo(at + ENDSTREAM.length);
    }
    return PDFRawStream.of(dict, this.data.subarray(start, end));
  }
}

export type { PDFObject };
