/**
 * Decoding of the few streams the engine has to read itself: cross-reference streams and object streams.
 * Page content, fonts and images are never decoded: they are copied byte for byte.
 */
import { inflateSync, constants as zlib } from 'node:zlib';
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream, decodePDFRawStream } from 'pdf-lib';
import type { ReadBudget } from './budget';
import { PdfDeadlineExceeded, PdfProblem } from './errors';

/** Reads a decoder in pieces this size, so the budget is checked while decoding rather than after. */
const DECODE_CHUNK_BYTES = 1024 * 1024;

function tooLarge(budget: ReadBudget): PdfProblem {
  const mb = Math.round(budget.maxDecodedBytes / 1024 / 1024);
  return new PdfProblem('PDF_TOO_COMPLEX', 'structure_too_large', `The structure streams expand beyond ${mb} MB, the most one request may decode (for all its files together).`);
}

type Lookup = (obj: unknown) => unknown;

function num(value: unknown, fallback: number): number {
  return value instanceof PDFNumber ? value.asNumber() : fallback;
}

/** PNG (10–15) and TIFF (2) predictors, as used by cross-reference streams. */
export function unpredict(data: Uint8Array, params: { predictor: number; colors: number; bitsPerComponent: number; columns: number }): Uint8Array {
  const { predictor } = params;
  if (predictor <= 1) return data;
  const bpp = Math.max(1, Math.ceil((params.colors * params.bitsPerComponent) / 8));
  const rowLength = Math.ceil((params.columns * params.colors * params.bitsPerComponent) / 8);
  if (rowLength <= 0) throw new PdfProblem('INVALID_PDF', 'bad_predictor', 'A stream declares an impossible predictor row length.');
  if (predictor === 2) {
    const out = Uint8Array.from(data);
    if (params.bitsPerComponent !== 8) return out;
    for (let row = 0; row + rowLength <= out.length; row += rowLength) {
      for (let i = row + bpp; i < row + rowLength; i++) out[i] = (out[i] + out[i - bpp]) & 0xff;
    }
    return out;
  }
  // PNG: every row starts with its own filter-type byte.
  const rows = Math.floor(data.length / (rowLength + 1));
  // Rows that do not fit are dropped; with none, an absurd /Columns would still size the previous row (1e9: a 1 GB buffer).
  if (rows === 0) return new Uint8Array(0);
  const out = new Uint8Array(rows * rowLength);
  let prev = new Uint8Array(rowLength);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLength + 1)];
    const src = data.subarray(r * (rowLength + 1) + 1, (r + 1) * (rowLength + 1));
    const cur = out.subarray(r * rowLength, (r + 1) * rowLength);
    for (let i = 0; i < rowLength; i++) {
      const left = i >= bpp ? cur[i - bpp] : 0;
      const up = prev[i];
      const upLeft = i >= bpp ? prev[i - bpp] : 0;
      let v: number;
      switch (type) {
        case 0: v = src[i]; break;
        case 1: v = src[i] + left; break;
        case 2: v = src[i] + up; break;
        case 3: v = src[i] + ((left + up) >> 1); break;
        case 4: {
          const p = left + up - upLeft;
          const pa = Math.abs(p - left);
          const pb = Math.abs(p - up);
          const pc = Math.abs(p - upLeft);
          v = src[i] + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
          break;
        }
        default:
          throw new PdfProblem('INVALID_PDF', 'bad_predictor', `A stream uses unknown PNG filter type ${type}.`);
      }
      cur[i] = v & 0xff;
    }
    prev = cur;
  }
  return out;
}

function inflate(data: Uint8Array, budget: ReadBudget): Uint8Array {
  const maxBytes = budget.decodable();
  if (maxBytes <= 0) throw tooLarge(budget);
  try {
    // Z_SYNC_FLUSH tolerates a missing end-of-stream marker, which many writers omit.
    return inflateSync(data, { finishFlush: zlib.Z_SYNC_FLUSH, maxOutputLength: maxBytes });
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(budget);
    throw new PdfProblem('INVALID_PDF', 'bad_stream', 'A compressed structure stream is damaged.');
  }
}

/** pdf-lib's decoders for any other filter chain, pulled a piece at a time so a bomb stops at the budget (or deadline). */
function decodeWithPdfLib(stream: PDFRawStream, budget: ReadBudget): Uint8Array {
  const maxBytes = budget.decodable();
  const decoder = decodePDFRawStream(stream);
  let total = 0;
  for (;;) {
    const piece = decoder.getBytes(DECODE_CHUNK_BYTES).length;
    total += piece;
    if (total > maxBytes) throw tooLarge(budget);
    budget.deadline.check();
    if (piece < DECODE_CHUNK_BYTES) break;
  }
  // Everything is decoded and buffered now; reading from the start again costs no decoding.
  decoder.reset();
  const all = decoder.getBytes(total);
  return new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
}

/**
 * Decodes a structure stream (xref or object stream) within what is left of the request's budget, and charges it
 * there. FlateDecode (with predictors) uses native zlib; other filters and chains use pdf-lib's decoders.
 */
export function decodeStructureStream(stream: PDFRawStream, lookup: Lookup, budget: ReadBudget): Uint8Array {
  budget.deadline.check();
  const data = decodeWithin(stream, lookup, budget);
  budget.spendDecoded(data.length);
  return data;
}

function decodeWithin(stream: PDFRawStream, lookup: Lookup, budget: ReadBudget): Uint8Array {
  const dict = stream.dict;
  const filterObj = lookup(dict.get(PDFName.of('Filter')));
  const parmsObj = lookup(dict.get(PDFName.of('DecodeParms')));
  const filters = filterObj instanceof PDFName ? [filterObj] : filterObj instanceof PDFArray ? filterObj.asArray().map(lookup) : [];
  const parms = parmsObj instanceof PDFDict ? [parmsObj] : parmsObj instanceof PDFArray ? parmsObj.asArray().map(lookup) : [];
  let data: Uint8Array = stream.contents;
  if (filters.length === 0) {
    if (data.length > budget.decodable()) throw tooLarge(budget);
    return data;
  }
  if (filters.length === 1 && filters[0] === PDFName.of('FlateDecode')) {
    data = inflate(data, budget);
    const p = parms[0];
    if (p instanceof PDFDict) {
      const predictor = num(lookup(p.get(PDFName.of('Predictor'))), 1);
      if (predictor > 1) {
        data = unpredict(data, {
          predictor,
          colors: num(lookup(p.get(PDFName.of('Colors'))), 1),
          bitsPerComponent: num(lookup(p.get(PDFName.of('BitsPerComponent'))), 8),
          columns: num(lookup(p.get(PDFName.of('Columns'))), 1),
        });
      }
    }
    return data;
  }
  try {
    return decodeWithPdfLib(stream, budget);
  } catch (err) {
    if (err instanceof PdfProblem || err instanceof PdfDeadlineExceeded) throw err;
    throw new PdfProblem('INVALID_PDF', 'bad_stream', 'A structure stream uses an unsupported or damaged encoding.');
  }
}
