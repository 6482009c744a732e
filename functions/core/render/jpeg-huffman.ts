/**
 * The standard Huffman tables of JPEG (ITU T.81 Annex K.3, K.3.3.1 and K.3.3.2), each as a DHT segment carries it:
 * its class and id (DC 0x00/0x01, AC 0x10/0x11), the number of codes of each length 1–16, then the symbols in code
 * order. Motion-JPEG frames leave them out (and so do some cameras): decoders that know them, as Chromium's does,
 * assume them for tables 0 (luminance) and 1 (chrominance); decoders that do not, as pdf.js's, cannot read the image.
 */
const STANDARD_TABLES = new Map<number, string>([
  [0x00, '00 01 05 01 01 01 01 01 01 00 00 00 00 00 00 00 00 01 02 03 04 05 06 07 08 09 0a 0b'],
  [0x01, '00 03 01 01 01 01 01 01 01 01 01 00 00 00 00 00 00 01 02 03 04 05 06 07 08 09 0a 0b'],
  [
    0x10,
    `00 02 01 03 03 02 04 03 05 05 04 04 00 00 01 7d
     01 02 03 00 04 11 05 12 21 31 41 06 13 51 61 07 22 71 14 32 81 91 a1 08 23 42 b1 c1 15 52 d1 f0
     24 33 62 72 82 09 0a 16 17 18 19 1a 25 26 27 28 29 2a 34 35 36 37 38 39 3a 43 44 45 46 47 48 49
     4a 53 54 55 56 57 58 59 5a 63 64 65 66 67 68 69 6a 73 74 75 76 77 78 79 7a 83 84 85 86 87 88 89
     8a 92 93 94 95 96 97 98 99 9a a2 a3 a4 a5 a6 a7 a8 a9 aa b2 b3 b4 b5 b6 b7 b8 b9 ba c2 c3 c4 c5
     c6 c7 c8 c9 ca d2 d3 d4 d5 d6 d7 d8 d9 da e1 e2 e3 e4 e5 e6 e7 e8 e9 ea f1 f2 f3 f4 f5 f6 f7 f8
     f9 fa`,
  ],
  [
    0x11,
    `00 02 01 02 04 04 03 04 07 05 04 04 00 01 02 77
     00 01 02 03 11 04 05 21 31 06 12 41 51 07 61 71 13 22 32 81 08 14 42 91 a1 b1 c1 09 23 33 52 f0
     15 62 72 d1 0a 16 24 34 e1 25 f1 17 18 19 1a 26 27 28 29 2a 35 36 37 38 39 3a 43 44 45 46 47 48
     49 4a 53 54 55 56 57 58 59 5a 63 64 65 66 67 68 69 6a 73 74 75 76 77 78 79 7a 82 83 84 85 86 87
     88 89 8a 92 93 94 95 96 97 98 99 9a a2 a3 a4 a5 a6 a7 a8 a9 aa b2 b3 b4 b5 b6 b7 b8 b9 ba c2 c3
     c4 c5 c6 c7 c8 c9 ca d2 d3 d4 d5 d6 d7 d8 d9 da e2 e3 e4 e5 e6 e7 e8 e9 ea f2 f3 f4 f5 f6 f7 f8
     f9 fa`,
  ],
]);

/** Whether a Huffman table (class × 16 + id, as DHT and this module name it) is one of the four standard ones. */
export const isStandardHuffmanTable = (table: number): boolean => STANDARD_TABLES.has(table);

/** One DHT segment defining the given standard tables (0x00, 0x01, 0x10, 0x11), in that order. */
export function standardHuffmanSegment(tables: number[]): Buffer {
  const data = Buffer.concat(tables.map((table) => Buffer.from([table, ...Buffer.from(STANDARD_TABLES.get(table)!.replace(/\s+/g, ''), 'hex')])));
  const head = Buffer.from([0xff, 0xc4, 0, 0]);
  head.writeUInt16BE(2 + data.length, 2);
  return Buffer.concat([head, data]);
}
