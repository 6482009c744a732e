/**
 * pdf-lib's object parser, positioned at any offset, with three changes for the lazy reader: a stream's
 * `/Length` may be an indirect object (resolved through the reader), stream contents are views into
 * the file rather than copies, and every reference is read as generation 0.
 */
import ByteStream from 'pdf-lib/cjs/core/parser/ByteStream';
import { type PDFContext, PDFDict, PDFName, PDFNumber, PDFObjectParser, PDFRawStream, PDFRef, type PDFObject } from 'pdf-lib';

const bytesOf = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
const STREAM = bytesOf('stream');
const ENDSTREAM = bytesOf('endstream');
const OBJ = bytesOf('obj');

const isWhite = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0x0c || b === 0x00;

export class ObjectParser extends PDFObjectParser {
  constructor(
    private readonly data: Uint8Array,
    context: PDFContext,
    private readonly resolveLength: (ref: PDFRef) => number | undefined = () => undefined,
  ) {
    super(ByteStream.of(data), context, false);
  }

  /**
   * The reader finds objects by number alone, so `5 0 R` and `5 1 R` name one object. References are read as one
   * name per object, so that everything keyed by reference (copies, blocked structures, page links, form widgets)
   * agrees: otherwise one object written under many generations would be copied once per name (a few KB of input
   * asking for gigabytes of output), or a blocked structure reached under another generation.
   */
  protected override parseNumberOrRef(): PDFNumber | PDFRef {
    const parsed = super.parseNumberOrRef();
    return parsed instanceof PDFRef && parsed.generationNumber !== 0 ? PDFRef.of(parsed.objectNumber, 0) : parsed;
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
      this.bytes.moveTo(start);
      end = this.findEndOfStreamFallback(startPos);
      // The fallback stops before the end-of-line that precedes `endstream`.
    }
    return PDFRawStream.of(dict, this.data.subarray(start, end));
  }
}

export type { PDFObject };
