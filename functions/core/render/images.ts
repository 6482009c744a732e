import { crc32, createInflate } from 'node:zlib';
import { z } from 'zod';
import { ServiceError } from '../errors';
import { optional, parseRequest } from '../validation';
import { isStandardHuffmanTable, standardHuffmanSegment } from './jpeg-huffman';
import { type PdfOptions, normalisePdfOptions, pdfOptionsSchema } from './options';

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_IMAGE_SIDE = 10_000;
export const MAX_IMAGES = 25;
/** What fits a 6 MB API Gateway request once base64-encoded. */
export const MAX_IMAGE_REQUEST_BYTES = Math.floor(4.5 * 1024 * 1024);

export type ImageType = 'png' | 'jpeg';
export type ImageCode = 'INVALID_IMAGE_FORMAT' | 'INVALID_IMAGE_DATA' | 'IMAGE_TOO_LARGE';

/**
 * A usable image comes with the bytes to print: the upload itself, or a JPEG that relies on the standard Huffman
 * tables without defining them with those tables written in.
 */
export type ImageCheck = { ok: true; type: ImageType; width: number; height: number; bytes: Buffer } | { ok: false; code: ImageCode; message: string };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const bad = (message: string): ImageCheck => ({ ok: false, code: 'INVALID_IMAGE_DATA', message });
const tooLarge = (message: string): ImageCheck => ({ ok: false, code: 'IMAGE_TOO_LARGE', message });

/** The scanline layout of a PNG: per pass (one when not interlaced), the bytes of a row (its filter byte first) and the row count. */
function pngRows(width: number, height: number, bitsPerPixel: number, interlaced: boolean): { rowBytes: number; rows: number }[] {
  const pass = (w: number, h: number) => ({ rowBytes: 1 + Math.ceil((w * bitsPerPixel) / 8), rows: w === 0 || h === 0 ? 0 : h });
  if (!interlaced) return [pass(width, height)];
  const passes = [
    [0, 0, 8, 8],
    [4, 0, 8, 8],
    [0, 4, 4, 8],
    [2, 0, 4, 4],
    [0, 2, 2, 4],
    [1, 0, 2, 2],
    [0, 1, 1, 2],
  ];
  return passes.map(([x0, y0, dx, dy]) => pass(Math.ceil((width - x0) / dx), Math.ceil((height - y0) / dy))).filter((p) => p.rows > 0);
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Bit depths by colour type: grey, RGB, palette, grey + alpha, RGBA. */
const PNG_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

const CRITICAL_CHUNKS = new Set(['IHDR', 'PLTE', 'IDAT', 'IEND']);

async function checkPng(buf: Buffer): Promise<ImageCheck> {
  let offset = 8;
  let width = 0;
  let height = 0;
  let rows: { rowBytes: number; rows: number }[] = [];
  let palette = false;
  let needsPalette = false;
  let sawEnd = false;
  let idatEnded = false;
  // APNG: whether an acTL before the image data announces frames, and whether the first frame (fcTL) was read.
  let animated = false;
  let sawFrame = false;
  const idat: Buffer[] = [];
  while (offset + 12 <= buf.length) {
    const length = buf.readUInt32BE(offset);
    const type = buf.toString('latin1', offset + 4, offset + 8);
    if (offset + 12 + length > buf.length) return bad('The PNG is truncated.');
    const crc = buf.readUInt32BE(offset + 8 + length);
    if (crc32(buf.subarray(offset + 4, offset + 8 + length)) !== crc) return bad(`The PNG's ${type} chunk is damaged (checksum mismatch).`);
    const data = buf.subarray(offset + 8, offset + 8 + length);
    if (offset === 8 && type !== 'IHDR') return bad('The PNG does not start with its header chunk.');
    // Chromium's decoder stops at what these break and prints a broken-image icon or nothing (a charged page):
    // an unknown critical chunk (upper-case first letter), a second header, image data split by other chunks.
    if (!CRITICAL_CHUNKS.has(type) && (buf[offset + 4] & 0x20) === 0) return bad(`The PNG has an unknown critical chunk (${JSON.stringify(type)}).`);
    if (type === 'IHDR' && offset !== 8) return bad('The PNG has more than one header chunk.');
    if (type === 'IDAT' && idatEnded) return bad('The PNG image data is split by other chunks.');
    if (type !== 'IDAT' && idat.length > 0) idatEnded = true;
    if (type === 'IHDR') {
      if (length !== 13) return bad('The PNG header chunk has the wrong size.');
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      const colour = data[9];
      // The bit depths each colour type allows (PNG spec, table 11.1); compression and filter method 0, interlace 0 or 1.
      if (width === 0 || height === 0 || !PNG_DEPTHS[colour]?.includes(depth)) return bad('The PNG header is not valid (an unknown colour type, or a bit depth it does not allow).');
      if (data[10] !== 0 || data[11] !== 0 || data[12] > 1) return bad('The PNG header names a compression, filter or interlace method that does not exist.');
      if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) return tooLarge(`The PNG is ${width}×${height} pixels; the limit is ${MAX_IMAGE_SIDE}×${MAX_IMAGE_SIDE}.`);
      rows = pngRows(width, height, depth * PNG_CHANNELS[colour], data[12] === 1);
      needsPalette = colour === 3;
    } else if (type === 'PLTE') {
      // A palette PNG's palette holds 1 to 256 entries; Chromium draws nothing with an empty or longer one.
      if (needsPalette && (length === 0 || length > 256 * 3)) return bad(`The PNG palette has ${Math.floor(length / 3)} entries; 1 to 256 are allowed.`);
      palette = true;
    } else if (type === 'IDAT') {
      if (needsPalette && !palette) return bad('The PNG uses a palette but has none (no PLTE chunk before its image data).');
      idat.push(data);
    } else if (type === 'acTL') {
      // Chromium ignores one of the wrong size or after the image data, and one announcing no frames.
      if (length === 8 && idat.length === 0 && data.readUInt32BE(0) > 0) animated = true;
    } else if (type === 'fcTL' && animated && !sawFrame) {
      sawFrame = true;
      const problem = firstFrameProblem(data, width, height, idat.length === 0);
      if (problem) return bad(`The PNG animation is broken: ${problem} Save it as a still PNG.`);
    } else if (type === 'IEND') {
      sawEnd = true;
      break;
    }
    offset += 12 + length;
  }
  if (!width) return bad('The PNG has no header chunk.');
  if (!sawEnd) return bad('The PNG is truncated (no IEND chunk).');
  if (idat.length === 0) return bad('The PNG has no image data.');
  // Announced frames but none described: Chromium prints nothing.
  if (animated && !sawFrame) return bad('The PNG animation is broken: it announces frames (acTL) but describes none (fcTL). Save it as a still PNG.');
  const expected = rows.reduce((sum, p) => sum + p.rowBytes * p.rows, 0);
  const verdict = await inflatedScanlines(Buffer.concat(idat), expected, rows);
  if (verdict === 'corrupt') return bad('The PNG image data is corrupt.');
  if (verdict === 'bad_filter') return bad('The PNG image data is corrupt (a scanline names a filter that does not exist).');
  if (verdict !== expected) return bad('The PNG image data does not match its dimensions.');
  return { ok: true, type: 'png', width, height, bytes: buf };
}

/**
 * What is wrong with an animated PNG's first frame control chunk (fcTL), which Chromium prints as a broken-image
 * icon, or null: it must be 26 bytes and a region of the image of at least a pixel; before the image data it
 * describes the image data itself, so the whole image (APNG specification).
 */
function firstFrameProblem(data: Buffer, width: number, height: number, beforeImageData: boolean): string | null {
  if (data.length !== 26) return 'its first frame control chunk (fcTL) has the wrong size.';
  const [frameWidth, frameHeight, x, y] = [4, 8, 12, 16].map((at) => data.readUInt32BE(at));
  if (frameWidth === 0 || frameHeight === 0) return 'its first frame has no pixels.';
  if (x + frameWidth > width || y + frameHeight > height) return `its first frame (${frameWidth}×${frameHeight} at ${x},${y}) reaches outside the ${width}×${height} image.`;
  if (beforeImageData && (x !== 0 || y !== 0 || frameWidth !== width || frameHeight !== height)) return `its first frame is the image data but is ${frameWidth}×${frameHeight} at ${x},${y}, not the whole ${width}×${height} image.`;
  return null;
}

/**
 * The length zlib `data` inflates to, counted as it streams and kept nowhere (a 10000×10000 image can be 800 MB of
 * scanlines); counting stops past `limit`, where a compression bomb stops too. Each scanline's filter byte (0–4) is
 * checked on the way: Chromium draws an image with a corrupt one anyway, made up. Inflation runs off the event loop.
 */
function inflatedScanlines(data: Buffer, limit: number, layout: { rowBytes: number; rows: number }[]): Promise<number | 'corrupt' | 'bad_filter'> {
  return new Promise((resolve) => {
    const inflater = createInflate();
    let total = 0;
    let settled = false;
    // Where the next filter byte is, counted from the start of the next chunk; rows and passes left.
    let pass = 0;
    let rowsLeft = layout[0]?.rows ?? 0;
    let nextFilter = 0;
    const settle = (result: number | 'corrupt' | 'bad_filter') => {
      if (settled) return;
      settled = true;
      inflater.destroy();
      resolve(result);
    };
    inflater.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) return settle(total);
      let at = nextFilter;
      while (at < chunk.length && pass < layout.length) {
        if (chunk[at] > 4) return settle('bad_filter');
        at += layout[pass].rowBytes;
        if (--rowsLeft === 0) rowsLeft = layout[++pass]?.rows ?? 0;
      }
      nextFilter = at - chunk.length;
    });
    inflater.on('end', () => settle(total));
    inflater.on('error', () => settle('corrupt'));
    inflater.end(data);
  });
}

const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
/**
 * Why Chromium would print a JPEG frame as nothing (a blank, charged page), or null when it draws it: it decodes
 * only 8-bit Huffman-coded DCT images; arithmetic-coded, 12-bit and lossless ones come out transparent, and
 * hierarchical ones fail to load.
 */
function unprintableJpegFrame(marker: number, precision: number): string | null {
  const fix = 'Save it again as a baseline or progressive 8-bit JPEG, or as a PNG.';
  // SOFn: bit 2 marks a hierarchical (differential) frame, n & 3 === 3 a lossless one, n >= 9 arithmetic coding.
  if (marker & 0x04) return `The JPEG is hierarchical (differential), which cannot be printed. ${fix}`;
  if ((marker & 0x03) === 0x03) return `The JPEG is lossless, which cannot be printed. ${fix}`;
  if (marker >= 0xc9) return `The JPEG is arithmetic-coded, which cannot be printed. ${fix}`;
  if (precision !== 8) return `The JPEG has ${precision}-bit samples; only 8-bit JPEGs can be printed. ${fix}`;
  return null;
}

function checkJpeg(buf: Buffer): ImageCheck {
  let offset = 2;
  let width = 0;
  let height = 0;
  let framed = false;
  let progressive = false;
  // Each frame component's id and the quantisation table it names; the tables defined so far.
  const components = new Map<number, number>();
  const quantTables = new Set<number>();
  // The Huffman tables defined so far, as DHT names them (class × 16 + id); whether the first scan uses one never defined.
  const huffmanTables = new Set<number>();
  let lacksHuffmanTables = false;
  let scanAt = 0;
  for (;;) {
    while (offset < buf.length && buf[offset] === 0xff && buf[offset + 1] === 0xff) offset++;
    if (offset + 4 > buf.length || buf[offset] !== 0xff) return bad('The JPEG is truncated or its structure is damaged.');
    const marker = buf[offset + 1];
    if (marker === 0xd8 || marker === 0xd9 || (marker >= 0xd0 && marker <= 0xd7)) return bad('The JPEG has markers out of order.');
    const length = buf.readUInt16BE(offset + 2);
    if (length < 2 || offset + 2 + length > buf.length) return bad('The JPEG is truncated.');
    if (SOF_MARKERS.has(marker)) {
      if (length < 8) return bad('The JPEG frame header is damaged.');
      if (framed) return bad('The JPEG has a second frame header.');
      framed = true;
      progressive = marker === 0xc2;
      const unprintable = unprintableJpegFrame(marker, buf[offset + 4]);
      if (unprintable) return bad(unprintable);
      height = buf.readUInt16BE(offset + 5);
      width = buf.readUInt16BE(offset + 7);
      // Chromium draws grey (1), YCbCr or RGB (3) and CMYK or YCCK (4) images; others print as a broken-image icon.
      const count = buf[offset + 9];
      if (![1, 3, 4].includes(count)) return bad(`The JPEG has ${count} colour components; only 1 (grey), 3 (colour) or 4 (CMYK) can be printed.`);
      if (length !== 8 + 3 * count) return bad('The JPEG frame header is damaged (its length does not match its components).');
      for (let c = 0; c < count; c++) {
        const [id, sampling, table] = buf.subarray(offset + 10 + 3 * c, offset + 13 + 3 * c);
        if (components.has(id)) return bad('The JPEG frame header names two colour components with the same id.');
        // Horizontal and vertical sampling factors are 1 to 4 (T.81, B.2.2).
        if (![sampling >> 4, sampling & 0x0f].every((factor) => factor >= 1 && factor <= 4)) return bad('The JPEG frame header has a sampling factor outside 1 to 4.');
        components.set(id, table);
      }
    }
    if (marker === 0xdb) {
      // Each table: a byte of precision (high nibble) and id (low nibble), then 64 entries of 1 or 2 bytes.
      for (let at = offset + 4; at < offset + 2 + length; at += 1 + 64 * ((buf[at] >> 4) + 1)) quantTables.add(buf[at] & 0x0f);
    }
    if (marker === 0xc4) {
      // Each table: a byte of class (high nibble) and id (low nibble), the number of codes of each length 1–16, the symbols.
      for (let at = offset + 4; at + 17 <= offset + 2 + length; at += 17 + buf.subarray(at + 1, at + 17).reduce((sum, n) => sum + n, 0)) huffmanTables.add(buf[at]);
    }
    if (marker === 0xda) {
      // Chromium prints a scan of a component the frame lacks as a broken-image icon; a missing quantisation table
      // it passes into the PDF as is, where no viewer can draw it.
      const count = buf[offset + 4];
      if (!framed || count < 1 || count > 4 || length !== 6 + 2 * count) return bad('The JPEG scan header is damaged.');
      // A progressive scan codes either DC coefficients (spectral selection starting at 0) or AC ones, with that class's tables only.
      const startsAtDc = buf[offset + 5 + 2 * count] === 0;
      for (let c = 0; c < count; c++) {
        const table = components.get(buf[offset + 5 + 2 * c]);
        if (table === undefined) return bad('The JPEG has a scan of a colour component its frame does not have.');
        if (!quantTables.has(table)) return bad(`The JPEG uses quantisation table ${table}, which it never defines.`);
        const [dc, ac] = [buf[offset + 6 + 2 * c] >> 4, 0x10 | (buf[offset + 6 + 2 * c] & 0x0f)];
        const used = progressive ? [startsAtDc ? dc : ac] : [dc, ac];
        for (const huffman of used.filter((table) => !huffmanTables.has(table))) {
          // Chromium assumes the standard tables for 0 and 1 (Motion-JPEG frames leave them out) and draws the image,
          // but copies its bytes into the PDF, where pdf.js and other viewers cannot decode it: they are written in
          // below. Another table never defined it draws as nothing.
          if (!isStandardHuffmanTable(huffman)) return bad(`The JPEG uses ${huffman >> 4 ? 'AC' : 'DC'} Huffman table ${huffman & 0x0f}, which it never defines.`);
          lacksHuffmanTables = true;
        }
      }
      scanAt = offset;
      offset += 2 + length;
      break;
    }
    offset += 2 + length;
  }
  if (!width || !height) return bad('The JPEG has no frame header (or zero dimensions).');
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) return tooLarge(`The JPEG is ${width}×${height} pixels; the limit is ${MAX_IMAGE_SIDE}×${MAX_IMAGE_SIDE}.`);
  // The compressed data runs to the end-of-image marker; anything after it (some cameras append data) is ignored.
  const end = buf.lastIndexOf(Buffer.from([0xff, 0xd9]));
  if (end < offset) return bad('The JPEG is truncated (no end-of-image marker).');
  if (!lacksHuffmanTables) return { ok: true, type: 'jpeg', width, height, bytes: buf };
  // Every standard table it does not define, not only the first scan's: a progressive JPEG's later scans rely on them too.
  const standard = [0x00, 0x10, 0x01, 0x11].filter((table) => !huffmanTables.has(table));
  return { ok: true, type: 'jpeg', width, height, bytes: Buffer.concat([buf.subarray(0, scanAt), standardHuffmanSegment(standard), buf.subarray(scanAt)]) };
}

/** Checks one uploaded image: PNG or JPEG by magic bytes, at most 5 MB and 10000×10000, structurally sound. */
export async function checkImage(bytes: Buffer): Promise<ImageCheck> {
  if (bytes.length > MAX_IMAGE_BYTES) return tooLarge(`The image is ${bytes.length} bytes; the limit is ${MAX_IMAGE_BYTES} (5 MB).`);
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return checkPng(bytes);
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return checkJpeg(bytes);
  return { ok: false, code: 'INVALID_IMAGE_FORMAT', message: 'Only PNG and JPEG images are accepted.' };
}

export const FITS = ['contain', 'cover', 'fill', 'none'] as const;
export type Fit = (typeof FITS)[number];

export interface ImageOptions {
  pdf: PdfOptions;
  fit: Fit;
}

const IMAGE_MARGIN = { top: '10mm', right: '10mm', bottom: '10mm', left: '10mm' };
const PAGE_KEYS = { format: true, margin: true, landscape: true, width: true, height: true } as const;
const page = pdfOptionsSchema.shape;

/**
 * The options of image input (the multipart `options` JSON, or a URL that serves an image): the page and how each
 * image fills it. Other keys are ignored.
 */
export const imageOptionsSchema = z
  .object({
    format: page.format,
    margin: page.margin.meta({ description: 'Page margins by side (top, right, bottom, left), each a length such as "10mm". Default 10mm on every side.', default: { ...IMAGE_MARGIN } }),
    landscape: page.landscape,
    width: page.width,
    height: page.height,
    fit: optional(z.enum(FITS)).meta({
      description: 'How each image fills the printable area: contain (default: whole image, kept in proportion), cover (fills it, cropped), fill (stretched) or none (natural size, centred).',
      default: 'contain',
    }),
  })
  .meta({ id: 'ImageOptions', description: 'Image options: one page per image. Unknown keys are ignored.' });

/** Image options: format (A4), margin (10 mm on every side), fit (contain), landscape; other keys are ignored. */
export function parseImageOptions(raw: unknown): ImageOptions {
  const read = { prefix: 'options', example: '{"fit": "cover", "format": "Letter"}' };
  // The page first, with its margin checks, then fit: the order the refusals always had.
  const pageOptions = parseRequest(imageOptionsSchema.pick(PAGE_KEYS), raw ?? {}, read);
  const pdf = normalisePdfOptions(pageOptions, IMAGE_MARGIN);
  const { fit = 'contain' } = parseRequest(imageOptionsSchema.pick({ fit: true }), raw ?? {}, read);
  return { pdf, fit };
}

const OBJECT_FIT: Record<Fit, string> = { contain: 'contain', cover: 'cover', fill: 'fill', none: 'none' };

/** One page per image, sized to the printable area, the image placed by `fit`. */
export function imagesToHtml(images: { bytes: Buffer; type: ImageType }[], options: ImageOptions): string {
  const o = options.pdf;
  const paperW = o.landscape ? o.paperHeightIn : o.paperWidthIn;
  const paperH = o.landscape ? o.paperWidthIn : o.paperHeightIn;
  const w = paperW - o.margin.left - o.margin.right;
  const h = paperH - o.margin.top - o.margin.bottom;
  // A hair under the printable height so rounding never spills a page: a tenth of it when that is under 0.01 in (a
  // negative height is dropped by CSS, and the image then spilled over a hundred pages of a few margins' room).
  const box = `width:${w.toFixed(6)}in;height:${(h - Math.min(0.01, h / 10)).toFixed(6)}in`;
  const pages = images
    .map(({ bytes, type }) => `<div class="page"><img alt="" src="data:image/${type};base64,${bytes.toString('base64')}"></div>`)
    .join('');
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Images</title><style>
html,body{margin:0;padding:0;background:transparent}
.page{${box};overflow:hidden;display:flex;align-items:center;justify-content:center;break-after:page;page-break-after:always}
.page:last-child{break-after:auto;page-break-after:auto}
img{width:100%;height:100%;object-fit:${OBJECT_FIT[options.fit]};object-position:center;display:block}
</style></head><body>${pages}</body></html>`;
}

/** What the caller can do about an unusable image, by its code. */
export const IMAGE_ADVICE: Record<ImageCode, string> = {
  INVALID_IMAGE_FORMAT: 'Convert it to PNG or JPEG and resend.',
  INVALID_IMAGE_DATA: 'Export or download the image again and resend it.',
  IMAGE_TOO_LARGE: 'Resize or compress the image below the limit.',
};

/** The refusal when no image was usable: the first image's own code, with every image's problem listed. */
export function noUsableImages(problems: { index: number; filename: string | null; code: ImageCode; message: string }[]): ServiceError {
  const first = problems[0];
  return new ServiceError(first.code, `No image could be used: ${first.message} ${IMAGE_ADVICE[first.code]}`, { images: problems });
}
