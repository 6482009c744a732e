/**
 * PDFs for tests, built in code: plain documents, forms, signatures, bookmarks, links, and hostile files
 * (truncated, xref pointing nowhere, encrypted with RC4 — with a user password or only an owner password —,
 * zero pages, not a PDF, nested too deeply, an object-stream bomb).
 */
import { createHash, randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFString,
  StandardFonts,
  degrees,
} from 'pdf-lib';

export interface SimpleOptions {
  label?: string;
  size?: [number, number];
  rotate?: number;
  /** Save with object streams and an xref stream (pdf-lib's default) instead of a classic xref table. */
  objectStreams?: boolean;
}

/** A document whose page i says "<label> page i" (1-based), all pages sharing one font. */
export async function simplePdf(pages: number, opts: SimpleOptions = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    const page = doc.addPage(opts.size ?? [595, 842]);
    page.drawText(`${opts.label ?? 'Doc'} page ${i}`, { x: 50, y: page.getHeight() - 80, size: 18, font });
    if (opts.rotate) page.setRotation(degrees(opts.rotate));
  }
  return doc.save({ useObjectStreams: opts.objectStreams ?? false });
}

export async function pdfWithForm(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page1 = doc.addPage([595, 842]);
  const page2 = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page1.drawText('Application form', { x: 50, y: 780, size: 18, font });
  page2.drawText('Page without fields', { x: 50, y: 780, size: 18, font });
  const form = doc.getForm();
  const name = form.createTextField('applicant.name');
  name.setText('Ada Lovelace');
  name.setMaxLength(40);
  name.enableRequired();
  name.addToPage(page1, { x: 50, y: 700, width: 200, height: 24 });
  const agree = form.createCheckBox('agree');
  agree.check();
  agree.addToPage(page1, { x: 50, y: 650, width: 16, height: 16 });
  const country = form.createDropdown('country');
  country.addOptions(['DE', 'FR', 'IT']);
  country.select('FR');
  country.enableReadOnly();
  country.addToPage(page1, { x: 50, y: 600, width: 120, height: 24 });
  const size = form.createRadioGroup('size');
  size.addOptionToPage('S', page1, { x: 50, y: 550, width: 16, height: 16 });
  size.addOptionToPage('L', page1, { x: 80, y: 550, width: 16, height: 16 });
  size.select('L');
  form.updateFieldAppearances(font);
  return doc.save({ useObjectStreams: false });
}

/** One page with a (fake but well-formed) digital signature value in a signature field. */
export async function pdfWithSignature(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText('Signed contract', { x: 50, y: 780, size: 18, font });
  const ctx = doc.context;
  const sig = ctx.register(
    ctx.obj({
      Type: 'Sig',
      Filter: 'Adobe.PPKLite',
      SubFilter: 'adbe.pkcs7.detached',
      ByteRange: [0, 100, 200, 300],
      Contents: PDFHexString.of('0'.repeat(64)),
      M: PDFString.of("D:20240101000000Z"),
    }),
  );
  const widget = ctx.register(
    ctx.obj({ Type: 'Annot', Subtype: 'Widget', FT: 'Sig', T: PDFString.of('Signature1'), V: sig, Rect: [50, 50, 250, 100], F: 4, P: page.ref }),
  );
  page.node.set(PDFName.of('Annots'), ctx.obj([widget]));
  const acro = ctx.obj({ Fields: [widget], SigFlags: 3 });
  doc.catalog.set(PDFName.of('AcroForm'), ctx.register(acro));
  return doc.save({ useObjectStreams: false });
}

/** Three pages with bookmarks, an internal link on page 1 to page 3, and a web link on page 2. */
export async function pdfWithBookmarksAndLinks(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = [1, 2, 3].map((i) => {
    const p = doc.addPage([595, 842]);
    p.drawText(`Chapter page ${i}`, { x: 50, y: 780, size: 18, font });
    return p;
  });
  const ctx = doc.context;
  const internal = ctx.register(ctx.obj({ Type: 'Annot', Subtype: 'Link', Rect: [50, 700, 200, 720], Border: [0, 0, 0], Dest: [pages[2].ref, 'Fit'] }));
  pages[0].node.set(PDFName.of('Annots'), ctx.obj([internal]));
  const web = ctx.register(
    ctx.obj({ Type: 'Annot', Subtype: 'Link', Rect: [50, 700, 200, 720], Border: [0, 0, 0], A: { S: 'URI', URI: PDFString.of('https://example.com/') } }),
  );
  const note = ctx.register(ctx.obj({ Type: 'Annot', Subtype: 'Text', Rect: [300, 700, 320, 720], Contents: PDFString.of('A sticky note') }));
  pages[1].node.set(PDFName.of('Annots'), ctx.obj([web, note]));
  const outlines = ctx.nextRef();
  const item = ctx.register(ctx.obj({ Title: PDFString.of('Chapter 1'), Parent: outlines, Dest: [pages[0].ref, 'Fit'] }));
  ctx.assign(outlines, ctx.obj({ Type: 'Outlines', First: item, Last: item, Count: 1 }));
  doc.catalog.set(PDFName.of('Outlines'), outlines);
  return doc.save({ useObjectStreams: false });
}

export async function zeroPagePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  return doc.save({ useObjectStreams: false, addDefaultPage: false });
}

export function truncated(bytes: Uint8Array): Uint8Array {
  return bytes.slice(0, Math.floor(bytes.length * 0.6));
}

/** The trailer's startxref points at an offset where no cross-reference section is. */
export function xrefPointingNowhere(bytes: Uint8Array): Uint8Array {
  const text = Buffer.from(bytes).toString('latin1');
  const at = text.lastIndexOf('startxref');
  const m = /startxref\s+(\d+)/.exec(text.slice(at))!;
  const bogus = String(Math.floor(Number(m[1]) / 2)).padStart(m[1].length, '0');
  return Buffer.from(text.slice(0, at) + text.slice(at).replace(m[1], bogus), 'latin1');
}

export const NOT_A_PDF = Buffer.from('<html><body>Definitely not a PDF</body></html>');

/** A one-page PDF whose content stream dictionary holds arrays nested `depth` deep. */
export async function deeplyNestedPdf(depth = 100_000): Promise<Uint8Array> {
  const base = Buffer.from(await simplePdf(1)).toString('latin1');
  const nested = '['.repeat(depth) + ']'.repeat(depth);
  // Put the monster into the page dictionary itself: any reader that copies the page must parse it.
  const out = base.replace('/Type /Page\n', `/Type /Page\n/Junk ${nested}\n`);
  if (out === base) throw new Error('fixture: page dictionary not found');
  // Offsets changed: rebuild by loading leniently is impossible here, so fix the xref by recomputing offsets.
  return fixXref(Buffer.from(out, 'latin1'));
}

/** Rewrites a classic xref table so every in-use entry points at its object again (after edits). */
export function fixXref(bytes: Uint8Array): Uint8Array {
  const text = Buffer.from(bytes).toString('latin1');
  const xrefAt = text.lastIndexOf('\nxref\n') + 1;
  const offsets = new Map<number, number>();
  const re = /(\d+) 0 obj/g;
  for (let m = re.exec(text); m && m.index < xrefAt; m = re.exec(text)) offsets.set(Number(m[1]), m.index);
  const size = Math.max(...offsets.keys()) + 1;
  const lines = ['xref', `0 ${size}`, '0000000000 65535 f '];
  for (let n = 1; n < size; n++) lines.push(offsets.has(n) ? `${String(offsets.get(n)).padStart(10, '0')} 00000 n ` : '0000000000 00000 f ');
  const trailerAt = text.indexOf('trailer', xrefAt);
  const tail = text.slice(trailerAt).replace(/startxref\s+\d+/, `startxref\n${xrefAt}`);
  return Buffer.from(`${text.slice(0, xrefAt)}${lines.join('\n')}\n${tail}`, 'latin1');
}

/**
 * A PDF of numbered objects with a classic cross-reference table whose offsets are right: `objects[n]` is the body of
 * object n, and object 1 is the catalog. `unterminated`: each is written as `n 0 obj` and its text alone, without
 * `endobj` (a hostile file's fragments). Built from parts, so tens of thousands of objects take milliseconds.
 */
export function pdfOfObjects(objects: Record<number, string>, opts: { unterminated?: boolean } = {}): Buffer {
  const parts = [Buffer.from('%PDF-1.7\n', 'latin1')];
  let at = parts[0].length;
  const offsets = new Map<number, number>();
  for (const [n, body] of Object.entries(objects)) {
    offsets.set(Number(n), at);
    const part = Buffer.from(opts.unterminated ? `${n} 0 obj${body}` : `${n} 0 obj\n${body}\nendobj\n`, 'latin1');
    parts.push(part);
    at += part.length;
  }
  const size = Math.max(...offsets.keys()) + 1;
  const rows = ['xref', `0 ${size}`, '0000000000 65535 f '];
  for (let n = 1; n < size; n++) rows.push(offsets.has(n) ? `${String(offsets.get(n)).padStart(10, '0')} 00000 n ` : '0000000000 65535 f ');
  parts.push(Buffer.from(`${rows.join('\n')}\ntrailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/** A one-page PDF whose page dictionary also holds `pageExtra`, with `objects` after it (numbered from 4). */
export function pdfWith(pageExtra: string, objects: string[] = []): Uint8Array {
  return pdfOfObjects({
    1: '<< /Type /Catalog /Pages 2 0 R >>',
    2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    3: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] ${pageExtra} >>`,
    ...Object.fromEntries(objects.map((o, i) => [i + 4, o])),
  });
}

// ---- RC4 encryption (standard security handler, revision 2, 40-bit) -------------------------------------

const PAD = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

/** RC4 in a few lines (OpenSSL 3 only offers it through the legacy provider). */
function rc4(key: Uint8Array, data: Uint8Array): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 0xff];
  }
  return out;
}

function padPassword(pw: string): Buffer {
  return Buffer.concat([Buffer.from(pw, 'latin1'), PAD]).subarray(0, 32);
}

/**
 * Encrypts a document as Acrobat 3-era writers do. With `userPassword` empty it opens without a password
 * (only an owner password restricts it) — still encrypted, so still refused by merge/split. `source`: the document to
 * encrypt (default two plain pages).
 */
export async function encryptedPdf(opts: { userPassword: string; ownerPassword: string; source?: Uint8Array }): Promise<Uint8Array> {
  const doc = await PDFDocument.load(opts.source ?? (await simplePdf(2, { label: 'Secret' })), { updateMetadata: false });
  const ctx = doc.context;
  const id = createHash('md5').update('fixture-id').digest();
  const permissions = -44; // print allowed, modify/copy not
  const ownerKey = createHash('md5').update(padPassword(opts.ownerPassword || opts.userPassword)).digest().subarray(0, 5);
  const O = rc4(ownerKey, padPassword(opts.userPassword));
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const fileKey = createHash('md5').update(Buffer.concat([padPassword(opts.userPassword), O, p, id])).digest().subarray(0, 5);
  const U = rc4(fileKey, PAD);
  const objectKey = (ref: PDFRef) => {
    const salt = Buffer.alloc(5);
    salt.writeUIntLE(ref.objectNumber, 0, 3);
    salt.writeUIntLE(ref.generationNumber, 3, 2);
    return createHash('md5').update(Buffer.concat([fileKey, salt])).digest().subarray(0, 10);
  };
  const encryptStrings = (obj: unknown, key: Buffer): unknown => {
    if (obj instanceof PDFString || obj instanceof PDFHexString) return PDFHexString.of(rc4(key, obj.asBytes()).toString('hex'));
    if (obj instanceof PDFDict) {
      for (const [k, v] of obj.entries()) obj.set(k, encryptStrings(v, key) as never);
      return obj;
    }
    if (obj instanceof PDFArray) {
      for (let i = 0; i < obj.size(); i++) obj.set(i, encryptStrings(obj.get(i), key) as never);
      return obj;
    }
    return obj;
  };
  for (const [ref, obj] of ctx.enumerateIndirectObjects()) {
    const key = objectKey(ref);
    if (obj instanceof PDFDict) encryptStrings(obj, key);
    else if ('getContents' in (obj as object) && 'dict' in (obj as object)) {
      const stream = obj as unknown as { dict: PDFDict; getContents(): Uint8Array };
      const contents = stream.getContents();
      encryptStrings(stream.dict, key);
      const dict = stream.dict;
      dict.set(PDFName.of('Length'), PDFNumber.of(contents.length));
      ctx.assign(ref, PDFRawStream.of(dict, rc4(key, contents)));
    }
  }
  const encrypt = ctx.register(
    ctx.obj({ Filter: 'Standard', V: 1, R: 2, O: PDFHexString.of(O.toString('hex')), U: PDFHexString.of(U.toString('hex')), P: permissions }),
  );
  ctx.trailerInfo.Encrypt = encrypt;
  ctx.trailerInfo.ID = ctx.obj([PDFHexString.of(id.toString('hex')), PDFHexString.of(id.toString('hex'))]);
  return doc.save({ useObjectStreams: false, updateFieldAppearances: false });
}

/** base64 of bytes (JSON variants). */
/**
 * One page carrying 50 notes of 4 KB of random text (about 400 KB): every copy of the page in an output carries its
 * own notes, so selecting it k times makes an output of about k × 400 KB (for size limits without huge inputs).
 */
export async function heavyPagePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const notes = Array.from({ length: 50 }, (_, i) =>
    doc.context.register(doc.context.obj({ Type: 'Annot', Subtype: 'Text', Rect: [10 * i, 700, 10 * i + 10, 710], Contents: PDFHexString.of(randomBytes(4096).toString('hex')) })),
  );
  page.node.set(PDFName.of('Annots'), doc.context.obj(notes));
  return doc.save();
}

export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/**
 * A valid one-page PDF of about 1 KB per decoded MB whose page tree lives in an object stream that inflates to
 * `decodedMb` MB (padding before its objects): reading its pages costs that much decoded structure.
 */
export function objectStreamBombPdf(decodedMb: number): Buffer {
  const parts: Buffer[] = [];
  let length = 0;
  const push = (chunk: string | Buffer) => {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    parts.push(b);
    length += b.length;
  };
  push('%PDF-1.7\n');
  const catalogAt = length;
  push('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  const header = '2 0 3 50 ';
  const pad = decodedMb * 1024 * 1024;
  const objects = `${'<< /Type /Pages /Kids [3 0 R] /Count 1 >>'.padEnd(50, ' ')}<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> `;
  const packed = deflateSync(Buffer.concat([Buffer.from(header, 'latin1'), Buffer.alloc(pad, 0x20), Buffer.from(objects, 'latin1')]), { level: 9 });
  const streamAt = length;
  push(`4 0 obj\n<< /Type /ObjStm /N 2 /First ${header.length + pad} /Filter /FlateDecode /Length ${packed.length} >>\nstream\n`);
  push(packed);
  push('\nendstream\nendobj\n');
  const xrefAt = length;
  const row = (type: number, a: number, b: number) => {
    const r = Buffer.alloc(7);
    r[0] = type;
    r.writeUInt32BE(a, 1);
    r.writeUInt16BE(b, 5);
    return r;
  };
  const rows = deflateSync(Buffer.concat([row(0, 0, 65535), row(1, catalogAt, 0), row(2, 4, 0), row(2, 4, 1), row(1, streamAt, 0), row(1, xrefAt, 0)]));
  push(`5 0 obj\n<< /Type /XRef /Size 6 /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length ${rows.length} >>\nstream\n`);
  push(rows);
  push(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`);
  return Buffer.concat(parts);
}
