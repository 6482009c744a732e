/**
 * ZIP archives for tests, written byte by byte so that hostile ones can be made too: names with `..`,
 * backslashes or absolute paths, symlink entries, duplicates, lying sizes, chosen compression ratios.
 */
import { createHash } from 'node:crypto';
import { crc32, deflateRawSync } from 'node:zlib';
import yauzl from 'yauzl';

export interface RawEntry {
  name: string;
  data?: Buffer | string;
  /** 8 (deflate, default for non-empty data) or 0 (stored); another number is written as is (the data still deflated). */
  method?: number;
  /** Sets the encryption flag (general purpose bit 0) in both headers; the data is written as given. */
  encrypted?: boolean;
  /** Compressed bytes to write instead of deflating `data` (with `declaredSize`/`crc` to lie about them). */
  compressed?: Buffer;
  declaredSize?: number;
  crc?: number;
  /** Unix mode in the external attributes, e.g. 0o120777 for a symlink (its data is the link target). */
  unixMode?: number;
  /** An Info-ZIP Unicode Path field (0x7075) in the central header with this name, which readers that know it prefer. */
  unicodeName?: string;
  /** The name's bytes as written, instead of `name` in UTF-8. */
  nameBytes?: Buffer;
  /** false: the UTF-8 flag (general purpose bit 11) is left unset, as CP437 writers and macOS Archive Utility do. */
  utf8Flag?: boolean;
}

/** A complete ZIP of the given entries, in order. */
export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    const method = e.method ?? (e.compressed || data.length > 0 ? 8 : 0);
    const body = e.compressed ?? (method !== 0 ? deflateRawSync(data) : data);
    const size = e.declaredSize ?? data.length;
    const crc = e.crc ?? crc32(data);
    const name = e.nameBytes ?? Buffer.from(e.name, 'utf8');
    const flags = (e.utf8Flag === false ? 0 : 0x800) | (e.encrypted ? 1 : 0);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.unixMode !== undefined ? (3 << 8) | 20 : 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    const extra = e.unicodeName === undefined ? Buffer.alloc(0) : unicodePathField(name, e.unicodeName);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE(e.unixMode !== undefined ? (e.unixMode << 16) >>> 0 : 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name, extra);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** Info-ZIP Unicode Path extra field: version 1, the CRC-32 of the header name it stands for, the UTF-8 name. */
function unicodePathField(headerName: Buffer, unicodeName: string): Buffer {
  const text = Buffer.from(unicodeName, 'utf8');
  const field = Buffer.alloc(4 + 5 + text.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + text.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(headerName) >>> 0, 5);
  text.copy(field, 9);
  return field;
}

/** Deterministic incompressible bytes. */
export function noise(length: number, seed = 'seed'): Buffer {
  const out = Buffer.alloc(length);
  let block = createHash('sha256').update(seed).digest();
  for (let i = 0; i < length; i += 32) {
    block = createHash('sha256').update(block).digest();
    block.copy(out, i, 0, Math.min(32, length - i));
  }
  return out;
}

/**
 * An entry of `size` bytes that deflates to about `size / ratio` bytes: incompressible noise followed by zeros,
 * the noise length searched so the real ratio lands within ±0.3 of the target.
 */
export function ratioEntry(name: string, size: number, ratio: number): RawEntry & { realRatio: number } {
  let lo = 1;
  let hi = size;
  for (let step = 0; step < 40; step++) {
    const mid = Math.floor((lo + hi) / 2);
    const data = Buffer.concat([noise(mid, name), Buffer.alloc(size - mid)]);
    const compressed = deflateRawSync(data, { level: 9 });
    const real = size / compressed.length;
    if (Math.abs(real - ratio) < 0.3) return { name, data, compressed, declaredSize: size, crc: crc32(data), realRatio: real };
    if (real > ratio) lo = mid + 1;
    else hi = mid - 1;
  }
  throw new Error(`could not reach ratio ${ratio} for ${size} bytes`);
}

/** Names and contents of a ZIP (for checking outputs). */
export async function unzip(zip: Buffer | Uint8Array): Promise<Map<string, Buffer>> {
  const file = await yauzl.fromBufferPromise(Buffer.from(zip), { lazyEntries: true });
  const out = new Map<string, Buffer>();
  for await (const entry of file.eachEntry()) {
    const stream = await file.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    out.set(entry.fileName, Buffer.concat(chunks));
  }
  file.close();
  return out;
}

/** The fields of one ZIP header, for archives laid out by hand (overlapping entries, lying descriptors, ZIP64). */
export interface HeaderFields {
  name: Buffer | string;
  /** General purpose bits; UTF-8 (0x800) unless told. */
  flags?: number;
  method?: number;
  crc?: number;
  compressed?: number;
  size?: number;
  extra?: Buffer;
  /** Central directory only: where the entry's local header is, and its file comment. */
  offset?: number;
  comment?: Buffer;
}

const bytesOf = (name: Buffer | string) => (typeof name === 'string' ? Buffer.from(name, 'utf8') : name);

/**
 * The fields a local header and its central directory record share, in the same order from `at` (4 in a local
 * header, 6 in a central record, after its "version made by"): version needed, flags, method, time and date, CRC,
 * sizes, name and extra field lengths.
 */
function writeEntryFields(b: Buffer, at: number, h: HeaderFields, name: Buffer, extra: Buffer): void {
  b.writeUInt16LE(20, at);
  b.writeUInt16LE(h.flags ?? 0x800, at + 2);
  b.writeUInt16LE(h.method ?? 0, at + 4);
  b.writeUInt16LE(0x21, at + 8);
  b.writeUInt32LE((h.crc ?? 0) >>> 0, at + 10);
  b.writeUInt32LE(h.compressed ?? 0, at + 14);
  b.writeUInt32LE(h.size ?? 0, at + 18);
  b.writeUInt16LE(name.length, at + 22);
  b.writeUInt16LE(extra.length, at + 24);
}

/** A local file header with its name and extra field (the data follows it). */
export function localHeader(h: HeaderFields): Buffer {
  const name = bytesOf(h.name);
  const extra = h.extra ?? Buffer.alloc(0);
  const b = Buffer.alloc(30);
  b.writeUInt32LE(0x04034b50, 0);
  writeEntryFields(b, 4, h, name, extra);
  return Buffer.concat([b, name, extra]);
}

/** A central directory record. */
export function centralHeader(h: HeaderFields): Buffer {
  const name = bytesOf(h.name);
  const extra = h.extra ?? Buffer.alloc(0);
  const comment = h.comment ?? Buffer.alloc(0);
  const b = Buffer.alloc(46);
  b.writeUInt32LE(0x02014b50, 0);
  b.writeUInt16LE(20, 4);
  writeEntryFields(b, 6, h, name, extra);
  b.writeUInt16LE(comment.length, 32);
  b.writeUInt32LE(h.offset ?? 0, 42);
  return Buffer.concat([b, name, extra, comment]);
}

/** The end of central directory record. */
export function endRecord(entries: number, directorySize: number, directoryOffset: number, comment: Buffer<ArrayBufferLike> = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(22);
  b.writeUInt32LE(0x06054b50, 0);
  b.writeUInt16LE(entries, 8);
  b.writeUInt16LE(entries, 10);
  b.writeUInt32LE(directorySize, 12);
  b.writeUInt32LE(directoryOffset, 16);
  b.writeUInt16LE(comment.length, 20);
  return Buffer.concat([b, comment]);
}

/** A data descriptor (what follows the data of an entry whose local header has flag bit 3), with its optional signature. */
export function dataDescriptor(crc: number, compressed: number, size: number, signature = true): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt32LE(0x08074b50, 0);
  b.writeUInt32LE(crc >>> 0, 4);
  b.writeUInt32LE(compressed, 8);
  b.writeUInt32LE(size, 12);
  return signature ? b : b.subarray(4);
}

/** Local parts (headers and data) laid out in order, then a central directory of `centrals` and the end record. */
export function zipOf(locals: Buffer[], centrals: Buffer[], comment?: Buffer<ArrayBufferLike>): Buffer {
  const body = Buffer.concat(locals);
  const cd = Buffer.concat(centrals);
  return Buffer.concat([body, cd, endRecord(centrals.length, cd.length, body.length, comment)]);
}

/**
 * David Fifield's "better zip bomb" with quoted overlap: each entry's deflate stream starts with a stored block that
 * quotes the next entry's local header and then runs on into that entry's data, so every entry inflates the one
 * shared kernel again. Each entry is well formed (its local header matches its central record, its sizes and
 * checksum are true); only their data overlaps.
 */
export function quotedOverlapBomb(entries: number, kernel: Buffer): Buffer {
  let plain = kernel;
  let compressed = deflateRawSync(kernel);
  const headers: HeaderFields[] = [];
  const locals: Buffer[] = [];
  for (let i = entries - 1; i >= 0; i--) {
    headers[i] = { name: `f${i}.css`, method: 8, crc: crc32(plain), compressed: compressed.length, size: plain.length };
    locals[i] = localHeader(headers[i]);
    if (i > 0) {
      // A non-final stored block of the header's length (LEN, then its one's complement).
      const quote = Buffer.alloc(5);
      quote.writeUInt16LE(locals[i].length, 1);
      quote.writeUInt16LE(~locals[i].length & 0xffff, 3);
      compressed = Buffer.concat([quote, locals[i], compressed]);
      plain = Buffer.concat([locals[i], plain]);
    }
  }
  let offset = 0;
  const centrals = headers.map((h, i) => {
    const central = centralHeader({ ...h, offset });
    offset += locals[i].length + 5;
    return central;
  });
  return zipOf([locals[0], compressed], centrals);
}
