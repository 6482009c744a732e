import { deflateSync } from 'node:zlib';
import { z } from 'zod';
import { MAX_IMAGE_BYTES, checkImage, imageOptionsSchema, imagesToHtml, parseImageOptions } from '../../../../functions/core/render/images';
import { refusal } from '../../../support/errors';
import { GIF, arithmeticJpeg, jpeg, png, pngChunk } from '../../../support/images';
import { decodeJpeg } from '../../../support/jpeg-read';
import { STANDARD_TABLES, type TableName, adobeApp14, everySymbolBlocks, flatJpeg, huffmanCodes, standardTablesJpeg } from '../../../support/jpeg-build';

describe('checkImage', () => {
  it('accepts PNG and JPEG and reads their dimensions', async () => {
    const [pngBytes, jpegBytes] = [png(30, 20), jpeg()];
    expect(await checkImage(pngBytes)).toEqual({ ok: true, type: 'png', width: 30, height: 20, bytes: pngBytes });
    expect(await checkImage(jpegBytes)).toEqual({ ok: true, type: 'jpeg', width: 120, height: 80, bytes: jpegBytes });
  });

  it('refuses other formats by their bytes, whatever the file is called', async () => {
    expect(await checkImage(GIF)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_FORMAT' });
    expect(await checkImage(Buffer.from('%PDF-1.7'))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_FORMAT' });
  });

  it('refuses truncated and damaged images', async () => {
    const good = png(30, 20);
    expect(await checkImage(good.subarray(0, good.length - 20))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
    const flipped = Buffer.from(good);
    flipped[40] ^= 0xff;
    expect(await checkImage(flipped)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
    const j = jpeg();
    expect(await checkImage(j.subarray(0, 300))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
    expect(await checkImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00]))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
  });

  /** The photo with its frame header (SOFn) changed by `edit` (marker byte, precision byte). */
  function reframed(edit: (frame: Buffer) => void): Buffer {
    const b = Buffer.from(jpeg());
    for (let at = 2; ; at += 2 + b.readUInt16BE(at + 2)) {
      if (b[at + 1] >= 0xc0 && b[at + 1] <= 0xc2) return (edit(b.subarray(at + 1)), b);
    }
  }

  it.each<[string, Buffer, string]>([
    ['arithmetic-coded (jpegtran -arithmetic)', arithmeticJpeg(), 'arithmetic-coded'],
    ['12-bit', reframed((f) => (f[3] = 12)), '12-bit samples'],
    ['lossless (SOF3)', reframed((f) => (f[0] = 0xc3)), 'lossless'],
    ['hierarchical (SOF5)', reframed((f) => (f[0] = 0xc5)), 'hierarchical'],
  ])('refuses a JPEG Chromium cannot draw: %s (it printed a blank page, charged)', async (_what, bytes, said) => {
    const check = await checkImage(bytes);
    expect(check).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
    expect(check.ok || check.message).toContain(said);
    expect(check.ok || check.message).toContain('baseline or progressive 8-bit JPEG');
  });

  it('reads a JPEG frame header for its size: over 10000 pixels on a side is too large, a zero height is refused', async () => {
    expect(await checkImage(reframed((f) => f.writeUInt16BE(10_000, 6)))).toMatchObject({ ok: true, width: 10_000, height: 80 });
    expect(await checkImage(reframed((f) => f.writeUInt16BE(10_001, 6)))).toMatchObject({ ok: false, code: 'IMAGE_TOO_LARGE' });
    expect(await checkImage(reframed((f) => f.writeUInt16BE(10_001, 4)))).toMatchObject({ ok: false, code: 'IMAGE_TOO_LARGE' });
    // A zero height means "given later by a DNL marker", which Chromium's decoder does not read.
    expect(await checkImage(reframed((f) => f.writeUInt16BE(0, 4)))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
  });

  it('refuses a JPEG without its end-of-image marker and one with a second start-of-image, and skips fill bytes before a marker', async () => {
    const j = jpeg();
    expect(await checkImage(j.subarray(0, j.length - 2))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/end-of-image/) });
    // A second SOI followed by what reads as a 4-byte segment: refused for the marker, not for a length.
    const twoStarts = Buffer.concat([j.subarray(0, 2), Buffer.from([0xff, 0xd8, 0x00, 0x04, 0x00, 0x00]), j.subarray(2)]);
    expect(await checkImage(twoStarts)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/out of order/) });
    // Any number of 0xFF fill bytes may precede a marker (JPEG standard, B.1.1.2).
    const filled = Buffer.concat([j.subarray(0, 2), Buffer.from([0xff, 0xff, 0xff]), j.subarray(2)]);
    expect(await checkImage(filled)).toMatchObject({ ok: true, width: 120, height: 80 });
  });

  it('takes only FF D8 FF as the start of a JPEG (the MIME sniffing signature); other bytes are another format', async () => {
    expect(await checkImage(Buffer.from([0xff, 0xd8, 0x00, 0xe0, 0x00, 0x10]))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_FORMAT' });
  });

  it('accepts extended sequential (SOF1) and progressive (SOF2) 8-bit JPEGs, which Chromium draws', async () => {
    expect(await checkImage(reframed((f) => (f[0] = 0xc1)))).toMatchObject({ ok: true, width: 120, height: 80 });
    expect(await checkImage(reframed((f) => (f[0] = 0xc2)))).toMatchObject({ ok: true, width: 120, height: 80 });
  });

  it.each<[string, number, number, number[]]>([
    ['RGB at bit depth 4', 2, 4, [0, 0, 0]],
    ['RGBA at bit depth 1', 6, 1, [0, 0, 0]],
    ['a palette at bit depth 16', 3, 16, [0, 0, 0]],
    ['compression method 1', 2, 8, [1, 0, 0]],
    ['filter method 1', 2, 8, [0, 1, 0]],
    ['interlace method 2', 2, 8, [0, 0, 2]],
  ])('refuses a PNG header no decoder reads: %s (it printed a broken-image icon, charged)', async (_what, colour, depth, methods) => {
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(4, 0);
    ihdr.writeUInt32BE(4, 4);
    ihdr[8] = depth;
    ihdr[9] = colour;
    ihdr.set(methods, 10);
    // Image data of the very size the header promises (as it would be read, interlace 2 as none), and a palette for
    // palette PNGs: only the header itself is wrong.
    const channels = { 2: 3, 3: 1, 6: 4 }[colour]!;
    const scanlines = Buffer.alloc(4 * (1 + Math.ceil((4 * depth * channels) / 8)));
    const palette = colour === 3 ? [pngChunk('PLTE', Buffer.alloc(3))] : [];
    const image = Buffer.concat([png(1, 1).subarray(0, 8), pngChunk('IHDR', ihdr), ...palette, pngChunk('IDAT', deflateSync(scanlines)), pngChunk('IEND', Buffer.alloc(0))]);
    expect(await checkImage(image)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/header/) });
  });

  it('refuses a PNG header of the wrong size or with no rows, even with image data that fits it', async () => {
    const sig = png(1, 1).subarray(0, 8);
    const iend = pngChunk('IEND', Buffer.alloc(0));
    const header = (height: number, size = 13) => {
      const ihdr = Buffer.alloc(size);
      ihdr.writeUInt32BE(4, 0);
      ihdr.writeUInt32BE(height, 4);
      ihdr[8] = 8;
      ihdr[9] = 2;
      return pngChunk('IHDR', ihdr);
    };
    const fourRows = pngChunk('IDAT', deflateSync(Buffer.alloc(4 * 13)));
    expect(await checkImage(Buffer.concat([sig, header(4), fourRows, iend]))).toMatchObject({ ok: true });
    expect(await checkImage(Buffer.concat([sig, header(4, 14), fourRows, iend]))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/header/) });
    // 4×0 pixels: no scanlines, so empty image data "matches"; there is nothing to print.
    expect(await checkImage(Buffer.concat([sig, header(0), pngChunk('IDAT', deflateSync(Buffer.alloc(0))), iend]))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
  });

  it('refuses a PNG whose chunk checksum does not match, and one that ends without its IEND chunk', async () => {
    const good = png(30, 20);
    const badCrc = Buffer.from(good);
    badCrc[good.length - 12 - 1] ^= 0xff; // the last byte of the IDAT chunk's CRC; its data is intact
    expect(await checkImage(badCrc)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/checksum/) });
    expect(await checkImage(good.subarray(0, good.length - 12))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/IEND/) });
  });

  it('refuses a PNG whose pixel data does not match its header (a decompression bomb stops at the promised size)', async () => {
    const honest = png(10, 10);
    const header = honest.subarray(0, 8 + 25); // signature + IHDR chunk (10×10 RGB)
    const bomb = Buffer.concat([header, pngChunk('IDAT', deflateSync(Buffer.alloc(50 * 1024 * 1024))), pngChunk('IEND', Buffer.alloc(0))]);
    expect(await checkImage(bomb)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
  });

  it('refuses a PNG whose scanlines name a filter that does not exist, interlaced or not, and a palette PNG without a palette', async () => {
    const rgbHeader = (width: number, height: number, interlace: number) => {
      const ihdr = Buffer.alloc(13);
      ihdr.writeUInt32BE(width, 0);
      ihdr.writeUInt32BE(height, 4);
      ihdr[8] = 8;
      ihdr[9] = 2;
      ihdr[12] = interlace;
      return pngChunk('IHDR', ihdr);
    };
    const withScanlines = (header: Buffer, raw: Buffer, extra: Buffer[] = []) =>
      Buffer.concat([png(1, 1).subarray(0, 8), header, ...extra, pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]);
    // 300 rows of 1 + 3×300 bytes: the bad filter byte sits in the middle of the inflated stream, in another chunk.
    const raw = Buffer.alloc(300 * 901);
    expect(await checkImage(withScanlines(rgbHeader(300, 300, 0), raw))).toMatchObject({ ok: true });
    raw[150 * 901] = 9;
    expect(await checkImage(withScanlines(rgbHeader(300, 300, 0), raw))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/filter/) });
    // Interlaced 8×8 RGB: seven passes of rows 1+3w bytes, 1 row each for passes 1–2 (w=1), then 1×2, 2×2, 2×4, 4×4, 4×8.
    const passes: [number, number][] = [[1, 1], [1, 1], [2, 1], [2, 2], [4, 2], [4, 4], [8, 4]];
    const interlaced = Buffer.concat(passes.flatMap(([w, rows]) => Array.from({ length: rows }, () => Buffer.alloc(1 + 3 * w))));
    expect(await checkImage(withScanlines(rgbHeader(8, 8, 1), interlaced))).toMatchObject({ ok: true });
    // The filter byte of the last row of the last pass.
    interlaced[interlaced.length - (1 + 3 * 8)] = 5;
    expect(await checkImage(withScanlines(rgbHeader(8, 8, 1), interlaced))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });

    const paletteHeader = Buffer.alloc(13);
    paletteHeader.writeUInt32BE(2, 0);
    paletteHeader.writeUInt32BE(2, 4);
    paletteHeader[8] = 8;
    paletteHeader[9] = 3;
    const indexed = Buffer.alloc(2 * 3);
    expect(await checkImage(withScanlines(pngChunk('IHDR', paletteHeader), indexed))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/palette/) });
    expect(await checkImage(withScanlines(pngChunk('IHDR', paletteHeader), indexed, [pngChunk('PLTE', Buffer.from([255, 0, 0]))]))).toMatchObject({ ok: true });
  });

  it('refuses PNGs that Chromium prints as a broken image: unknown critical chunk, second header, split image data, empty or oversized palette', async () => {
    const good = png(4, 4);
    const sig = good.subarray(0, 8);
    const ihdr = good.subarray(8, 8 + 25);
    const rest = good.subarray(8 + 25); // IDAT…, IEND
    const iend = pngChunk('IEND', Buffer.alloc(0));
    expect(await checkImage(Buffer.concat([sig, ihdr, pngChunk('ABCD', Buffer.from('x')), rest]))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
    expect(await checkImage(Buffer.concat([sig, ihdr, ihdr, rest]))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
    // Ancillary chunks (lower-case first letter, APNG's acTL among them) stay fine.
    expect(await checkImage(Buffer.concat([sig, ihdr, pngChunk('acTL', Buffer.alloc(8)), rest]))).toMatchObject({ ok: true });
    const grey = Buffer.alloc(13);
    grey.writeUInt32BE(100, 0);
    grey.writeUInt32BE(100, 4);
    grey[8] = 8;
    const z = deflateSync(Buffer.alloc(101 * 100));
    const split = Buffer.concat([sig, pngChunk('IHDR', grey), pngChunk('IDAT', z.subarray(0, 10)), pngChunk('tEXt', Buffer.from('a\0b')), pngChunk('IDAT', z.subarray(10)), iend]);
    expect(await checkImage(split)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA' });
    const joined = Buffer.concat([sig, pngChunk('IHDR', grey), pngChunk('IDAT', z.subarray(0, 10)), pngChunk('IDAT', z.subarray(10)), pngChunk('tEXt', Buffer.from('a\0b')), iend]);
    expect(await checkImage(joined)).toMatchObject({ ok: true });
    const pal = Buffer.from(grey);
    pal[9] = 3;
    const withPalette = (entries: number) => Buffer.concat([sig, pngChunk('IHDR', pal), pngChunk('PLTE', Buffer.alloc(entries * 3)), pngChunk('IDAT', z), iend]);
    expect(await checkImage(withPalette(0))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/palette/) });
    expect(await checkImage(withPalette(300))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/palette/) });
    expect(await checkImage(withPalette(256))).toMatchObject({ ok: true });
  });

  /** A 16×16 mid-grey baseline JPEG with `components` components, its bytes then changed by `edit`. */
  const grey = (components = 1, edit: (b: Buffer, at: (marker: number) => number) => void = () => {}) => {
    const b = Buffer.from(flatJpeg(2, 2, components, () => 128));
    edit(b, (marker) => b.indexOf(Buffer.from([0xff, marker])));
    return b;
  };

  it.each<[string, Buffer, RegExp]>([
    ['no components', grey(1, (b, at) => (b[at(0xc0) + 9] = 0)), /components/],
    ['2 components', grey(2), /components/],
    ['8 components', grey(8), /components/],
    ['a frame header longer than its components', Buffer.concat([grey().subarray(0, 2), Buffer.from([0xff, 0xc0, 0, 14, 8, 0, 16, 0, 16, 1, 1, 0x11, 0, 0, 0, 0]), grey().subarray(2)]), /frame header/],
    ['a second frame header', (() => { const b = grey(); const at = b.indexOf(Buffer.from([0xff, 0xc0])); const sof = b.subarray(at, at + 2 + b.readUInt16BE(at + 2)); return Buffer.concat([b.subarray(0, at), sof, b.subarray(at)]); })(), /frame header/],
    ['a scan of a component the frame does not have', grey(1, (b, at) => (b[at(0xda) + 5] = 9)), /scan/],
    ['a quantisation table that was never defined', grey(1, (b, at) => (b[at(0xc0) + 12] = 3)), /quantisation table/],
    ['a DC Huffman table other than the standard 0 and 1 that was never defined', grey(1, (b, at) => (b[at(0xda) + 6] = 0x20)), /DC Huffman table 2/],
    ['an AC Huffman table other than the standard 0 and 1 that was never defined', grey(1, (b, at) => (b[at(0xda) + 6] = 0x03)), /AC Huffman table 3/],
    ['a sampling factor of 0', grey(1, (b, at) => (b[at(0xc0) + 11] = 0x01)), /sampling factor/],
    ['a sampling factor of 5', grey(1, (b, at) => (b[at(0xc0) + 11] = 0x51)), /sampling factor/],
    ['two components with one id', grey(3, (b, at) => (b[at(0xc0) + 13] = b[at(0xc0) + 10])), /same id/],
  ])('refuses a JPEG Chromium prints as a broken-image icon or that no PDF viewer can draw: %s', async (_what, bytes, said) => {
    expect(await checkImage(grey())).toMatchObject({ ok: true, width: 16, height: 16 });
    expect(await checkImage(bytes)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(said) });
  });

  it('accepts grey, YCbCr, CMYK and YCCK JPEGs (1, 3 and 4 components)', async () => {
    for (const components of [1, 3, 4]) expect(await checkImage(grey(components))).toMatchObject({ ok: true });
    expect(await checkImage(flatJpeg(2, 2, 4, () => 128, [adobeApp14(2)]))).toMatchObject({ ok: true });
  });

  describe('JPEGs that rely on the standard Huffman tables without defining them (Motion-JPEG frames)', () => {
    // A 64×32 colour picture whose blocks use every symbol of the four standard tables.
    const blocks = everySymbolBlocks(32);
    const picture = (tables?: TableName[]) => standardTablesJpeg(8, 4, 3, (component, block) => blocks[(block + 5 * component) % 32], tables);

    /** A JPEG's DHT segments before its first scan: where each starts and the tables it defines, by class and id (0x00 DC 0 … 0x11 AC 1); and where the scan starts. */
    function huffmanSegments(bytes: Buffer) {
      const segments: { at: number; tables: Map<number, { counts: number[]; symbols: number[] }> }[] = [];
      let at = 2;
      for (; bytes[at + 1] !== 0xda; at += 2 + bytes.readUInt16BE(at + 2)) {
        if (bytes[at + 1] !== 0xc4) continue;
        const tables = new Map<number, { counts: number[]; symbols: number[] }>();
        for (let t = at + 4; t < at + 2 + bytes.readUInt16BE(at + 2); ) {
          const counts = [...bytes.subarray(t + 1, t + 17)];
          const total = counts.reduce((sum, n) => sum + n, 0);
          tables.set(bytes[t], { counts, symbols: [...bytes.subarray(t + 17, t + 17 + total)] });
          t += 17 + total;
        }
        segments.push({ at, tables });
      }
      return { segments, scan: at };
    }
    const tablesOf = (bytes: Buffer) => new Map(huffmanSegments(bytes).segments.flatMap((segment) => [...segment.tables]));
    const NAMES: Record<number, TableName> = { 0x00: 'dc0', 0x10: 'ac0', 0x01: 'dc1', 0x11: 'ac1' };

    it('writes the standard tables in before the scan, so pdf.js decodes it to the pixels of the same JPEG with its tables (Chromium copies the bytes into the PDF as they are)', async () => {
      const motion = picture([]);
      await expect(decodeJpeg(motion)).rejects.toThrow(/cannot decode/);
      const check = await checkImage(motion);
      expect(check).toMatchObject({ ok: true, type: 'jpeg', width: 64, height: 32 });
      const bytes = check.ok ? check.bytes : Buffer.alloc(0);
      const tables = tablesOf(bytes);
      expect([...tables.keys()].map((key) => NAMES[key]).sort()).toEqual(['ac0', 'ac1', 'dc0', 'dc1']);
      for (const [key, table] of tables) expect({ [NAMES[key]]: table }).toEqual({ [NAMES[key]]: STANDARD_TABLES[NAMES[key]] });
      // Inserted just before the scan; the JPEG around them unchanged.
      const { segments, scan } = huffmanSegments(bytes);
      const last = segments.at(-1)!.at;
      expect(scan).toBe(last + 2 + bytes.readUInt16BE(last + 2));
      expect(Buffer.concat([bytes.subarray(0, segments[0].at), bytes.subarray(scan)])).toEqual(motion);
      const decoded = await decodeJpeg(bytes);
      const reference = await decodeJpeg(picture());
      expect({ ...decoded, pixels: null }).toEqual({ width: 64, height: 32, components: 3, pixels: null });
      expect(decoded.pixels.equals(reference.pixels)).toBe(true);
    });

    it('writes in the tables of T.81 Annex K.3, code for code (Tables K.3 to K.6)', async () => {
      const check = await checkImage(picture([]));
      const tables = tablesOf(check.ok ? check.bytes : Buffer.alloc(0));
      const codes = (key: number) => huffmanCodes(tables.get(key)!);
      // DC: a code per difference category 0–11.
      expect([...codes(0x00)]).toEqual(['00', '010', '011', '100', '101', '110', '1110', '11110', '111110', '1111110', '11111110', '111111110'].map((code, category) => [category, code]));
      expect([...codes(0x01)]).toEqual(['00', '01', '10', '110', '1110', '11110', '111110', '1111110', '11111110', '111111110', '1111111110', '11111111110'].map((code, category) => [category, code]));
      // AC, by run/size: end of block (0/0), the shortest and longest codes, a run of 16 zeros (F/0) and the last symbol.
      const luminance = { 0x00: '1010', 0x01: '00', 0x02: '01', 0x03: '100', 0x04: '1011', 0x05: '11010', 0x08: '1111110110', 0x09: '1111111110000010', 0x0a: '1111111110000011', 0x11: '1100', 0x12: '11011', 0x15: '11111110110', 0x16: '1111111110000100', 0x21: '11100', 0x31: '111010', 0x61: '1111011', 0xa1: '111111010', 0xf0: '11111111001', 0xfa: '1111111111111110' };
      const chrominance = { 0x00: '00', 0x01: '01', 0x02: '100', 0x03: '1010', 0x04: '11000', 0x08: '111110100', 0x0a: '111111110100', 0x11: '1011', 0x12: '111001', 0x16: '111111110101', 0x21: '11010', 0x31: '11011', 0xa1: '111111000', 0xf0: '1111111010', 0xfa: '1111111111111110' };
      for (const [key, expected] of [[0x10, luminance], [0x11, chrominance]] as const) {
        const all = codes(key);
        expect(all.size).toBe(162);
        expect(Object.fromEntries(Object.keys(expected).map((symbol) => [symbol, all.get(Number(symbol))]))).toEqual(expected);
      }
    });

    it('keeps the tables a JPEG defines and writes in only those it lacks', async () => {
      const partly = picture(['dc0', 'ac0']);
      const check = await checkImage(partly);
      const bytes = check.ok ? check.bytes : Buffer.alloc(0);
      const { segments } = huffmanSegments(bytes);
      // The JPEG's own two segments first, as they were, then one with the two tables it lacks.
      expect(segments.map((segment) => [...segment.tables.keys()].sort())).toEqual([[0x00], [0x10], [0x01, 0x11]]);
      expect(bytes.subarray(0, segments[2].at)).toEqual(partly.subarray(0, segments[2].at));
      expect((await decodeJpeg(bytes)).pixels.equals((await decodeJpeg(picture())).pixels)).toBe(true);
    });

    it('leaves a JPEG that defines the tables it uses as it is', async () => {
      for (const bytes of [jpeg(), picture(), grey(3)]) {
        const check = await checkImage(bytes);
        expect(check.ok && check.bytes).toBe(bytes);
      }
      // A progressive JPEG's first scan of DC coefficients uses only DC tables.
      const dcOnly = picture(['dc0', 'dc1']);
      dcOnly[dcOnly.indexOf(Buffer.from([0xff, 0xc0])) + 1] = 0xc2;
      const sos = dcOnly.indexOf(Buffer.from([0xff, 0xda]));
      dcOnly[sos + 4 + 1 + 2 * 3 + 1] = 0; // Se: the scan ends at the DC coefficient
      const check = await checkImage(dcOnly);
      expect(check.ok && check.bytes).toBe(dcOnly);
    });
  });

  describe('animated PNGs (APNG): Chromium prints the first frame, or nothing when the animation control chunks are broken', () => {
    const ihdr = png(4, 4).subarray(8, 8 + 25);
    const sig = png(4, 4).subarray(0, 8);
    const image = pngChunk('IDAT', deflateSync(Buffer.alloc(4 * 13)));
    const iend = pngChunk('IEND', Buffer.alloc(0));
    const acTL = (frames: number) => pngChunk('acTL', Buffer.from([0, 0, 0, frames, 0, 0, 0, 0]));
    const fcTL = (width: number, height: number, x = 0, y = 0, size = 26) => {
      const f = Buffer.alloc(size);
      [0, width, height, x, y].forEach((v, i) => 4 * i + 4 <= size && f.writeUInt32BE(v, 4 * i));
      if (size >= 24) f.writeUInt16BE(1, 20);
      return pngChunk('fcTL', f);
    };
    const apng = (...chunks: Buffer[]) => Buffer.concat([sig, ihdr, ...chunks, iend]);

    it.each<[string, Buffer]>([
      ['frames announced, none described (printed blank)', apng(acTL(1), image)],
      ['a first frame bigger than the image (printed as a broken-image icon)', apng(acTL(1), fcTL(100, 100), image)],
      ['a first frame of no pixels', apng(acTL(1), fcTL(0, 0), image)],
      ['a frame control chunk of the wrong size', apng(acTL(1), fcTL(4, 4, 0, 0, 10), image)],
      ['a first frame that is the image data but not all of it', apng(acTL(1), fcTL(2, 2), image)],
      ['a first frame that is the image data, shifted (printed as a broken-image icon)', apng(acTL(1), fcTL(4, 4, 1, 0), image)],
      ['a first frame after the image data reaching outside the image (printed blank)', apng(acTL(1), image, fcTL(4, 4, 2, 2))],
    ])('refuses %s', async (_what, bytes) => {
      expect(await checkImage(bytes)).toMatchObject({ ok: false, code: 'INVALID_IMAGE_DATA', message: expect.stringMatching(/animat/) });
    });

    it.each<[string, Buffer]>([
      ['a well-formed animation', apng(acTL(1), fcTL(4, 4), image)],
      ['a first frame after the image data covering part of the image', apng(acTL(1), image, fcTL(2, 2, 2, 2), pngChunk('fdAT', Buffer.concat([Buffer.from([0, 0, 0, 1]), deflateSync(Buffer.alloc(2 * 7))])))],
      ['more frames announced than described (Chromium prints the first)', apng(acTL(2), fcTL(4, 4), image)],
      ['no frames announced (not an animation)', apng(acTL(0), image)],
      ['an animation control chunk after the image data (ignored)', apng(image, acTL(1))],
      ['an animation control chunk of the wrong size (ignored)', apng(pngChunk('acTL', Buffer.alloc(4)), image)],
      ['a frame control chunk without an animation (ignored)', apng(fcTL(100, 100), image)],
    ])('accepts %s', async (_what, bytes) => {
      expect(await checkImage(bytes)).toMatchObject({ ok: true });
    });
  });

  it('refuses images over 10000 pixels on a side or over 5 MB', async () => {
    expect(await checkImage(png(10_001, 1))).toMatchObject({ ok: false, code: 'IMAGE_TOO_LARGE' });
    expect(await checkImage(png(1, 10_001))).toMatchObject({ ok: false, code: 'IMAGE_TOO_LARGE' });
    expect(await checkImage(Buffer.alloc(MAX_IMAGE_BYTES + 1))).toMatchObject({ ok: false, code: 'IMAGE_TOO_LARGE' });
    // Exactly 5 MB is not over the limit: these bytes are refused for what they are, not their size.
    expect(await checkImage(Buffer.alloc(MAX_IMAGE_BYTES))).toMatchObject({ ok: false, code: 'INVALID_IMAGE_FORMAT' });
    expect((await checkImage(png(10_000, 1))).ok).toBe(true);
  });
});

describe('image options and layout', () => {
  it('defaults to A4, 10 mm margins and contain', async () => {
    const o = parseImageOptions(undefined);
    expect(o.fit).toBe('contain');
    expect(o.pdf.margin.top).toBeCloseTo(10 / 25.4);
    expect(o.pdf.paperWidthIn).toBeCloseTo(8.27, 1);
  });

  it('keeps 10 mm on the sides a margin option leaves out', () => {
    const o = parseImageOptions({ margin: { top: '0mm' } });
    expect(o.pdf.margin.top).toBe(0);
    expect(o.pdf.margin.left).toBeCloseTo(10 / 25.4);
    expect(o.pdf.margin.bottom).toBeCloseTo(10 / 25.4);
  });

  it('refuses an unknown fit', () => {
    expect(() => parseImageOptions({ fit: 'stretch' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', details: expect.objectContaining({ parameter: 'options.fit' }) }));
  });

  it('ignores the options images do not take, and takes null as the defaults', () => {
    expect(parseImageOptions({ scale: 9, pageRanges: 'x', fit: 'fill' }).fit).toBe('fill');
    expect(parseImageOptions(null)).toEqual(parseImageOptions({}));
  });

  it('refuses the page options (margin room included) before fit, naming the parameter', () => {
    const first = (raw: unknown) => refusal(() => parseImageOptions(raw)).details.parameter;
    expect(first({ fit: 'zoom', landscape: 'yes' })).toBe('options.landscape');
    expect(first({ fit: 'zoom', margin: { left: '150mm', right: '150mm' } })).toBe('options.margin');
    expect(first({ fit: 3 })).toBe('options.fit');
    expect(first('A4')).toBe('options');
  });

  it('describes every image option for the OpenAPI document', () => {
    // Named (ImageOptions): the quickjob body references it.
    const json = z.toJSONSchema(imageOptionsSchema, { io: 'input', unrepresentable: 'any' }) as { $ref: string; $defs: Record<string, { properties: Record<string, { description?: string }> }> };
    expect(json.$ref).toBe('#/$defs/ImageOptions');
    const schema = json.$defs.ImageOptions;
    expect(Object.keys(schema.properties)).toEqual(['format', 'margin', 'landscape', 'width', 'height', 'fit']);
    expect(schema.properties.margin.description).toContain('10mm');
    for (const [name, field] of Object.entries(schema.properties)) expect([name, typeof field.description]).toEqual([name, 'string']);
  });

  it('puts one image on each page with the chosen fit', () => {
    const html = imagesToHtml([{ bytes: png(2, 2), type: 'png' }, { bytes: jpeg(), type: 'jpeg' }], parseImageOptions({ fit: 'cover' }));
    expect(html.match(/class="page"/g)).toHaveLength(2);
    expect(html).toContain('object-fit:cover');
    expect(html).toContain('data:image/jpeg;base64,');
  });

  it('turns the page for landscape: the image box is the printable area of the wide page', () => {
    const box = (options: unknown) => /\.page\{[^}]*?width:([\d.]+)in;height:([\d.]+)in/.exec(imagesToHtml([{ bytes: png(2, 2), type: 'png' }], parseImageOptions(options)))!.slice(1).map(Number);
    const [width, height] = box({ landscape: true });
    expect(width).toBeCloseTo((297 - 20) / 25.4, 3);
    expect(height).toBeCloseTo((210 - 20) / 25.4, 1);
    const [portraitWidth] = box({});
    expect(portraitWidth).toBeCloseTo((210 - 20) / 25.4, 3);
  });

  it('keeps each image box inside a printable area of a fraction of a millimetre (one page per image)', () => {
    const box = (options: unknown) => /\.page\{[^}]*?width:([\d.]+)in;height:(-?[\d.]+)in/.exec(imagesToHtml([{ bytes: png(2, 2), type: 'png' }], parseImageOptions(options)))!;
    // 0.1 mm of room: the box is most of it, never a negative height (which CSS drops, letting the image spill).
    const [, , height] = box({ margin: { top: '148mm', bottom: '148.9mm' } });
    expect(Number(height)).toBeGreaterThan(0.08 / 25.4);
    expect(Number(height)).toBeLessThan(0.1 / 25.4);
    const [, width, side] = box({ format: null, width: '0.05mm', height: '0.05mm', margin: { top: 0, right: 0, bottom: 0, left: 0 } });
    expect([Number(width), Number(side)]).toEqual([expect.closeTo(0.05 / 25.4, 6), expect.any(Number)]);
    expect(Number(side)).toBeGreaterThan(0);
  });
});
