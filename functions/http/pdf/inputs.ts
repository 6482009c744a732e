/**
 * Takes merge/split/inspect requests apart: multipart/form-data (files as parts) or JSON (base64), into the
 * raw shape functions/core/pdfops/requests.ts validates.
 */
import { ServiceError, invalidParameter } from '../../core/errors';
import { type InspectSource, parseInspectFor, parseInspectJson } from '../../core/pdfops/inspect';
import { type RawInput, checkMergeCount, isObject } from '../../core/pdfops/requests';
import { INSTANT_LIMITS } from '../../core/pdf/limits';
import { type MultipartForm, isMultipart, parseMultipart } from '../multipart';
import type { HttpRequest } from '../pipeline';

const FORM_LIMITS = {
  maxParts: 64,
  // The gateway refuses bodies over ~6 MB anyway; PDF_INPUT_TOO_LARGE is decided on the decoded total.
  maxFileBytes: 8 * 1024 * 1024,
  maxFieldBytes: 1024 * 1024,
};

export function isForm(req: HttpRequest): boolean {
  return isMultipart(req.headers['content-type']);
}

function form(req: HttpRequest): MultipartForm {
  return parseMultipart(req.body, req.headers['content-type'], FORM_LIMITS);
}

/** A JSON field of a form (`options`, `split`, `page_ranges`); undefined when absent. */
function jsonField(f: MultipartForm, name: string, code: 'INVALID_OPTIONS_JSON' | 'INVALID_PARAMETER'): unknown {
  const text = f.text(name);
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = `The "${name}" field is not valid JSON (${(err as Error).message}).`;
    throw code === 'INVALID_OPTIONS_JSON' ? new ServiceError(code, message, { field: name }) : invalidParameter(name, message);
  }
}

function bodyObject(req: HttpRequest): Record<string, unknown> {
  const body = req.json();
  if (!isObject(body)) throw invalidParameter('body', 'Send multipart/form-data or a JSON object.');
  return body;
}

export function readMerge(req: HttpRequest): { inputs: RawInput[]; options: unknown; store: unknown } {
  if (isForm(req)) {
    const f = form(req);
    const parts = [...f.all('files'), ...f.all('files[]')];
    checkMergeCount(parts.length, INSTANT_LIMITS);
    const ranges = jsonField(f, 'page_ranges', 'INVALID_PARAMETER');
    if (ranges !== undefined && (!Array.isArray(ranges) || ranges.length !== parts.length)) {
      throw invalidParameter('page_ranges', `page_ranges must be a JSON array with one entry per file (${parts.length}): a page range, or null for all pages.`);
    }
    return {
      inputs: parts.map((p, i) => ({ kind: 'bytes', data: p.data, filename: p.filename, pages: (ranges as unknown[] | undefined)?.[i] })),
      options: jsonField(f, 'options', 'INVALID_OPTIONS_JSON'),
      store: f.text('store'),
    };
  }
  const body = bodyObject(req);
  if (body.inputs !== undefined && !Array.isArray(body.inputs)) throw invalidParameter('inputs', 'inputs must be an array of {pdf_base64, filename, pages}.');
  const items = (body.inputs ?? []) as unknown[];
  checkMergeCount(items.length, INSTANT_LIMITS);
  return {
    inputs: items.map((item, i) => {
      if (!isObject(item)) throw invalidParameter(`inputs[${i}]`, `inputs[${i}] must be an object {pdf_base64, filename, pages}.`, { input_index: i });
      return { kind: 'base64', value: item.pdf_base64, filename: item.filename, pages: item.pages };
    }),
    options: body.options,
    store: body.store,
  };
}

export function readSplit(req: HttpRequest): { input: RawInput | null; extraFiles: number; split: unknown; options: unknown; store: unknown } {
  if (isForm(req)) {
    const f = form(req);
    const files = f.all('file');
    return {
      input: files[0] ? { kind: 'bytes', data: files[0].data, filename: files[0].filename } : null,
      extraFiles: Math.max(0, files.length - 1),
      split: jsonField(f, 'split', 'INVALID_PARAMETER'),
      options: jsonField(f, 'options', 'INVALID_OPTIONS_JSON'),
      store: f.text('store'),
    };
  }
  const body = bodyObject(req);
  const input = body.input;
  if (input !== undefined && input !== null && !isObject(input)) throw invalidParameter('input', 'input must be an object {pdf_base64, filename}.');
  return {
    input: isObject(input) ? { kind: 'base64', value: input.pdf_base64, filename: input.filename } : null,
    extraFiles: 0,
    split: body.split,
    options: body.options,
    store: body.store,
  };
}

export function readInspect(req: HttpRequest): { source: InspectSource; forEdit: boolean } {
  if (isForm(req)) {
    const f = form(req);
    const files = f.all('file');
    if (files.length === 0) throw new ServiceError('MISSING_PDF', 'No PDF in the request: send it as the multipart field "file".');
    if (files.length > 1) throw new ServiceError('TOO_MANY_FILES', 'Inspect takes one PDF at a time.', { file_count: files.length, max_files: 1 });
    return { source: { kind: 'inline', input: { kind: 'bytes', data: files[0].data, filename: files[0].filename } }, forEdit: parseInspectFor(f.text('for')) };
  }
  return parseInspectJson(req.json());
}
