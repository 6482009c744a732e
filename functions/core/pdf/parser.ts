/**
 * pdf-lib's object parser, positioned at any offset, with two changes for the lazy reader: a stream's
 * `/Length` may be an indirect object (resolved through the reader), and stream contents are views into
 * the file rather than copies.
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
