import { CONVERSION_TYPES, type ConversionType } from '../billing/plans';
import { ServiceError, invalidParameter } from '../errors';
import { contentMismatch } from '../render/content-sniffer';
import { parseImageOptions } from '../render/images';
import { MARKDOWN_DEFAULT_MARGIN } from '../render/markdown';
import { type PdfOptions, parsePdfOptions } from '../render/options';

/** Inline content (HTML or Markdown) may be up to 5 MB. */
export const MAX_CONTENT_BYTES = 5 * 1024 * 1024;

const CONTENT_FIELDS = { html: 'html', markdown: 'markdown', url: 'url' } as const;
type ContentField = keyof typeof CONTENT_FIELDS;

export interface TextConversion {
  input_type: 'html' | 'markdown';
  content: string;
  options: PdfOptions;
  store: boolean;
}

export interface UrlConversion {
  input_type: 'url';
  url: string;
  /** Kept raw: how they apply depends on what the URL turns out to serve. */
  rawOptions: unknown;
  store: boolean;
}

export type JsonConversion = TextConversion | UrlConversion;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The `input_type` checks shared by every conversion route. */
export function parseInputType(body: Record<string, unknown>): ConversionType {
  const t = body.input_type;
  if (t === undefined || t === null || t === '') {
    throw new ServiceError('MISSING_INPUT_TYPE', `input_type is required: one of ${CONVERSION_TYPES.join(', ')}.`);
  }
  if (typeof t !== 'string' || !(CONVERSION_TYPES as readonly string[]).includes(t)) {
    throw new ServiceError('INVALID_INPUT_TYPE', `input_type must be one of ${CONVERSION_TYPES.join(', ')}.`, {
      input_type: t,
      allowed: CONVERSION_TYPES,
    });
  }
  return t as ConversionType;
}

/** `store` is an optional boolean. */
export function parseStore(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalidParameter('store', 'store must be true or false.');
  return value;
}

/**
 * The content field checks, in the order a client can act on them: conflicting fields, a field that
 * does not belong to input_type, the missing field, its type, emptiness, size, and finally content
 * that plainly is something else.
 */
function parseContent(body: Record<string, unknown>, type: 'html' | 'markdown' | 'url'): string {
  if (body.html !== undefined && body.markdown !== undefined) {
    throw new ServiceError('CONFLICTING_FIELDS', 'Send either html or markdown, not both.', { fields: ['html', 'markdown'] });
  }
  const wrong = (Object.keys(CONTENT_FIELDS) as ContentField[]).filter((f) => f !== type && body[f] !== undefined);
  if (wrong.length > 0) {
    throw new ServiceError('WRONG_FIELD_PROVIDED', `input_type is "${type}", so send the content in "${type}", not in "${wrong[0]}".`, {
      field: wrong[0],
      input_type: type,
      expected_field: type,
    });
  }
  const value = body[type];
  if (type === 'url') {
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      throw new ServiceError('MISSING_URL', 'url is required for input_type "url": a public https:// address.');
    }
    if (typeof value !== 'string') throw new ServiceError('INVALID_URL', 'url must be a string holding an https:// address.', { url: value });
    return value.trim();
  }
  if (value === undefined || value === null) {
    throw new ServiceError('MISSING_CONTENT_FIELD', `input_type is "${type}", so the "${type}" field is required.`, { field: type });
  }
  if (typeof value !== 'string') throw invalidParameter(type, `${type} must be a string.`);
  if (value.trim() === '') throw new ServiceError('EMPTY_CONTENT_FIELD', `The "${type}" field is empty.`, { field: type });
  const size = Buffer.byteLength(value, 'utf8');
  if (size > MAX_CONTENT_BYTES) {
    throw new ServiceError('INPUT_SIZE_EXCEEDED', `${type} is ${size} bytes; the limit is ${MAX_CONTENT_BYTES} bytes (5 MB). Use /bulkjob with an uploaded ZIP for bigger documents.`, {
      field: type,
      size_bytes: size,
      max_bytes: MAX_CONTENT_BYTES,
    });
  }
  const detected = contentMismatch(type, value);
  if (detected) {
    const hint = detected === 'html' || detected === 'markdown' || detected === 'url' ? ` Send it with input_type "${detected}".` : '';
    throw new ServiceError('CONTENT_TYPE_MISMATCH', `The ${type} field looks like ${detected} content, not ${type}.${hint}`, {
      input_type: type,
      detected_type: detected,
    });
  }
  return value;
}

export function parseTextOptions(type: 'html' | 'markdown', raw: unknown): PdfOptions {
  return parsePdfOptions(raw, { defaultMargin: type === 'markdown' ? MARKDOWN_DEFAULT_MARGIN : {} });
}

/**
 * URL input's options are read once the fetched type is known (images take fewer options). Options no type
 * could use are refused up front, before anything is fetched or a job exists, with the HTML reading's error.
 */
function assertUsableUrlOptions(raw: unknown): void {
  try {
    parseTextOptions('html', raw);
  } catch (textError) {
    try {
      parseImageOptions(raw);
    } catch {
      throw textError;
    }
  }
}

/** A JSON conversion request body (quickjob, and the shared part of longjob). */
export function parseJsonConversion(body: unknown): JsonConversion {
  if (!isObject(body)) throw invalidParameter('body', 'The request body must be a JSON object.');
  const type = parseInputType(body);
  if (type === 'image') {
    throw invalidParameter('input_type', 'Image input is sent as multipart/form-data with one "images" part per PNG or JPEG file.');
  }
  const content = parseContent(body, type);
  if (type === 'url') {
    assertUsableUrlOptions(body.options);
    return { input_type: 'url', url: content, rawOptions: body.options, store: parseStore(body.store) };
  }
  const options = parseTextOptions(type, body.options);
  return { input_type: type, content, options, store: parseStore(body.store) };
}
