/**
 * `POST /bulkjob` request shapes: JSON with exactly one of `s3_key`, `zip_base64`, `files`; or multipart with
 * repeated `files` parts and an optional `paths` JSON array. Refusals: INVALID_BUNDLE_TYPE, INVALID_BULK_INPUT,
 * INVALID_BULK_PATH, INVALID_BULK_PATHS, INVALID_BASE64, INVALID_OPTIONS_JSON, INVALID_PARAMETER (options),
 * 413 BULK_INLINE_TOO_LARGE. Plan, credits, uploads and slots are checked by the submission.
 */
import { parseTextOptions } from '../conversion/request';
import { ServiceError, invalidParameter } from '../errors';
import type { PdfOptions } from '../render/options';
import { BULK_LIMITS, BUNDLE_TYPES, type BundleType } from './limits';
import { requestPath } from './paths';

export type BulkInput = { kind: 's3'; key: string } | { kind: 'zip'; bytes: Buffer } | { kind: 'files'; files: { path: string; bytes: Buffer }[] };

export interface BulkRequest {
  bundle_type: BundleType;
  options: PdfOptions;
  input: BulkInput;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const present = (v: unknown) => v !== undefined && v !== null;

function inlineTooLarge(bytes: number): ServiceError {
  return new ServiceError(
    'BULK_INLINE_TOO_LARGE',
    `Inline files may total ${BULK_LIMITS.inlineBytes} bytes (4 MB) decoded; this request has more. Upload the ZIP with POST /bulkjob/upload-url and send its s3_key.`,
    { max_bytes: BULK_LIMITS.inlineBytes, ...(bytes > 0 ? { size_bytes: bytes } : {}) },
  );
}

export function parseBundleType(value: unknown): BundleType {
  if (value === undefined || value === null || value === '') return 'html';
  if (typeof value !== 'string' || !(BUNDLE_TYPES as readonly string[]).includes(value)) {
    throw new ServiceError('INVALID_BUNDLE_TYPE', 'bundle_type must be "html" (converts .html and .htm files) or "markdown" (.md and .markdown).', {
      bundle_type: typeof value === 'string' ? value.slice(0, 100) : value === undefined ? null : typeof value,
      allowed: BUNDLE_TYPES,
    });
  }
  return value as BundleType;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Decoded size of a base64 text without decoding it (for the 4 MB check before any allocation). */
function decodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

/** Base64 (standard or URL-safe; a `data:…;base64,` prefix and line breaks are accepted) → bytes. */
function decodeBase64(value: unknown, parameter: string, budget: number): Buffer {
  if (typeof value !== 'string') throw new ServiceError('INVALID_BASE64', `${parameter} must be a base64 string.`, { parameter });
  const text = value.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
  if (text.length % 4 === 1 || !(BASE64.test(text) || BASE64URL.test(text))) throw new ServiceError('INVALID_BASE64', `${parameter} is not valid base64.`, { parameter });
  if (decodedLength(text) > budget) throw inlineTooLarge(decodedLength(text));
  return Buffer.from(text, BASE64.test(text) ? 'base64' : 'base64url');
}

function checkUnique(files: { path: string }[], parameter: (i: number) => string) {
  const seen = new Map<string, number>();
  files.forEach((f, i) => {
    const first = seen.get(f.path);
    if (first !== undefined) {
      throw new ServiceError('INVALID_BULK_PATH', `${parameter(i)} "${f.path}" is the same path as ${parameter(first)}; every file needs its own path.`, {
        parameter: parameter(i),
        path: f.path,
        reason: 'duplicate',
      });
    }
    seen.set(f.path, i);
  });
}

function noInput(count: number): ServiceError {
  return new ServiceError(
    'INVALID_BULK_INPUT',
    count === 0
      ? 'Send the bundle as exactly one of: s3_key (from POST /bulkjob/upload-url), zip_base64, or files ([{path, content_base64}]); or as multipart "files" parts.'
      : 'Send exactly one of s3_key, zip_base64 or files, not several.',
    { inputs_sent: count, allowed: ['s3_key', 'zip_base64', 'files'] },
  );
}

/** The JSON body of POST /bulkjob. */
export function parseBulkJson(body: unknown): BulkRequest {
  if (!isObject(body)) throw invalidParameter('body', 'The request body must be a JSON object with bundle_type and one of s3_key, zip_base64 or files.');
  const bundle_type = parseBundleType(body.bundle_type);
  const sent = (['s3_key', 'zip_base64', 'files'] as const).filter((k) => present(body[k]) && !(k === 'files' && Array.isArray(body[k]) && (body[k] as unknown[]).length === 0));
  if (sent.length !== 1) throw noInput(sent.length);
  const options = parseTextOptions(bundle_type, body.options);

  if (sent[0] === 's3_key') {
    if (typeof body.s3_key !== 'string' || body.s3_key === '') throw invalidParameter('s3_key', 's3_key must be the string returned by POST /bulkjob/upload-url.');
    return { bundle_type, options, input: { kind: 's3', key: body.s3_key } };
  }
  if (sent[0] === 'zip_base64') {
    return { bundle_type, options, input: { kind: 'zip', bytes: decodeBase64(body.zip_base64, 'zip_base64', BULK_LIMITS.inlineBytes) } };
  }
  if (!Array.isArray(body.files)) throw invalidParameter('files', 'files must be an array of {path, content_base64}.');
  let budget = BULK_LIMITS.inlineBytes;
  const files = body.files.map((item, i) => {
    if (!isObject(item)) throw invalidParameter(`files[${i}]`, `files[${i}] must be an object {path, content_base64}.`, { file_index: i });
    const path = requestPath(item.path, `files[${i}].path`);
    if (item.content_base64 === undefined || item.content_base64 === null) {
      throw invalidParameter(`files[${i}].content_base64`, `files[${i}].content_base64 is missing: send the file's bytes as base64 ("" for an empty file).`, { file_index: i });
    }
    const bytes = decodeBase64(item.content_base64, `files[${i}].content_base64`, budget);
    budget -= bytes.length;
    return { path, bytes };
  });
  checkUnique(files, (i) => `files[${i}].path`);
  return { bundle_type, options, input: { kind: 'files', files } };
}

export interface BulkFormParts {
  bundleType?: string;
  options?: string;
  paths?: string;
  files: { filename: string | null; data: Buffer }[];
  /** Other input fields sent in the form (s3_key, zip_base64): multipart carries files only. */
  otherInputs: string[];
}

/** The multipart variant: `files` parts in order, `paths` (a JSON array, one per file) or each file's own name. */
export function parseBulkForm(form: BulkFormParts): BulkRequest {
  const bundle_type = parseBundleType(form.bundleType);
  const count = (form.files.length > 0 ? 1 : 0) + form.otherInputs.length;
  if (count !== 1 || form.files.length === 0) throw noInput(count);
  let rawOptions: unknown;
  if (form.options !== undefined && form.options.trim() !== '') {
    try {
      rawOptions = JSON.parse(form.options);
    } catch {
      throw new ServiceError('INVALID_OPTIONS_JSON', 'The options field is not valid JSON; send a JSON object such as {"format":"Letter"}.', { parameter: 'options' });
    }
  }
  const options = parseTextOptions(bundle_type, rawOptions);
  let paths: string[];
  if (form.paths !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(form.paths);
    } catch {
      parsed = undefined;
    }
    if (!Array.isArray(parsed) || parsed.length !== form.files.length) {
      throw new ServiceError('INVALID_BULK_PATHS', `paths must be a JSON array with one path per file, in the order of the files parts (${form.files.length} here).`, {
        files: form.files.length,
        paths: Array.isArray(parsed) ? parsed.length : null,
      });
    }
    paths = parsed.map((p, i) => requestPath(p, `paths[${i}]`));
  } else {
    // Without paths, each file keeps only its own name, at the top level.
    paths = form.files.map((f, i) => requestPath((f.filename ?? '').split(/[\\/]/).pop() ?? '', `files[${i}] file name`));
  }
  const files = form.files.map((f, i) => ({ path: paths[i], bytes: f.data }));
  checkUnique(files, (i) => (form.paths !== undefined ? `paths[${i}]` : `files[${i}] file name`));
  return { bundle_type, options, input: { kind: 'files', files } };
}

/** POST /bulkjob/upload-url body: the exact size of the ZIP; over the plan's max_bulk_zip_mb is 400 BULK_ZIP_TOO_LARGE. */
export function parseBulkUploadSize(body: unknown, maxBytes: number): number {
  const size = isObject(body) ? body.content_length_bytes : undefined;
  if (size === undefined || size === null) throw invalidParameter('content_length_bytes', 'content_length_bytes is required: the exact size of the ZIP in bytes.');
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1) throw invalidParameter('content_length_bytes', 'content_length_bytes must be a whole number of bytes, at least 1.');
  if (size > maxBytes) throw zipTooLarge(size, maxBytes);
  return size;
}

export function zipTooLarge(size: number, maxBytes: number): ServiceError {
  return new ServiceError('BULK_ZIP_TOO_LARGE', `The ZIP is ${size} bytes; your plan allows ${maxBytes} bytes (${Math.round(maxBytes / 1048576)} MB). Split the bundle into several jobs.`, {
    size_bytes: size,
    max_bytes: maxBytes,
  });
}
