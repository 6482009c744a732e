import { deflateSync } from 'node:zlib';
import { MissingPDFHeaderError, NumberParsingError, PDFArray, PDFDict, PDFHexString, PDFName, PDFRef, PDFString, StalledParserError } from 'pdf-lib';
import { refusal, thrownBy } from '../../../support/errors';
import { MIN_DECODED_STRUCTURE_BYTES, ReadBudget } from '../../../../functions/core/pdf/budget';
import { unpredict } from '../../../../functions/core/pdf/filters';
import { openInput } from '../../../../functions/core/pdf/operations';
import { PdfReader, asProblem, numberOf, textOf } from '../../../../functions/core/pdf/reader';
import { Deadline, PdfDeadlineExceeded, PdfProblem } from '../../../../functions/core/pdf/errors';
import {
  NOT_A_PDF,
  deeplyNestedPdf,
  encryptedPdf,
  simplePdf,
  truncated,
  xrefPointingNowhere,
  zeroPagePdf,
} from '../../../support/pdf-fixtures';

const problemOf = (fn: () => unknown) => thrownBy(fn, PdfProblem);


const input = (bytes: Uint8Array) => ({ bytes, filename: 'in.pdf', index: 3 });

/** A one-page PDF whose catalog, page tree and page are plain objects, followed by `tail(offsets)` (the hostile part). */
function hostilePdf(tail: (offsets: number[], at: number) => string | Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.5\n')];
  const offsets: number[] = [];
  const add = (text: string | Buffer) => parts.push(Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1'));
  const length = () => parts.reduce((n, p) => n + p.length, 0);
  for (const [n, body] of [[1, '<< /Type /Catalog /Pages 2 0 R >>'], [2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>'], [3, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>']] as const) {
    offsets[n] = length();
    add(`${n} 0 obj\n${body}\nendobj\n`);
  }
  add(tail(offsets, length()));
  return Buffer.concat(parts);
}

function streamObject(num: number, dict: string, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${num} 0 obj\n<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream\nendobj\n', 'latin1')]);
}

function classicXref(offsets: number[], extraTrailer: string, prev?: number): string {
  const rows = offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  return `xref\n0 ${offsets.length}\n0000000000 65535 f \n${rows}trailer\n<< /Size ${offsets.length} /Root 1 0 R${extraTrailer}${prev !== undefined ? ` /Prev ${prev}` : ''} >>\n`;
}

describe('PdfReader', () => {
  it('reads pages of a classic-xref file and of an object-stream/xref-stream file', async () => {
    for (const objectStreams of [false, true]) {
      const r = PdfReader.open(await simplePdf(3, { objectStreams }));
      expect(r.encrypted).toBe(false);
      expect(r.pages()).toHaveLength(3);
      const box = r.resolve(r.pages()[0].mediaBox);
      expect(box).toBeInstanceOf(PDFArray);
      expect((box as PDFArray).asArray().map((n) => numberOf(r.resolve(n)))).toEqual([0, 0, 595, 842]); // simplePdf's A4 page
    }
  });

  it('parses objects lazily: opening reads the structure, not every object', async () => {
    const r = PdfReader.open(await simplePdf(200));
    const cache = (r as unknown as { cache: Map<number, unknown> }).cache;
    expect(cache.size).toBeLessThan(5);
    r.pages();
    expect(cache.size).toBeLessThan(210); // page objects, not their contents or fonts
  });

  it('repairs object offsets that are off by scanning the file once', async () => {
    const text = Buffer.from(await simplePdf(2)).toString('latin1');
    // Shift every object by inserting bytes after the header, without touching the xref offsets...
    const shifted = text.replace('%PDF-1.7\n', '%PDF-1.7\n%padding-padding\n');
    // ...but keep startxref right, so only the object offsets are wrong.
    const delta = shifted.length - text.length;
    const fixed = shifted.replace(/startxref\s+(\d+)/, (_m, n) => `startxref\n${Number(n) + delta}`);
    const r = PdfReader.open(Buffer.from(fixed, 'latin1'));
    expect(r.pages()).toHaveLength(2);
  });

  it.each([
    ['a truncated file', async () => truncated(await simplePdf(3)), 'truncated'],
    ['an xref pointing nowhere', async () => xrefPointingNowhere(await simplePdf(3)), 'xref_not_found'],
    ['not a PDF', async () => NOT_A_PDF, 'not_a_pdf'],
    ['an empty file', async () => new Uint8Array(0), 'not_a_pdf'],
  ])('refuses %s as INVALID_PDF naming the input', async (_name, make, reason) => {
    const bytes = await make();
    expect(problemOf(() => PdfReader.open(bytes))).toMatchObject({ code: 'INVALID_PDF', reason });
    const err = refusal(() => openInput(input(bytes)));
    expect(err.code).toBe('INVALID_PDF');
    expect(err.details).toMatchObject({ filename: 'in.pdf', input_index: 3, reason });
  });

  it('refuses encrypted PDFs, including those that open without a password (owner password only)', async () => {
    for (const passwords of [{ userPassword: 'secret', ownerPassword: 'owner' }, { userPassword: '', ownerPassword: 'owner' }]) {
      const bytes = await encryptedPdf(passwords);
      expect(PdfReader.open(bytes).encrypted).toBe(true);
      const err = refusal(() => openInput(input(bytes)));
      expect(err.code).toBe('PDF_ENCRYPTED');
      expect(err.details).toMatchObject({ filename: 'in.pdf', input_index: 3 });
    }
  });

  it('refuses a document without pages', async () => {
    expect(refusal(() => openInput(input(Buffer.from([]))))).toMatchObject({ code: 'INVALID_PDF' });
    const err = refusal(() => openInput(input(Buffer.from(zeroPagePdfSync)))); // built below
    expect(err.code).toBe('PDF_NO_PAGES');
  });

  it.each([
    ['a kid that is not an object', '<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>', '4 0 obj\n<< /Type /Page /MediaBox [0 0 612 792\nendobj\n'],
    ['a kid that points at no object', '<< /Type /Pages /Kids [3 0 R 9 0 R 5 0 R] /Count 3 >>', ''],
  ])('refuses %s instead of renumbering the pages after it', (_name, pagesDict, damaged) => {
    const parts: string[] = ['%PDF-1.5\n'];
    const offsets: number[] = [];
    const objects: [number, string][] = [
      [1, '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n'],
      [2, `2 0 obj\n${pagesDict}\nendobj\n`],
      [3, '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n'],
      [5, '5 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n'],
    ];
    if (damaged) objects.splice(3, 0, [4, damaged]);
    for (const [n, text] of objects) {
      offsets[n] = parts.join('').length;
      parts.push(text);
    }
    for (let n = 1; n <= 5; n++) offsets[n] ??= offsets[1];
    const at = parts.join('').length;
    const bytes = Buffer.from(`${parts.join('')}${classicXref(offsets, '')}startxref\n${at}\n%%EOF\n`, 'latin1');
    expect(problemOf(() => PdfReader.open(bytes).pages())).toMatchObject({ code: 'INVALID_PDF', reason: 'damaged_page' });
  });

  it("reads pdf-lib's parse errors as a damaged PDF: its compiled error classes lose their type (instanceof and the class name fail)", () => {
    for (const err of [new MissingPDFHeaderError({ line: 0, column: 0, offset: 0 }), new StalledParserError({ line: 1, column: 2, offset: 3 }), new NumberParsingError({ line: 1, column: 2, offset: 3 }, 'x')]) {
      expect(asProblem(err)).toMatchObject({ code: 'INVALID_PDF', reason: 'unreadable' });
    }
    // Anything else is not the document's fault and stays what it is.
    expect(() => asProblem(new Error('socket hang up'))).toThrow('socket hang up');
  });

  it.each([
    ['a filter pdf-lib does not decode', '/Filter [/FlateDecode /JBIG2Decode]', deflateSync(Buffer.from('x'))],
    ['an unknown filter', '/Filter [/ASCIIHexDecode /NoSuchDecode]', Buffer.from('00>')],
  ])('answers a structure stream with %s as a damaged PDF', (_what, filter, data) => {
    const pdf = hostilePdf((_offsets, at) => Buffer.concat([streamObject(4, `/Type /XRef /Size 5 /W [1 4 2] /Root 1 0 R ${filter}`, data), Buffer.from(`startxref\n${at}\n%%EOF\n`)]));
    expect(problemOf(() => PdfReader.open(pdf).pages())).toMatchObject({ code: 'INVALID_PDF' });
  });

  it('stops a decompression bomb in a filter chain while decoding it, within the document budget', () => {
    // Two Flate layers: pdf-lib's decoders would inflate it all before any size check.
    const inner = deflateSync(Buffer.alloc(MIN_DECODED_STRUCTURE_BYTES + 1024 * 1024), { level: 1 });
    const bomb = hostilePdf((_offsets, at) =>
      Buffer.concat([streamObject(4, '/Type /XRef /Size 5 /W [1 4 2] /Root 1 0 R /Filter [/FlateDecode /FlateDecode]', deflateSync(inner)), Buffer.from(`startxref\n${at}\n%%EOF\n`)]),
    );
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(problemOf(() => PdfReader.open(bomb))).toMatchObject({ code: 'PDF_TOO_COMPLEX', reason: 'structure_too_large' });
  });

  it('charges every decode to one budget: many sections naming one stream decode it once, many streams stop at the budget', () => {
    // 20 classic sections all pointing at the same 8 MB xref stream (a hybrid file's /XRefStm): read once.
    const eightMb = deflateSync(Buffer.alloc(8 * 1024 * 1024));
    const hybrid = hostilePdf((offsets, at) => {
      let text = streamObject(4, '/Type /XRef /Size 5 /W [1 4 2] /Index [4 1] /Filter /FlateDecode', eightMb).toString('latin1');
      let prev: number | undefined;
      for (let i = 0; i < 20; i++) {
        const here = at + text.length;
        text += classicXref(i === 19 ? offsets : [], ` /XRefStm ${at}`, prev);
        prev = here;
      }
      return Buffer.from(`${text}startxref\n${prev}\n%%EOF\n`, 'latin1');
    });
    const budget = ReadBudget.forInputs(hybrid.length);
    const reader = PdfReader.open(hybrid, budget);
    expect(reader.pages()).toHaveLength(1);
    expect(budget.maxDecodedBytes - budget.decodable()).toBe(8 * 1024 * 1024);

    // Eight object streams of 20 MB each: every object read from one costs its stream's decode, and together they pass the budget.
    const spread = hostilePdf((offsets, at) => {
      const streams: Buffer[] = [];
      let pos = at;
      const streamOffsets: number[] = [];
      for (let i = 0; i < 8; i++) {
        const header = `${20 + i} 0 `;
        const body = deflateSync(Buffer.concat([Buffer.from(`${header}<< /Pad true >>`), Buffer.alloc(20 * 1024 * 1024, 0x20)]));
        streamOffsets.push(pos);
        const obj = streamObject(10 + i, `/Type /ObjStm /N 1 /First ${header.length} /Filter /FlateDecode`, body);
        streams.push(obj);
        pos += obj.length;
      }
      const row = (type: number, a: number, b: number) => Buffer.from([type, (a >>> 24) & 255, (a >>> 16) & 255, (a >>> 8) & 255, a & 255, (b >>> 8) & 255, b & 255]);
      const rows = [row(0, 0, 65535), ...[1, 2, 3].map((n) => row(1, offsets[n], 0))];
      for (let n = 4; n < 28; n++) {
        if (n >= 10 && n < 18) rows.push(row(1, streamOffsets[n - 10], 0));
        else if (n >= 20) rows.push(row(2, 10 + (n - 20), 0));
        else if (n === 4) rows.push(row(1, pos, 0));
        else rows.push(row(0, 0, 0));
      }
      const xref = streamObject(4, '/Type /XRef /Size 28 /W [1 4 2] /Root 1 0 R', Buffer.concat(rows));
      return Buffer.concat([...streams, xref, Buffer.from(`startxref\n${pos}\n%%EOF\n`)]);
    });
    const many = PdfReader.open(spread);
    const read = (n: number) => many.context.lookup(PDFRef.of(n));
    for (let n = 20; n < 26; n++) expect(read(n)).toBeInstanceOf(PDFDict); // 6 × 20 MB = 120 MB, within 128 MB
    expect(read(20)).toBeInstanceOf(PDFDict); // a stream already decoded is not charged again
    expect(problemOf(() => read(26))).toMatchObject({ code: 'PDF_TOO_COMPLEX', reason: 'structure_too_large' });
  });

  it('reports hostile nesting as PDF_TOO_COMPLEX rather than crashing', async () => {
    const bytes = await deeplyNestedPdf();
    const err = refusal(() => {
      const source = openInput(input(bytes));
      // Touch the page dictionary's every entry, as the copier does.
      for (const [, v] of source.pages[0].dict.entries()) source.reader.resolve(v);
    });
    expect(err.code).toBe('PDF_TOO_COMPLEX');
    expect(err.details).toMatchObject({ filename: 'in.pdf', input_index: 3 });
  });

  it('undoes PNG predictors (xref streams) row by row', () => {
    // Two rows of 3 bytes with filter Up (2): second row adds the first.
    const encoded = Uint8Array.from([2, 1, 2, 3, 2, 1, 1, 1]);
    expect(Array.from(unpredict(encoded, { predictor: 12, colors: 1, bitsPerComponent: 8, columns: 3 }))).toEqual([1, 2, 3, 2, 3, 4]);
    // Sub (1) and Paeth (4).
    expect(Array.from(unpredict(Uint8Array.from([1, 5, 1, 1]), { predictor: 12, colors: 1, bitsPerComponent: 8, columns: 3 }))).toEqual([5, 6, 7]);
    expect(Array.from(unpredict(Uint8Array.from([0, 9, 9, 4, 1, 0]), { predictor: 12, colors: 1, bitsPerComponent: 8, columns: 2 }))).toEqual([9, 9, 10, 10]);
  });

  it('reads a PNG predictor row longer than the whole stream as no rows, without allocating the row (absurd /Columns)', () => {
    // 2^40 columns: allocating the previous row threw a RangeError, reported as "nested too deeply" (1e9 columns took a 1 GB buffer).
    expect(unpredict(Uint8Array.from([2, 1, 2, 3, 2, 1, 1, 1]), { predictor: 12, colors: 1, bitsPerComponent: 8, columns: 2 ** 40 })).toHaveLength(0);
    const pdf = hostilePdf((_offsets, at) =>
      Buffer.concat([
        streamObject(4, '/Type /XRef /Size 5 /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 4000000000 /Colors 4 /BitsPerComponent 16 >>', deflateSync(Buffer.alloc(64))),
        Buffer.from(`startxref\n${at}\n%%EOF\n`),
      ]),
    );
    // No rows, so no objects: the catalog is missing.
    expect(problemOf(() => PdfReader.open(pdf))).toMatchObject({ code: 'INVALID_PDF', reason: 'no_catalog' });
  });

  it('exposes lazily resolved objects through pdf-lib lookups', async () => {
    const r = PdfReader.open(await simplePdf(1));
    const pages = r.catalog.lookup(PDFName.of('Pages'), PDFDict);
    expect(pages.get(PDFName.of('Type'))).toBe(PDFName.of('Pages'));
  });
});

let zeroPagePdfSync: Uint8Array;
beforeAll(async () => {
  zeroPagePdfSync = await zeroPagePdf();
});

describe('PdfReader on a file listing far more objects than it could hold', () => {
  /** A 5 KB file whose older cross-reference stream lists `count` compressed objects (one byte per row, deflated). */
  function listingPdf(count: number): Buffer {
    const parts: Buffer[] = [];
    let pos = 0;
    const off: Record<number, number> = {};
    const push = (s: string | Buffer) => {
      const b = Buffer.isBuffer(s) ? s : Buffer.from(s, 'latin1');
      parts.push(b);
      pos += b.length;
    };
    push('%PDF-1.7\n');
    off[1] = pos;
    push('1 0 obj\n<</Type/Catalog/Pages 2 0 R>>\nendobj\n');
    off[2] = pos;
    push('2 0 obj\n<</Type/Pages/Kids[3 0 R]/Count 1>>\nendobj\n');
    off[3] = pos;
    push('3 0 obj\n<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>\nendobj\n');
    const rows = deflateSync(Buffer.alloc(count, 2), { level: 9 });
    off[5] = pos;
    push(`5 0 obj\n<</Type/XRef/Size ${count + 10}/W[1 0 0]/Index[10 ${count}]/Filter/FlateDecode/Length ${rows.length}>>stream\n`);
    push(rows);
    push('\nendstream\nendobj\n');
    const table = Buffer.alloc(4 * 7);
    [[0, 0, 65535], [1, off[1], 0], [1, off[2], 0], [1, off[3], 0]].forEach(([type, offset, gen], i) => {
      table.writeUInt8(type, i * 7);
      table.writeUInt32BE(offset, i * 7 + 1);
      table.writeUInt16BE(gen, i * 7 + 5);
    });
    off[6] = pos;
    push(`6 0 obj\n<</Type/XRef/Size 4/W[1 4 2]/Root 1 0 R/Prev ${off[5]}/Length ${table.length}>>stream\n`);
    push(table);
    push(`\nendstream\nendobj\nstartxref\n${off[6]}\n%%EOF\n`);
    return Buffer.concat(parts);
  }

  it('refuses 5 million objects listed by a few KB as PDF_TOO_COMPLEX, without building the table', () => {
    const bytes = listingPdf(4_999_990);
    expect(bytes.length).toBeLessThan(10_000);
    expect(() => PdfReader.open(bytes)).toThrow(expect.objectContaining({ code: 'PDF_TOO_COMPLEX', reason: 'too_many_objects' }));
  });

  it('still opens a small file that lists a plausible number of objects', () => {
    expect(PdfReader.open(listingPdf(50_000)).pages()).toHaveLength(1);
  });

  it('lets the deadline through where a damaged object is read as missing (an indirect /Length read in time)', () => {
    const data = Buffer.from('BT ET');
    const bytes = hostilePdf((offsets, at) => {
      const four = Buffer.from(`4 0 obj\n<< /Length 5 0 R >>\nstream\n${data}\nendstream\nendobj\n`, 'latin1');
      const five = `5 0 obj\n${data.length}\nendobj\n`;
      offsets[4] = at;
      offsets[5] = at + four.length;
      const xrefAt = at + four.length + five.length;
      return Buffer.concat([four, Buffer.from(`${five}${classicXref(offsets, '')}startxref\n${xrefAt}\n%%EOF\n`, 'latin1')]);
    });
    // The clock passes the deadline on the second look after `armed`: while object 4's parser reads its /Length.
    let armed = false;
    let looks = 0;
    const deadline = new Deadline(1, () => (armed && ++looks >= 2 ? 2 : 0));
    const everyLookup = new (class extends ReadBudget {
      override onLookup() {
        this.deadline.check();
      }
    })(MIN_DECODED_STRUCTURE_BYTES, deadline);
    const reader = PdfReader.open(bytes, everyLookup);
    armed = true;
    expect(() => reader.lookupRef(PDFRef.of(4))).toThrow(PdfDeadlineExceeded);
  });
});

describe('textOf', () => {
  it('decodes strings past the ~125,000 characters pdf-lib can decode in one call (they read as no text)', () => {
    // Compared as [length, equal] so that a failure does not print 200,000 characters.
    const same = (decoded: string | undefined, expected: string) => [decoded?.length, decoded === expected];
    const doc = 'a\x18'.repeat(100_000); // PDFDocEncoding: 0x18 is a breve
    expect(same(textOf(PDFString.of(doc)), 'a\u02d8'.repeat(100_000))).toEqual([200_000, true]);
    // UTF-16 with a byte order mark (either), a surrogate pair straddling every piece boundary the decoder might choose.
    const text = 'x😀'.repeat(70_000);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
    expect(same(textOf(PDFHexString.of(be.toString('hex'))), text)).toEqual([210_000, true]);
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    expect(same(textOf(PDFHexString.of(le.toString('hex'))), text)).toEqual([210_000, true]);
    expect(textOf(PDFString.of('short (\\x)'))).toBe(PDFString.of('short (\\x)').decodeText());
  });
});
