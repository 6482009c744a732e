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

/**
 * The standard Huffman tables of T.81 Annex K.3 (K.3.3.1, K.3.3.2) as a DHT carries them: per code length 1–16 the
 * number of codes, then the symbols in code order. This copy is the test's own, kept apart from the service's.
 */
export const STANDARD_TABLES = {
  dc0: { counts: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], symbols: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
  dc1: { counts: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], symbols: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
  ac0: {
    counts: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
    symbols: [
      0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
      0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
      0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
      0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
      0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
      0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
      0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
      0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
      0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
      0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
      0xf9, 0xfa,
    ],
  },
  ac1: {
    counts: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
    symbols: [
      0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
      0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0,
      0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
      0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
      0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
      0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
      0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
      0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3,
      0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
      0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
      0xf9, 0xfa,
    ],
  },
};
export type TableName = keyof typeof STANDARD_TABLES;

/** Each symbol's code as a string of bits, assigned from the counts as T.81 Annex C does (shortest first, in order). */
export function huffmanCodes({ counts, symbols }: { counts: number[]; symbols: number[] }): Map<number, string> {
  const codes = new Map<number, string>();
  let code = 0;
  let k = 0;
  counts.forEach((count, index) => {
    for (let i = 0; i < count; i++) codes.set(symbols[k++], (code++).toString(2).padStart(index + 1, '0'));
    code <<= 1;
  });
  return codes;
}

/** A DHT segment per table (class and id from its name: dc0 is 0x00, ac1 is 0x11). */
export const dhtSegment = (name: TableName): Buffer => {
  const { counts, symbols } = STANDARD_TABLES[name];
  const classAndId = (name.startsWith('ac') ? 0x10 : 0) | Number(name[2]);
  return marker(0xc4, Buffer.from([classAndId, ...counts, ...symbols]));
};

/**
 * The quantised coefficients of a test picture's blocks, zig-zag order (DC first), chosen so that together they use
 * every symbol of the standard tables: each DC difference category 0–11, and every AC run (0–15) and size (1–10),
 * the 16-zero run (ZRL) and end-of-block (EOB). Pixels saturate here and there, which decoders clamp alike.
 */
export function everySymbolBlocks(count: number): number[][] {
  const blocks = Array.from({ length: count }, () => new Array<number>(64).fill(0));
  // DC values whose successive differences fall in every category, negative and positive.
  const dcs = [0, 1, -1, 2, -3, 5, -10, 10, -20, 20, -50, 50, -120, 120, -250, 250, -600, 400, -700, 1000, 0];
  blocks.forEach((b, i) => (b[0] = dcs[i % dcs.length]));
  // The AC pairs (run, size), packed into blocks in order; a run past what a block has left moves to the next block.
  const pairs: [number, number][] = [];
  for (let size = 1; size <= 10; size++) for (let run = 0; run <= 15; run++) pairs.push([run, size]);
  pairs.push([20, 3]); // a run of 20 zeros: ZRL, then run 4
  let block = 0;
  let at = 1;
  for (const [index, [run, size]] of pairs.entries()) {
    if (at + run > 63) [block, at] = [block + 1, 1];
    const magnitude = (1 << (size - 1)) + (index % (1 << (size - 1)));
    blocks[block][at + run] = index % 2 ? -magnitude : magnitude;
    at += run + 1;
  }
  if (block + 1 >= count) throw new Error(`everySymbolBlocks needs more than ${count} blocks`);
  return blocks;
}

/**
 * A baseline JPEG coded with the standard Huffman tables, like libjpeg's output without optimised tables, or a
 * Motion-JPEG frame: `blocksWide`×`blocksHigh` 8×8 blocks of 1 (grey) or 3 (YCbCr) full-resolution components,
 * quantisation 1, each block's coefficients from `coefficients(component, blockIndex)` (zig-zag order). The first
 * component uses tables 0 (luminance), the others tables 1 (chrominance); `tables` lists the DHT segments written
 * (all four by default; none is a Motion-JPEG frame, which relies on the decoder knowing them).
 */
export function standardTablesJpeg(
  blocksWide: number,
  blocksHigh: number,
  components: 1 | 3,
  coefficients: (component: number, block: number) => number[],
  tables: TableName[] = ['dc0', 'ac0', 'dc1', 'ac1'],
): Buffer {
  const dqt = marker(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)]));
  const sof = Buffer.alloc(6 + 3 * components);
  sof[0] = 8;
  sof.writeUInt16BE(blocksHigh * 8, 1);
  sof.writeUInt16BE(blocksWide * 8, 3);
  sof[5] = components;
  for (let c = 0; c < components; c++) sof.set([c + 1, 0x11, 0], 6 + 3 * c);
  const sos = Buffer.alloc(1 + 2 * components + 3);
  sos[0] = components;
  for (let c = 0; c < components; c++) sos.set([c + 1, c === 0 ? 0x00 : 0x11], 1 + 2 * c);
  sos.set([0, 63, 0], 1 + 2 * components);

  const codes = { dc0: huffmanCodes(STANDARD_TABLES.dc0), ac0: huffmanCodes(STANDARD_TABLES.ac0), dc1: huffmanCodes(STANDARD_TABLES.dc1), ac1: huffmanCodes(STANDARD_TABLES.ac1) };
  let bits = '';
  /** A value's category (bit count) and its bits: negative values as one less than their two's complement (F.1.2.1). */
  const category = (value: number) => (value === 0 ? 0 : Math.floor(Math.log2(Math.abs(value))) + 1);
  const valueBits = (value: number, size: number) => (size === 0 ? '' : (value > 0 ? value : value + (1 << size) - 1).toString(2).padStart(size, '0'));
  const previous = new Array<number>(components).fill(0);
  for (let block = 0; block < blocksWide * blocksHigh; block++) {
    for (let c = 0; c < components; c++) {
      const [dcCodes, acCodes] = c === 0 ? [codes.dc0, codes.ac0] : [codes.dc1, codes.ac1];
      const zz = coefficients(c, block);
      const diff = zz[0] - previous[c];
      previous[c] = zz[0];
      bits += dcCodes.get(category(diff))! + valueBits(diff, category(diff));
      let run = 0;
      for (let k = 1; k < 64; k++) {
        if (zz[k] === 0) {
          run++;
          continue;
        }
        for (; run > 15; run -= 16) bits += acCodes.get(0xf0)!;
        const size = category(zz[k]);
        bits += acCodes.get((run << 4) | size)! + valueBits(zz[k], size);
        run = 0;
      }
      if (run > 0) bits += acCodes.get(0x00)!;
    }
  }
  bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1');
  const entropy: number[] = [];
  for (let i = 0; i < bits.length; i += 8) {
    const byte = parseInt(bits.slice(i, i + 8), 2);
    entropy.push(byte);
    if (byte === 0xff) entropy.push(0);
  }
  return Buffer.concat([Buffer.from([0xff, 0xd8]), dqt, marker(0xc0, sof), ...tables.map(dhtSegment), marker(0xda, sos), Buffer.from(entropy), Buffer.from([0xff, 0xd9])]);
}
