/**
 * Validation of merge, split and background-job requests, in the order a client can act on: file counts,
 * decoding, sizes, page ranges, split settings, options. Bodies arrive either as JSON or already taken
 * apart from multipart form data (functions/http/pdf/inputs.ts); both end up here.
 */
import { ServiceError, invalidParameter } from '../errors';
import { type FilenamePattern, parseFilenamePattern, sanitizeFilename } from '../pdf/filenames';
import type { PdfToolLimits } from '../pdf/limits';
import type { MergeSpec, PdfInputFile, SplitMode, SplitSpec } from '../pdf/operations';
import { type ParsedRange, parsePageRange } from '../pdf/page-ranges';

export const SPLIT_MODES = ['extract', 'ranges', 'every_n', 'each_page'] as const;

/** One input as the transport delivered it: bytes (multipart) or a base64 string (JSON). */
export type RawInput =
  | { kind: 'bytes'; data: Uint8Array; filename: string | null; pages?: unknown }
  | { kind: 'base64'; value: unknown; filename: unknown; pages?: unknown };

export interface MergeRequest extends MergeSpec {
  store: boolean;
}

export interface SplitRequest extends SplitSpec {
  store: boolean;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const MB = 1024 * 1024;

function tooLarge(size: number, limits: PdfToolLimits, extra: Record<string, unknown> = {}): ServiceError {
  const hint = limits.kind === 'instant' ? ' Upload larger files with POST /pdf/upload-url and process them with POST /pdf/jobs (up to 150 MB).' : '';
  return new ServiceError('PDF_INPUT_TOO_LARGE', `The PDF input is ${(size / MB).toFixed(1)} MB; the limit is ${limits.maxInputBytes / MB} MB.${hint}`, {
    ...extra,
    size_bytes: size,
    max_bytes: limits.maxInputBytes,
  });
}

/** `input-3.pdf`-style fallback names are 1-based like the `{index}` token. */
export function inputFilename(raw: unknown, index: number, parameter: string): string {
  if (raw === undefined || raw === null || raw === '') return `input-${index + 1}.pdf`;
  if (typeof raw !== 'string') throw invalidParameter(parameter, `${parameter} must be a string.`, { input_index: index });
  return sanitizeFilename(raw, `input-${index + 1}.pdf`);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Decodes `pdf_base64` (a `data:` URL prefix and line breaks are accepted). */
export function decodeBase64Pdf(value: unknown, index: number, filename: string, parameter: string): Uint8Array {
  if (value === undefined || value === null || value === '') {
    throw new ServiceError('MISSING_PDF', `${parameter} is missing: send the PDF as base64.`, { filename, input_index: index, parameter });
  }
  if (typeof value !== 'string') throw invalidParameter(parameter, `${parameter} must be a base64 string.`, { filename, input_index: index });
  const text = value.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
  if (text.length % 4 === 1 || !(BASE64.test(text) || BASE64URL.test(text))) {
    throw new ServiceError('INVALID_BASE64', `${parameter} is not valid base64.`, { filename, input_index: index, parameter });
  }
  const bytes = Buffer.from(text, BASE64.test(text) ? 'base64' : 'base64url');
  if (bytes.length === 0) throw new ServiceError('MISSING_PDF', `${parameter} is empty.`, { filename, input_index: index, parameter });
  return bytes;
}

function materialise(raw: RawInput, index: number, parameter: string): PdfInputFile {
  if (raw.kind === 'bytes') {
    const filename = inputFilename(raw.filename, index, `${parameter}.filename`);
    if (raw.data.length === 0) throw new ServiceError('MISSING_PDF', `${filename} is empty.`, { filename, input_index: index });
    return { bytes: raw.data, filename, index };
  }
  const filename = inputFilename(raw.filename, index, `${parameter}.filename`);
  return { bytes: decodeBase64Pdf(raw.value, index, filename, `${parameter}.pdf_base64`), filename, index };
}

/** A page range value: a string, or null/absent for all pages. */
export function optionalRange(value: unknown, parameter: string, context: Record<string, unknown>): ParsedRange | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidParameter(parameter, `${parameter} must be a page range string such as "1-3,8-end", or null for all pages.`, context);
  return parsePageRange(value, { ...context, parameter });
}

export function parseStoreFlag(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw invalidParameter('store', 'store must be true or false.');
}

function optionsObject(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalidParameter('options', 'options must be an object.');
  return value;
}

function optionalString(value: unknown, parameter: string, max: number): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw invalidParameter(parameter, `${parameter} must be a string.`);
  if (value.length > max) throw invalidParameter(parameter, `${parameter} may be at most ${max} characters.`);
  return value;
}

export function parseMergeOptions(value: unknown): { outputFilename: string | null; title: string | null } {
  const o = optionsObject(value);
  return { outputFilename: optionalString(o.output_filename, 'options.output_filename', 200), title: optionalString(o.title, 'options.title', 1000) };
}

export function parseSplitOptions(value: unknown): FilenamePattern {
  return parseFilenamePattern(optionsObject(value).filename_pattern);
}

/** MISSING_PDFS below the minimum, TOO_MANY_FILES above the maximum. */
export function checkMergeCount(count: number, limits: PdfToolLimits): void {
  if (count < limits.minMergeFiles) {
    throw new ServiceError('MISSING_PDFS', `A merge needs at least ${limits.minMergeFiles} PDFs; this request has ${count}.`, { file_count: count, min_files: limits.minMergeFiles });
  }
  if (count > limits.maxMergeFiles) {
    const hint = limits.kind === 'instant' ? ' Use POST /pdf/jobs for up to 100.' : '';
    throw new ServiceError('TOO_MANY_FILES', `A merge takes at most ${limits.maxMergeFiles} PDFs; this request has ${count}.${hint}`, { file_count: count, max_files: limits.maxMergeFiles });
  }
}

/** The instant merge request (multipart or JSON, already reduced to raw inputs). */
export function parseMergeRequest(raw: { inputs: RawInput[]; options: unknown; store: unknown }, limits: PdfToolLimits): MergeRequest {
  checkMergeCount(raw.inputs.length, limits);
  const files = raw.inputs.map((input, i) => materialise(input, i, `inputs[${i}]`));
  const total = files.reduce((n, f) => n + f.bytes.length, 0);
  if (total > limits.maxInputBytes) throw tooLarge(total, limits, { file_count: files.length });
  const inputs = files.map((file, i) => ({ ...file, pages: optionalRange(raw.inputs[i].pages, `inputs[${i}].pages`, { filename: file.filename, input_index: i }) }));
  const options = parseMergeOptions(raw.options);
  return { inputs, ...options, store: parseStoreFlag(raw.store) };
}

/** `split` object of /pdf/split and /pdf/jobs. */
export function parseSplitMode(value: unknown, context: Record<string, unknown> = {}): SplitMode {
  const mode = isObject(value) ? value.mode : undefined;
  if (!isObject(value) || typeof mode !== 'string' || !(SPLIT_MODES as readonly string[]).includes(mode)) {
    throw new ServiceError(
      'INVALID_SPLIT_MODE',
      mode === undefined ? `split.mode is required: one of ${SPLIT_MODES.join(', ')}.` : `split.mode "${String(mode)}" is not known; use one of ${SPLIT_MODES.join(', ')}.`,
      { ...context, mode: mode ?? null, supported: SPLIT_MODES },
    );
  }
  switch (mode) {
    case 'extract': {
      if (typeof value.pages !== 'string') throw invalidParameter('split.pages', 'Mode "extract" needs split.pages, a page range such as "1-3,8-end".', context);
      return { mode, pages: parsePageRange(value.pages, { ...context, parameter: 'split.pages' }) };
    }
    case 'ranges': {
      const ranges = value.ranges;
      if (!Array.isArray(ranges) || ranges.length === 0 || ranges.some((r) => typeof r !== 'string')) {
        throw invalidParameter('split.ranges', 'Mode "ranges" needs split.ranges, a non-empty array of page ranges such as ["1-3", "4-end"].', context);
      }
      return { mode, ranges: ranges.map((r, i) => parsePageRange(r as string, { ...context, parameter: `split.ranges[${i}]` })) };
    }
    case 'every_n': {
      const n = value.every_n;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw invalidParameter('split.every_n', 'Mode "every_n" needs split.every_n, a whole number of at least 1.', context);
      return { mode, every_n: n };
    }
    default:
      return { mode: 'each_page' };
  }
}

/** The instant split request. */
export function parseSplitRequest(raw: { input: RawInput | null; extraFiles?: number; split: unknown; options: unknown; store: unknown }, limits: PdfToolLimits): SplitRequest {
  if (!raw.input) throw new ServiceError('MISSING_PDF', 'No PDF in the request: send the file to split (multipart field "file", or JSON input.pdf_base64).');
  if (raw.extraFiles) throw new ServiceError('TOO_MANY_FILES', 'A split takes exactly one PDF.', { file_count: raw.extraFiles + 1, max_files: 1 });
  const input = materialise(raw.input, 0, 'input');
  if (input.bytes.length > limits.maxInputBytes) throw tooLarge(input.bytes.length, limits, { filename: input.filename, input_index: 0 });
  const split = parseSplitMode(raw.split, { filename: input.filename, input_index: 0 });
  return { input, split, pattern: parseSplitOptions(raw.options), store: parseStoreFlag(raw.store) };
}

// ---- background jobs ------------------------------------------------------------------------------

export interface JobInput {
  s3_key: string;
  filename: string;
  /** Merge only: the page range as sent (validated), or null. */
  pages: string | null;
}

export interface PdfJobRequest {
  operation: 'merge' | 'split';
  inputs: JobInput[];
  /** Split only, as sent (validated). */
  split: Record<string, unknown> | null;
  options: Record<string, unknown>;
}

/** POST /pdf/jobs body. Page ranges and split settings are checked now; page numbers once the files are read. */
export function parsePdfJobRequest(body: unknown, limits: PdfToolLimits): PdfJobRequest {
  if (!isObject(body)) throw invalidParameter('body', 'The request body must be a JSON object.');
  const operation = body.operation;
  if (operation !== 'merge' && operation !== 'split') throw invalidParameter('operation', 'operation is required: "merge" or "split".', { operation: operation ?? null });
  const rawInputs = body.inputs;
  if (rawInputs !== undefined && !Array.isArray(rawInputs)) throw invalidParameter('inputs', 'inputs must be an array of {s3_key, filename, pages}.');
  const list = (rawInputs ?? []) as unknown[];
  if (operation === 'merge') checkMergeCount(list.length, limits);
  else {
    if (list.length === 0) throw new ServiceError('MISSING_PDF', 'A split job needs exactly one input {s3_key, filename}.');
    if (list.length > 1) throw new ServiceError('TOO_MANY_FILES', 'A split job takes exactly one input.', { file_count: list.length, max_files: 1 });
  }
  const inputs = list.map((item, i): JobInput => {
    if (!isObject(item)) throw invalidParameter(`inputs[${i}]`, `inputs[${i}] must be an object {s3_key, filename, pages}.`, { input_index: i });
    const filename = inputFilename(item.filename, i, `inputs[${i}].filename`);
    if (typeof item.s3_key !== 'string' || item.s3_key === '') {
      throw invalidParameter(`inputs[${i}].s3_key`, `inputs[${i}].s3_key is required: the s3_key returned by POST /pdf/upload-url.`, { filename, input_index: i });
    }
    if (operation === 'split' && item.pages !== undefined && item.pages !== null) {
      throw invalidParameter(`inputs[${i}].pages`, 'pages applies to merge inputs; for a split, choose pages with split.mode "extract" and split.pages.', { filename, input_index: i });
    }
    const range = operation === 'merge' ? optionalRange(item.pages, `inputs[${i}].pages`, { filename, input_index: i }) : null;
    return { s3_key: item.s3_key, filename, pages: range ? range.text : null };
  });
  let split: Record<string, unknown> | null = null;
  const options = optionsObject(body.options);
  if (operation === 'split') {
    parseSplitMode(body.split, { filename: inputs[0].filename, input_index: 0 });
    split = body.split as Record<string, unknown>;
    parseSplitOptions(options);
  } else {
    parseMergeOptions(options);
  }
  return { operation, inputs, split, options };
}
