/**
 * `POST /bulkjob` and `POST /bulkjob/upload-url` as zod schemas (the validation and the OpenAPI description): JSON
 * with exactly one of `s3_key`, `zip_base64`, `files`; or multipart with repeated `files` parts and an optional
 * `paths` JSON array. Refusals: INVALID_BUNDLE_TYPE, INVALID_BULK_INPUT, INVALID_BULK_PATH, INVALID_BULK_PATHS,
 * INVALID_BASE64, INVALID_OPTIONS_JSON, INVALID_PARAMETER (options), 413 BULK_INLINE_TOO_LARGE; the first problem
 * first: bundle type, one input sent, options, then the input (files one by one). Plan, credits, uploads and slots
 * are checked by the submission.
 */
import { z } from 'zod';
import { parseTextOptions } from '../conversion/request';
import { parseUploadLength } from '../jobs/uploads';
import { ServiceError, invalidParameter, isServiceError } from '../errors';
import { type PdfOptions, pdfOptionsSchema } from '../render/options';
import {
  type AnyIssue,
  base64Text,
  decodeBase64Text,
  decodedLength,
  EVEN_AFTER_FIELD_ERRORS,
  isJsonObject,
  issueAt,
  issueUnder,
  jsonFormField,
  optional,
  parameterRefusal,
  parseRequest,
  refuse,
  parseJsonText,
} from '../validation';
import { BULK_LIMITS, BUNDLE_TYPES, type BundleType } from './limits';
import { normalisePath, requestPath } from './paths';

export type BulkInput = { kind: 's3'; key: string } | { kind: 'zip'; bytes: Buffer } | { kind: 'files'; files: { path: string; bytes: Buffer }[] };

export interface BulkRequest {
  bundle_type: BundleType;
  options: PdfOptions;
  input: BulkInput;
}

const present = (v: unknown) => v !== undefined && v !== null;

function inlineTooLarge(bytes: number): ServiceError {
  return new ServiceError(
    'BULK_INLINE_TOO_LARGE',
    `Inline files may total ${BULK_LIMITS.inlineBytes} bytes (4 MB) decoded; this request has more. Upload the ZIP with POST /bulkjob/upload-url and send its s3_key.`,
    { max_bytes: BULK_LIMITS.inlineBytes, ...(bytes > 0 ? { size_bytes: bytes } : {}) },
  );
}

/**
 * More inline files than a bundle may hold: the code a ZIP of that many entries fails with, answered at once (zipping
 * them first would only delay it). `count` is unknown (null) when the form parser stopped counting parts.
 */
export function tooManyFiles(count: number | null): ServiceError {
  return new ServiceError('BULK_ZIP_TOO_MANY_ENTRIES', `The bundle has ${count ?? `more than ${BULK_LIMITS.entries}`} files; a bundle holds at most ${BULK_LIMITS.entries}. Split it into several jobs.`, {
    parameter: 'files',
    entries: count,
    max_entries: BULK_LIMITS.entries,
  });
}

const notBase64 = (parameter: string) => new ServiceError('INVALID_BASE64', `${parameter} is not valid base64.`, { parameter });
const notAString = (parameter: string) => new ServiceError('INVALID_BASE64', `${parameter} must be a base64 string.`, { parameter });

function noInput(count: number, formWithoutFiles = false): ServiceError {
  return new ServiceError(
    'INVALID_BULK_INPUT',
    count === 0
      ? 'Send the bundle as exactly one of: s3_key (from POST /bulkjob/upload-url), zip_base64, or files ([{path, content_base64}]); or as multipart "files" parts.'
      : formWithoutFiles && count === 1
        ? 'A multipart request carries the bundle as repeated "files" parts; send s3_key or zip_base64 in a JSON body instead.'
        : 'Send exactly one of s3_key, zip_base64 or files, not several.',
    { inputs_sent: count, allowed: ['s3_key', 'zip_base64', 'files'] },
  );
}

function duplicatePath(paths: string[], parameter: (i: number) => string): ServiceError | undefined {
  const seen = new Map<string, number>();
  for (const [i, path] of paths.entries()) {
    const first = seen.get(path);
    if (first !== undefined) {
      return new ServiceError('INVALID_BULK_PATH', `${parameter(i)} "${path}" is the same path as ${parameter(first)}; every file needs its own path.`, {
        parameter: parameter(i),
        path,
        reason: 'duplicate',
      });
    }
    seen.set(path, i);
  }
  return undefined;
}

/** The domain check `fn` as a refusal (its ServiceError), or its result. */
function attempt<T>(fn: () => T): T | ServiceError {
  try {
    return fn();
  } catch (err) {
    if (isServiceError(err)) return err;
    throw err;
  }
}

// ---- fields --------------------------------------------------------------------------------------

// Absent or null means the default, as for every optional field; "" (an empty form field too) is a bundle type that is neither.
export const bundleTypeSchema = z
  .enum(['html', 'markdown'])
  .nullish()
  .transform((type): BundleType => type ?? 'html')
  .meta({ description: '"html" converts .html and .htm files, "markdown" .md and .markdown files; other files are assets. Default (absent or null): "html".', default: 'html' });

function bundleTypeRefusal(value: unknown): ServiceError {
  return new ServiceError('INVALID_BUNDLE_TYPE', 'bundle_type must be "html" (converts .html and .htm files) or "markdown" (.md and .markdown); leave it out for "html".', {
    bundle_type: typeof value === 'string' ? value.slice(0, 100) : value === undefined || value === null ? null : typeof value,
    allowed: BUNDLE_TYPES,
  });
}

const optionsDescription = 'PDF options applied to every file (only these keys apply; others are ignored). Markdown bundles get margins of 18 mm (top, bottom) and 16 mm (sides) by default.';

/**
 * The options as the renderer takes them (bundle-type defaults applied). Margins that leave no room and the like are
 * refused here, right after the options' own fields, before any input is looked at.
 */
function checkOptions(body: { bundle_type?: unknown; options?: unknown }, ctx: z.RefinementCtx, rank: number) {
  if (issueUnder(ctx.issues, 'bundle_type') || issueUnder(ctx.issues, 'options')) return;
  const options = attempt(() => parseTextOptions(body.bundle_type as BundleType, body.options));
  if (isServiceError(options)) refuse(ctx, options, { rank });
}

// ---- JSON ----------------------------------------------------------------------------------------

const inlineFileSchema = z.object({
  path: z.string().meta({ description: 'The file\'s path inside the bundle, e.g. "docs/intro.html" ("/" separates folders; no "..", no absolute paths).' }),
  content_base64: z
    .string()
    .transform((value, ctx) => {
      const text = base64Text(value);
      if (text !== null) return decodeBase64Text(text);
      ctx.addIssue({ code: 'custom', message: 'not valid base64', params: { base64: 'invalid' } });
      return z.NEVER;
    })
    .meta({ description: 'The file\'s bytes as base64 ("" for an empty file).' }),
});

type InlineFile = z.output<typeof inlineFileSchema>;

/** The decoded bytes of every file zod could decode: what the request sends in all, for size_bytes. */
function decodedTotal(files: unknown[]): number {
  return files.reduce<number>((total, file) => {
    const content = isJsonObject(file) ? file.content_base64 : undefined;
    return content instanceof Uint8Array ? total + content.length : total;
  }, 0);
}

/**
 * The first problem of `files`, in the spec's order: each file's shape, path and data, the 4 MB running total, then
 * paths used twice. `files` are as far as zod read them.
 */
function firstFilesProblem(files: unknown[], issues: readonly AnyIssue[]): ServiceError | undefined {
  let budget = BULK_LIMITS.inlineBytes;
  const paths: string[] = [];
  for (const [i, file] of files.entries()) {
    const sent = isJsonObject(file) ? file : {};
    if (issueAt(issues, i)) {
      return invalidParameter(`files[${i}]`, `files[${i}] must be an object {path, content_base64}.`, { file_index: i });
    }
    const path = attempt(() => requestPath(sent.path, `files[${i}].path`));
    if (isServiceError(path)) return path;
    paths.push(path);
    const parameter = `files[${i}].content_base64`;
    const content = issueAt(issues, i, 'content_base64');
    if (content?.code === 'custom') return notBase64(parameter);
    if (content) {
      return present(sent.content_base64)
        ? notAString(parameter)
        : invalidParameter(parameter, `${parameter} is missing: send the file's bytes as base64 ("" for an empty file).`, { file_index: i });
    }
    const bytes = (file as InlineFile).content_base64;
    if (bytes.length > budget) return inlineTooLarge(decodedTotal(files));
    budget -= bytes.length;
  }
  return duplicatePath(paths, (i) => `files[${i}].path`);
}

/** POST /bulkjob as JSON. */
export const bulkJobJsonBodySchema = z
  .object({
    bundle_type: bundleTypeSchema,
    options: optional(pdfOptionsSchema).meta({ description: optionsDescription }),
    s3_key: optional(z.string().min(1)).meta({ description: 'A ZIP uploaded with POST /bulkjob/upload-url (up to the plan\'s max_bulk_zip_mb).' }),
    zip_base64: optional(
      z.string().transform((value, ctx) => {
        const text = base64Text(value);
        if (text === null) refuse(ctx, notBase64('zip_base64'));
        else if (decodedLength(text) > BULK_LIMITS.inlineBytes) refuse(ctx, inlineTooLarge(decodedLength(text)));
        else return decodeBase64Text(text);
        return z.NEVER;
      }),
    ).meta({ description: 'The ZIP itself as base64, up to 4 MB decoded.' }),
    files: optional(
      // The length is checked before zod reads the elements: a body of two million {} is refused at once.
      z.array(inlineFileSchema).max(BULK_LIMITS.entries).superRefine((files, ctx) => {
        const problem = Array.isArray(files) && files.length <= BULK_LIMITS.entries ? firstFilesProblem(files, ctx.issues) : undefined;
        if (problem) refuse(ctx, problem, { rank: 3.5 });
      }, EVEN_AFTER_FIELD_ERRORS),
    ).meta({ description: `The bundle as files, up to 4 MB decoded in total and ${BULK_LIMITS.entries} files; every path once.` }),
  })
  .superRefine((body, ctx) => {
    // An empty list of files, or an empty ZIP, is no input (as if left out).
    const empty = (value: unknown) => (Array.isArray(value) || value instanceof Uint8Array) && value.length === 0;
    const sent = (['s3_key', 'zip_base64', 'files'] as const).filter((k) => present(body[k]) && !(k !== 's3_key' && empty(body[k])));
    if (sent.length !== 1) refuse(ctx, noInput(sent.length), { rank: 0.5 });
    checkOptions(body, ctx, 1.5);
  }, EVEN_AFTER_FIELD_ERRORS)
  .meta({
    // Exactly one input (INVALID_BULK_INPUT): an empty ZIP or list of files counts as none.
    oneOf: [
      { required: ['s3_key'], properties: { s3_key: { type: 'string' } } },
      { required: ['zip_base64'], properties: { zip_base64: { type: 'string', minLength: 1 } } },
      { required: ['files'], properties: { files: { type: 'array', minItems: 1 } } },
    ],
  });

const bulkRefusals = {
  bundle_type: bundleTypeRefusal,
  s3_key: () => invalidParameter('s3_key', 's3_key must be the string returned by POST /bulkjob/upload-url.'),
  zip_base64: () => notAString('zip_base64'),
  files: (value: unknown, issue: z.core.$ZodIssue) => {
    if (issue.path.length > 1) return parameterRefusal(issue.path.join('.'), issue, value);
    if (issue.code === 'too_big') return tooManyFiles((value as unknown[]).length);
    return invalidParameter('files', 'files must be an array of {path, content_base64}.');
  },
};

/** The JSON body of POST /bulkjob. */
export function parseBulkJson(body: unknown): BulkRequest {
  const sent = parseRequest(bulkJobJsonBodySchema, body, {
    example: '{"bundle_type": "html", "s3_key": "uploads/…"} (or zip_base64, or files: [{"path": "index.html", "content_base64": "…"}])',
    refusals: bulkRefusals,
  });
  const { bundle_type } = sent;
  const options = parseTextOptions(bundle_type, sent.options);
  if (sent.s3_key !== undefined) return { bundle_type, options, input: { kind: 's3', key: sent.s3_key } };
  if (sent.zip_base64 !== undefined) return { bundle_type, options, input: { kind: 'zip', bytes: sent.zip_base64 } };
  return { bundle_type, options, input: { kind: 'files', files: (sent.files ?? []).map((f) => ({ path: normalisePath(f.path), bytes: f.content_base64 })) } };
}

// ---- multipart -------------------------------------------------------------------------------------

/** A file part of the form, as functions/http/multipart.ts yields it. */
export interface BulkFormFile {
  filename: string | null;
  data: Buffer;
}

/** Each file's path: from `paths` (a JSON array, one per file) or its own name at the top level. */
function formPaths(files: BulkFormFile[], paths: string | undefined): string[] | ServiceError {
  if (paths === undefined) {
    return attempt(() => files.map((f, i) => requestPath((f.filename ?? '').split(/[\\/]/).pop() ?? '', `files[${i}] file name`)));
  }
  let parsed: unknown;
  try {
    parsed = parseJsonText(paths);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== files.length) {
    return new ServiceError('INVALID_BULK_PATHS', `paths must be a JSON array with one path per file, in the order of the files parts (${files.length} here).`, {
      files: files.length,
      paths: Array.isArray(parsed) ? parsed.length : null,
    });
  }
  return attempt(() => parsed.map((p, i) => requestPath(p, `paths[${i}]`)));
}

const notInForm = (field: string) =>
  z
    .never()
    .optional()
    .meta({ description: `Not accepted in a form (multipart carries files): send ${field} in a JSON body instead.` });

/** POST /bulkjob as multipart/form-data: the fields as the multipart parser yields them. */
export const bulkJobFormSchema = z
  .object({
    bundle_type: bundleTypeSchema,
    options: jsonFormField(
      optional(pdfOptionsSchema),
      () => new ServiceError('INVALID_OPTIONS_JSON', 'The options field is not valid JSON; send a JSON object such as {"format":"Letter"}.', { parameter: 'options' }),
    )
      .meta({ description: `JSON object, e.g. {"format": "Letter"}. ${optionsDescription}` }),
    paths: optional(z.string()).meta({
      description: 'JSON array with one path per file, in the order of the files parts, e.g. ["index.html", "css/site.css"]. Default: each file at the top level under its own name.',
    }),
    files: z
      .array(z.custom<BulkFormFile>((v) => isJsonObject(v) && Buffer.isBuffer(v.data)).meta({ type: 'string', format: 'binary', description: 'A file of the bundle.' } as Record<string, unknown>))
      .max(BULK_LIMITS.entries)
      .meta({ description: `The bundle's files (the field repeated; "files[]" is accepted too), up to 4 MB in total and ${BULK_LIMITS.entries} files.`, minItems: 1 }),
    s3_key: notInForm('s3_key'),
    zip_base64: notInForm('zip_base64'),
  })
  .superRefine((form, ctx) => {
    const files = Array.isArray(form.files) ? form.files : [];
    const count = (files.length > 0 ? 1 : 0) + (['s3_key', 'zip_base64'] as const).filter((k) => form[k] !== undefined).length;
    if (count !== 1 || files.length === 0) refuse(ctx, noInput(count, files.length === 0), { rank: 0.5 });
    checkOptions(form, ctx, 1.5);
    const paths = formPaths(files, form.paths);
    const problem = isServiceError(paths) ? paths : duplicatePath(paths, (i) => (form.paths !== undefined ? `paths[${i}]` : `files[${i}] file name`));
    if (problem) refuse(ctx, problem, { rank: 1.9 });
  }, EVEN_AFTER_FIELD_ERRORS);

/** The form's fields as the multipart parser yields them (`s3_key`/`zip_base64`: their text, when sent). */
export interface BulkForm {
  bundle_type?: string;
  options?: string;
  paths?: string;
  files: BulkFormFile[];
  s3_key?: string;
  zip_base64?: string;
}

/** The multipart variant: `files` parts in order, `paths` (a JSON array, one per file) or each file's own name. */
export function parseBulkForm(form: BulkForm): BulkRequest {
  const sent = parseRequest(bulkJobFormSchema, form, {
    refusals: { bundle_type: bundleTypeRefusal, files: (value, issue) => (issue.code === 'too_big' ? tooManyFiles((value as unknown[]).length) : parameterRefusal('files', issue, value)) },
  });
  const paths = formPaths(sent.files, sent.paths) as string[];
  return {
    bundle_type: sent.bundle_type,
    options: parseTextOptions(sent.bundle_type, sent.options),
    input: { kind: 'files', files: sent.files.map((f, i) => ({ path: paths[i], bytes: f.data })) },
  };
}

// ---- POST /bulkjob/upload-url ---------------------------------------------------------------------

export const bulkUploadUrlBodySchema = z.object({
  content_length_bytes: z
    .number()
    .int()
    .min(1)
    .meta({ description: "The exact size of the ZIP in bytes, at least 1 and at most the plan's max_bulk_zip_mb; the PUT must send exactly this many bytes." }),
});

/** POST /bulkjob/upload-url body: the exact size of the ZIP; over the plan's max_bulk_zip_mb is 400 BULK_ZIP_TOO_LARGE. */
export function parseBulkUploadSize(body: unknown, maxBytes: number): number {
  return parseUploadLength(bulkUploadUrlBodySchema, body, 'ZIP', maxBytes, (size) => zipTooLarge(size, maxBytes));
}

export function zipTooLarge(size: number, maxBytes: number): ServiceError {
  return new ServiceError('BULK_ZIP_TOO_LARGE', `The ZIP is ${size} bytes; your plan allows ${maxBytes} bytes (${Math.round(maxBytes / 1048576)} MB). Split the bundle into several jobs.`, {
    size_bytes: size,
    max_bytes: maxBytes,
  });
}
