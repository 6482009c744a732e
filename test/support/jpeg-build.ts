/**
 * Baseline JPEGs built byte by byte: every 8×8 block of every component is one flat value (DC only, quantised by 1),
 * so the encoder is a few lines and the decoded pixels are exactly the values given. For pictures with a known
 * layout (a dark top half, a cyan square) and for the colour models Chromium treats specially (CMYK, YCCK).
 */

const marker = (code: number, data: Buffer): Buffer => {
  const head = Buffer.from([0xff, code, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
};

/** An APPn segment (n 0–15) holding `data`. */
export const jpegApp = (n: number, data: Buffer): Buffer => marker(0xe0 + n, data);

/** The Adobe APP14 segment: transform 0 (CMYK, or RGB with 3 components), 1 (YCbCr) or 2 (YCCK). */
export const adobeApp14 = (transform: 0 | 1 | 2): Buffer => jpegApp(14, Buffer.concat([Buffer.from('Adobe'), Buffer.from([0, 100, 0, 0, 0, 0, transform])]));

/** An EXIF APP1 segment saying only the orientation (1–8), big-endian TIFF. */
export function exifOrientation(orientation: number): Buffer {
  const tiff = Buffer.alloc(8 + 2 + 12 + 4);
  tiff.write('MM', 0, 'latin1');
  tiff.writeUInt16BE(42, 2);
  tiff.writeUInt32BE(8, 4);
  tiff.writeUInt16BE(1, 8); // one entry
  tiff.writeUInt16BE(0x0112, 10); // Orientation
  tiff.writeUInt16BE(3, 12); // SHORT
  tiff.writeUInt32BE(1, 14);
  tiff.writeUInt16BE(orientation, 18);
  return jpegApp(1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]));
}

/**
 * A baseline JPEG of `blocksWide`×`blocksHigh` 8×8 blocks, `components` components (1 grey, 3 YCbCr or RGB, 4 CMYK
 * or YCCK) at full resolution; `sample(component, bx, by)` is the value (0–255) of a whole block. `segments` (APPn
 * and the like) go after SOI.
 */
export function flatJpeg(blocksWide: number, blocksHigh: number, components: number, sample: (c: number, bx: number, by: number) => number, segments: Buffer[] = []): Buffer {
  const dqt = marker(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)]));
  const sof = Buffer.alloc(6 + 3 * components);
  sof[0] = 8;
  sof.writeUInt16BE(blocksHigh * 8, 1);
  sof.writeUInt16BE(blocksWide * 8, 3);
  sof[5] = components;
  for (let c = 0; c < components; c++) sof.set([c + 1, 0x11, 0], 6 + 3 * c);
  // DC table 0: categories 0–11, each a 4-bit code (0000…1011). AC table 0: only EOB, code "0".
  const dcCounts = Buffer.alloc(16);
  dcCounts[3] = 12;
  const dht = marker(0xc4, Buffer.concat([Buffer.from([0x00]), dcCounts, Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])]));
  const acCounts = Buffer.alloc(16);
  acCounts[0] = 1;
  const dhtAc = marker(0xc4, Buffer.concat([Buffer.from([0x10]), acCounts, Buffer.from([0x00])]));
  const sos = Buffer.alloc(1 + 2 * components + 3);
  sos[0] = components;
  for (let c = 0; c < components; c++) sos.set([c + 1, 0x00], 1 + 2 * c);
  sos.set([0, 63, 0], 1 + 2 * components);

  const bits: number[] = [];
  const put = (value: number, length: number) => {
    for (let i = length - 1; i >= 0; i--) bits.push((value >> i) & 1);
  };
  const previous = new Array<number>(components).fill(0);
  for (let by = 0; by < blocksHigh; by++) {
    for (let bx = 0; bx < blocksWide; bx++) {
      for (let c = 0; c < components; c++) {
        // A flat block of value v has DC coefficient 8 × (v − 128).
        const dc = 8 * (sample(c, bx, by) - 128);
        const diff = dc - previous[c];
        previous[c] = dc;
        const category = diff === 0 ? 0 : Math.floor(Math.log2(Math.abs(diff))) + 1;
        put(category, 4);
        if (category) put(diff > 0 ? diff : diff + (1 << category) - 1, category);
        put(0, 1); // EOB
      }
    }
  }
  while (bits.length % 8) bits.push(1);
  const entropy: number[] = [];
  for (let i = 0; i < bits.length; i += 8) {
    const byte = parseInt(bits.slice(i, i + 8).join(''), 2);
    entropy.push(byte);
    if (byte === 0xff) entropy.push(0);
  }
  return Buffer.concat([Buffer.from([0xff, 0xd8]), ...segments, dqt, marker(0xc0, sof), dht, dhtAc, marker(0xda, sos), Buffer.from(entropy), Buffer.from([0xff, 0xd9])]);
}
