/**
 * The requests of /pdf/merge, /pdf/split and /pdf/jobs as zod schemas: JSON bodies and multipart forms (the form's
 * text fields as the multipart parser yields them, its files as parts). They are the validation and the source of
 * the OpenAPI description.
 *
 * Problems are answered in the order a client can act on: file counts, decoding, sizes, page ranges, split
 * settings, options, store. Inputs are named the spec's way (`inputs[1].pages`, with the input's `filename` and
 * `input_index`): an array of inputs reports its first problem itself, from zod's issues read in that order, and
 * fields whose refusal names the input are refused per request (`refusals`).
 */
import { z } from 'zod';
import { ServiceError, invalidParameter } from '../errors';
import { DEFAULT_FILENAME_PATTERN, type FilenamePattern, filenamePatternSchema, sanitizeFilename } from '../pdf/filenames';
import { INSTANT_LIMITS, JOB_LIMITS, type PdfToolLimits } from '../pdf/limits';
import type { MergeSpec, SplitMode, SplitSpec } from '../pdf/operations';
import { type ParsedRange, parsePageRange } from '../pdf/page-ranges';
import {
  type AnyIssue,
  base64Text,
  decodeBase64Text,
  EVEN_AFTER_FIELD_ERRORS,
  isJsonObject,
  type Refuser,
  issueAt,
  jsonFormField,
  optional,
  parameterRefusal,
  parseRequest,
  refuse,
  parseJsonText,
} from '../validation';
import { shownValue } from '../validation/shown';

export const SPLIT_MODES = ['extract', 'ranges', 'every_n', 'each_page'] as const;

export interface MergeRequest extends MergeSpec {
  store: boolean;
}

export interface SplitRequest extends SplitSpec {
  store: boolean;
}

const MB = 1024 * 1024;

const paramsOf = (issue: AnyIssue): Record<string, unknown> => (issue as { params?: Record<string, unknown> }).params ?? {};

const optionsNotJson = (why: string) => new ServiceError('INVALID_OPTIONS_JSON', `The "options" field is not valid JSON (${why}).`, { parameter: 'options' });

// ---- fields --------------------------------------------------------------------------------------

/** A file part of a multipart form, as functions/http/multipart.ts yields it. */
export interface FormFile {
  filename: string | null;
  data: Uint8Array;
}

/** A form's fields as the multipart parser yields them: its files as parts, its text fields as strings. */
export type FormFields<S extends z.ZodType> = { [K in keyof z.input<S>]: z.input<S>[K] extends FormFile[] ? FormFile[] : string | undefined };

const formFileSchema = z
  .custom<FormFile>((v) => isJsonObject(v) && v.data instanceof Uint8Array)
  .meta({ type: 'string', format: 'binary', description: 'A PDF file.' } as Record<string, unknown>);

/** `input-3.pdf`-style fallback names are 1-based like the `{index}` token; sent names are made safe. */
export function inputName(sent: unknown, index: number): string {
  const fallback = `input-${index + 1}.pdf`;
  return typeof sent === 'string' && sent !== '' ? sanitizeFilename(sent, fallback) : fallback;
}

type Base64Problem = 'missing' | 'invalid' | 'empty';

/** Base64 (standard or URL-safe; a `data:` URL prefix and line breaks are accepted) → bytes, or what is wrong. */
function decodePdfBase64(value: string): Uint8Array | Base64Problem {
  if (value === '') return 'missing';
  const text = base64Text(value);
  if (text === null) return 'invalid';
  const bytes = decodeBase64Text(text);
  return bytes.length === 0 ? 'empty' : bytes;
}

/** `pdf_base64`, decoded; a problem is an issue with `params.base64` (the input's refusal names it). */
export const pdfBase64Schema = z
  .string()
  .transform((value, ctx) => {
    const decoded = decodePdfBase64(value);
    if (typeof decoded !== 'string') return decoded;
    ctx.addIssue({ code: 'custom', message: decoded === 'invalid' ? 'not valid base64' : 'no PDF data', params: { base64: decoded } });
    return z.NEVER;
  })
  .meta({ description: 'The PDF, base64-encoded (standard or URL-safe alphabet; a data: URL prefix and line breaks are accepted).' });

/** Entries `page_ranges` may have before it is refused unread (it must have one per file anyway). */
const MAX_PAGE_RANGES_ENTRIES = 1000;

/**
 * A page range such as "1-3,8-end" (pdf/page-ranges.ts); a syntax problem is an issue with `params.pageRange`, the
 * INVALID_PAGE_RANGE refusal the caller completes with the parameter and the input it belongs to.
 */
export const pageRangeSchema = z
  .string()
  .meta({
    description: 'Pages, 1-based: "3", "1-3", "8-end", comma-separated, used in the written order (repeats allowed); at most 500 parts.',
    examples: ['1-3,8-end'],
  })
  .transform((text, ctx) => {
    try {
      return parsePageRange(text);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message, params: { pageRange: err } });
      return z.NEVER;
    }
  });

/** INVALID_PAGE_RANGE completed with where it was sent, or INVALID_PARAMETER when the value was not a string. */
function rangeRefusal(parameter: string, issue: AnyIssue, where: Record<string, unknown>, notARange: string): ServiceError {
  const range = paramsOf(issue).pageRange;
  if (range instanceof ServiceError) return new ServiceError(range.code, `${parameter}: ${range.message}`, { ...where, parameter, ...range.details });
  return invalidParameter(parameter, notARange, where);
}

export const storeSchema = optional(z.union([z.boolean(), z.enum(['true', 'false'])], { error: 'expected true or false' }))
  .transform((value) => value === true || value === 'true')
  .meta({
    description: 'true: keep the result and answer JSON with download links (outputs kept 7 days) instead of the PDF itself. Default false.',
    default: false,
  });

const storeFormSchema = optional(z.enum(['true', 'false']))
  .transform((value) => value === 'true')
  .meta({ description: '"true": keep the result and answer JSON with download links (outputs kept 7 days) instead of the PDF itself. Default "false".', default: 'false' });

const optionalText = (max: number, description: string) =>
  optional(z.string().max(max))
    .transform((text) => text || null)
    .meta({ description });

/** `options` of a merge: absent or null for none; unknown keys are ignored. */
export const mergeOptionsSchema = optional(
  z.object({
    output_filename: optionalText(200, 'Name of the merged file, default "merged"; ".pdf" is added and unsafe characters become "_". At most 200 characters.').meta({ default: 'merged' }),
    title: optionalText(1000, "Title written into the merged PDF's metadata. At most 1000 characters."),
  }),
)
  .transform((o) => ({ outputFilename: o?.output_filename ?? null, title: o?.title ?? null }))
  .meta({ description: 'Merge options.' });

/** `options` of a split: absent or null for the default file names. */
export const splitOptionsSchema = optional(z.object({ filename_pattern: filenamePatternSchema }))
  .transform((o): FilenamePattern => o?.filename_pattern ?? DEFAULT_FILENAME_PATTERN)
  .meta({ description: 'Split options.' });

/**
 * `split`: how to cut the PDF. Refused with INVALID_SPLIT_MODE / INVALID_PARAMETER / OUTPUT_COUNT_EXCEEDED (more
 * ranges than the limits' output files) naming the input (`splitRefusal`).
 */
function splitModeSchemaFor(limits: PdfToolLimits) {
  return z
    .discriminatedUnion('mode', [
      z.object({ mode: z.literal('extract'), pages: pageRangeSchema }).meta({ description: 'One file with the pages of `pages`, in the written order.' }),
      z
        .object({
          mode: z.literal('ranges'),
          ranges: z
            .array(z.string().meta({ description: 'A page range such as "1-3" or "4-end".' }))
            .min(1)
            .meta({ examples: [['1-3', '4-end']], maxItems: limits.maxOutputs } as Record<string, unknown>)
            .transform((texts, ctx) => {
              // One file per range: more ranges than files allowed is refused before any is parsed (or any PDF read).
              if (texts.length > limits.maxOutputs) {
                ctx.addIssue({ code: 'custom', message: `at most ${limits.maxOutputs} ranges`, params: { outputCount: texts.length, limits } });
                return z.NEVER;
              }
              const ranges: ParsedRange[] = [];
              for (const [index, text] of texts.entries()) {
                try {
                  ranges.push(parsePageRange(text));
                } catch (err) {
                  if (!(err instanceof ServiceError)) throw err;
                  ctx.addIssue({ code: 'custom', message: err.message, params: { pageRange: err, index } });
                  return z.NEVER;
                }
              }
              return ranges;
            })
            .meta({ description: `One file per page range, in order (ranges may overlap); at most ${limits.maxOutputs}.` }),
        })
        .meta({ description: 'One file per page range.' }),
      z
        .object({
          mode: z.literal('every_n'),
          // Not .int(): its issue stops the request's other checks, which keep the spec's order of problems. Whole
          // numbers past 2^53 are whole numbers too (1e308 asks for one file, as any every_n past the page count does).
          every_n: z
            .number()
            .min(1)
            .refine(Number.isInteger, { message: 'expected a whole number' })
            .meta({ type: 'integer', description: 'Pages per file (the last file may have fewer); at least 1.' } as Record<string, unknown>),
        })
        .meta({ description: 'Files of every_n pages.' }),
      z.object({ mode: z.literal('each_page') }).meta({ description: 'One file per page.' }),
    ])
    .meta({ description: `How to split: mode is one of ${SPLIT_MODES.join(', ')}.` });
}

/** `split` of an instant request (/pdf/split): at most 100 ranges. */
export const splitModeSchema = splitModeSchemaFor(INSTANT_LIMITS);
/** `split` of a background job (/pdf/jobs, and its stored request): at most 500 ranges. */
export const jobSplitModeSchema = splitModeSchemaFor(JOB_LIMITS);

/** OUTPUT_COUNT_EXCEEDED as the split itself answers it (pdf/operations.ts `planSplit`), naming the input. */
function tooManyOutputs(count: number, limits: PdfToolLimits, context: Record<string, unknown>): ServiceError {
  const where = limits.kind === 'instant' ? ' per request (use POST /pdf/jobs for up to 500)' : ' per job';
  return new ServiceError('OUTPUT_COUNT_EXCEEDED', `This split would produce ${count} files; at most ${limits.maxOutputs} are allowed${where}.`, {
    ...context,
    output_count: count,
    max_outputs: limits.maxOutputs,
  });
}

const isSplitMode = (value: unknown): value is string => typeof value === 'string' && (SPLIT_MODES as readonly string[]).includes(value);

/** INVALID_SPLIT_MODE for a `split` that is not an object, showing the object it should be (with its mode if it named one). */
function splitNotAnObject(what: string, got: string, mode: string | null, details: Record<string, unknown>): ServiceError {
  return new ServiceError('INVALID_SPLIT_MODE', `${what} must be a JSON object with a mode, such as {"mode": "${mode ?? 'each_page'}"}; got ${got}.`, {
    ...details,
    mode: null,
    supported: SPLIT_MODES,
  });
}

/** The form's `split` field is not JSON: a bare mode name (`each_page`) is shown the object it should be. */
function splitFieldNotJson(why: string, text: string): ServiceError {
  const mode = text.trim();
  if (isSplitMode(mode)) return splitNotAnObject('The "split" field', `the bare word ${mode}`, mode, { parameter: 'split' });
  return invalidParameter('split', `The "split" field is not valid JSON (${why}).`);
}

/** Refusals of the `split` object sent as `split`; `context` names the input (filename, input_index). */
function splitRefusal(split: unknown, context: Record<string, unknown>): Refuser {
  return (_value, issue) => {
    const field = issue.path[1];
    if (field === undefined || field === 'mode') {
      if (split !== undefined && split !== null && !isJsonObject(split)) {
        const got = typeof split === 'string' ? `the string ${shownValue(split, 40)}` : typeof split === 'number' || typeof split === 'boolean' ? `a ${typeof split}` : shownValue(split);
        return splitNotAnObject('split', got, isSplitMode(split) ? split : null, context);
      }
      const mode = isJsonObject(split) ? split.mode : undefined;
      const message =
        mode === undefined || mode === null
          ? `split.mode is required: one of ${SPLIT_MODES.join(', ')}.`
          : typeof mode === 'string'
            ? `split.mode ${shownValue(mode)} is not known; use one of ${SPLIT_MODES.join(', ')}.`
            : `split.mode must be one of ${SPLIT_MODES.join(', ')} (a string), not ${shownValue(mode)}.`;
      return new ServiceError('INVALID_SPLIT_MODE', message, { ...context, mode: typeof mode === 'string' ? Array.from(mode).slice(0, 100).join('') : null, supported: SPLIT_MODES });
    }
    if (field === 'pages') return rangeRefusal('split.pages', issue, context, 'Mode "extract" needs split.pages, a page range such as "1-3,8-end".');
    if (field === 'ranges') {
      const { index, outputCount, limits } = paramsOf(issue);
      if (typeof outputCount === 'number') return tooManyOutputs(outputCount, limits as PdfToolLimits, context);
      if (typeof index === 'number') return rangeRefusal(`split.ranges[${index}]`, issue, context, '');
      return invalidParameter('split.ranges', 'Mode "ranges" needs split.ranges, a non-empty array of page ranges such as ["1-3", "4-end"].', context);
    }
    if (field === 'every_n') return invalidParameter('split.every_n', 'Mode "every_n" needs split.every_n, a whole number of at least 1.', context);
    return parameterRefusal(issue.path.map(String).join('.'), issue, undefined);
  };
}

const noSplitInput = () => new ServiceError('MISSING_PDF', 'No PDF in the request: send the file to split (multipart field "file", or JSON input.pdf_base64).');

/** Where an input sits: `inputs[2]` (index 2) or `input` (index 0), and the fields its object takes. */
interface InputAt {
  base: string;
  index: number;
  shape: string;
  /** Where an uploaded file (`s3_key`) is taken instead, for a refusal of an inline input that sent one (default: POST /pdf/jobs). */
  uploadsGo?: string;
}

/** The refusal for a problem of one input (`field` undefined: the input itself); `sent` is the input as sent. */
export function inputRefusal(at: InputAt, field: PropertyKey | undefined, issue: AnyIssue, sent: unknown, operation: 'merge' | 'split' = 'merge'): ServiceError {
  const { base, index } = at;
  if (field === undefined) return invalidParameter(base, `${base} must be an object ${at.shape}.`, { input_index: index });
  const parameter = `${base}.${String(field)}`;
  if (field === 'filename') return invalidParameter(parameter, `${parameter} must be a string.`, { input_index: index });
  const fields = isJsonObject(sent) ? sent : {};
  const filename = inputName(fields.filename, index);
  const where = { filename, input_index: index };
  if (field === 'pdf_base64') {
    const sentValue = fields.pdf_base64;
    const problem = paramsOf(issue).base64 ?? (sentValue === undefined || sentValue === null ? 'missing' : 'type');
    if (problem === 'missing') {
      // An upload's s3_key sent where only inline PDFs go: say where it belongs.
      const upload = fields.s3_key !== undefined ? ` An uploaded file (s3_key) goes ${at.uploadsGo ?? 'to POST /pdf/jobs'}.` : '';
      return new ServiceError('MISSING_PDF', `${parameter} is missing: send the PDF as base64.${upload}`, { ...where, parameter });
    }
    if (problem === 'invalid') {
      return invalidParameter(parameter, `${parameter} is not valid base64: send the PDF's bytes base64-encoded (standard or URL-safe alphabet).`, where);
    }
    if (problem === 'empty') return new ServiceError('MISSING_PDF', `${parameter} is empty: send the PDF as base64.`, { ...where, parameter });
    return invalidParameter(parameter, `${parameter} must be a base64 string.`, where);
  }
  if (field === 's3_key') return invalidParameter(parameter, `${parameter} is required: the s3_key returned by POST /pdf/upload-url.`, where);
  if (field === 'pages') {
    if (operation === 'split') return invalidParameter(parameter, 'pages applies to merge inputs; for a split, choose pages with split.mode "extract" and split.pages.', where);
    return rangeRefusal(parameter, issue, where, `${parameter} must be a page range string such as "1-3,8-end", or null for all pages.`);
  }
  return parameterRefusal(parameter, issue as z.core.$ZodIssue, fields[field as string]);
}

function tooLarge(size: number, limits: PdfToolLimits, extra: Record<string, unknown> = {}): ServiceError {
  const hint = limits.kind === 'instant' ? ' Upload larger files with POST /pdf/upload-url and process them with POST /pdf/jobs (up to 150 MB).' : '';
  return new ServiceError('PDF_INPUT_TOO_LARGE', `The PDF input is ${size} bytes; the limit is ${limits.maxInputBytes / MB} MB (${limits.maxInputBytes} bytes).${hint}`, {
    ...extra,
    size_bytes: size,
    max_bytes: limits.maxInputBytes,
  });
}

/** MISSING_PDFS below the minimum, TOO_MANY_FILES above the maximum. */
function mergeCountProblem(count: number, limits: PdfToolLimits): ServiceError | undefined {
  if (count < limits.minMergeFiles) {
    return new ServiceError('MISSING_PDFS', `A merge needs at least ${limits.minMergeFiles} PDFs; this request has ${count}.`, { file_count: count, min_files: limits.minMergeFiles });
  }
  if (count > limits.maxMergeFiles) {
    const hint = limits.kind === 'instant' ? ' Use POST /pdf/jobs for up to 100.' : '';
    return new ServiceError('TOO_MANY_FILES', `A merge takes at most ${limits.maxMergeFiles} PDFs; this request has ${count}.${hint}`, { file_count: count, max_files: limits.maxMergeFiles });
  }
  return undefined;
}

/** The document's statement of `mergeCountProblem`. */
function mergeCountBounds(limits: PdfToolLimits): { minItems: number; maxItems: number } {
  return { minItems: limits.minMergeFiles, maxItems: limits.maxMergeFiles };
}

/** The file count of a merge, checked before anything else in the request. */
function mergeCount(limits: PdfToolLimits) {
  return (items: unknown, ctx: z.RefinementCtx) => {
    const problem = Array.isArray(items) ? mergeCountProblem(items.length, limits) : undefined;
    if (problem) refuse(ctx, problem, { rank: -3 });
  };
}

const filenameSchema = optional(z.string()).meta({ description: 'The file name shown in results and errors; default "input-N.pdf" (1-based).' });

// ---- POST /pdf/merge -------------------------------------------------------------------------------

// Loose so that a refusal sees every field sent: an upload's s3_key sent here is told where it belongs.
const mergeJsonInputSchema = z.looseObject({
  pdf_base64: pdfBase64Schema,
  filename: filenameSchema,
  pages: optional(pageRangeSchema).meta({ description: 'The pages of this input to use, e.g. "1-3,8-end"; absent or null for all pages.' }),
});

type MergeJsonInput = z.output<typeof mergeJsonInputSchema>;

/**
 * The first problem of a merge's JSON inputs after their count, in the spec's order: inputs that are not objects,
 * each input's name and data, the total size, then each input's pages. `items` are the inputs as far as zod read
 * them, `issues` zod's (relative to the array).
 */
function firstMergeInputProblem(items: unknown[], issues: readonly AnyIssue[], limits: PdfToolLimits): ServiceError | undefined {
  // The count was refused already (it comes first).
  if (mergeCountProblem(items.length, limits)) return undefined;
  const shape = '{pdf_base64, filename, pages}';
  const at = (index: number): InputAt => ({ base: `inputs[${index}]`, index, shape });
  for (const [index] of items.entries()) {
    const issue = issueAt(issues, index);
    if (issue) return inputRefusal(at(index), undefined, issue, undefined);
  }
  let total = 0;
  let over: Record<string, unknown> | undefined;
  for (const [index, item] of items.entries()) {
    for (const field of ['filename', 'pdf_base64'] as const) {
      const issue = issueAt(issues, index, field);
      if (issue) return inputRefusal(at(index), field, issue, item);
    }
    total += (item as MergeJsonInput).pdf_base64.length;
    if (total > limits.maxInputBytes) over ??= { filename: inputName((item as MergeJsonInput).filename, index), input_index: index };
  }
  // Named after the input that took the total over the limit.
  if (over) return tooLarge(total, limits, { ...over, file_count: items.length });
  for (const [index, item] of items.entries()) {
    const issue = issueAt(issues, index, 'pages');
    if (issue) return inputRefusal(at(index), 'pages', issue, item);
  }
  return undefined;
}

/** POST /pdf/merge as JSON: 2–20 PDFs as base64, 4 MB decoded in total. */
export const mergeJsonBodySchema = z.object({
  inputs: z
    .array(mergeJsonInputSchema)
    .superRefine(mergeCount(INSTANT_LIMITS), EVEN_AFTER_FIELD_ERRORS)
    .superRefine((items, ctx) => {
      const problem = Array.isArray(items) ? firstMergeInputProblem(items, ctx.issues, INSTANT_LIMITS) : undefined;
      if (problem) refuse(ctx, problem, { rank: -1 });
    }, EVEN_AFTER_FIELD_ERRORS)
    // A missing list is read as an empty one, so that it gets the count's refusal (MISSING_PDFS): required all the same.
    .prefault([])
    .meta({ description: 'The PDFs to merge, 2 to 20, in this order; 4 MB decoded in total (larger: POST /pdf/jobs).', ...mergeCountBounds(INSTANT_LIMITS) }),
  options: mergeOptionsSchema,
  store: storeSchema,
}).meta({ required: ['inputs'] });

/** POST /pdf/merge as multipart/form-data: the fields as the multipart parser yields them. */
export const mergeFormSchema = z
  .object({
    files: z
      .array(formFileSchema)
      .superRefine(mergeCount(INSTANT_LIMITS), EVEN_AFTER_FIELD_ERRORS)
      .superRefine((files, ctx) => {
        let total = 0;
        let over: Record<string, unknown> | undefined;
        for (const [index, file] of files.entries()) {
          const filename = inputName(file.filename, index);
          if (file.data.length === 0) return refuse(ctx, new ServiceError('MISSING_PDF', `${filename} is empty (0 bytes); attach the PDF itself.`, { filename, input_index: index }));
          total += file.data.length;
          if (total > INSTANT_LIMITS.maxInputBytes) over ??= { filename, input_index: index };
        }
        // Named after the file that took the total over the limit.
        if (over) refuse(ctx, tooLarge(total, INSTANT_LIMITS, { ...over, file_count: files.length }));
      })
      .meta({ description: 'The PDFs to merge, 2 to 20, in this order (the field repeated; "files[]" is accepted too); 4 MB in total.', ...mergeCountBounds(INSTANT_LIMITS) }),
    // Far above any file count the form can carry; bounded so that zod never reads half a million entries.
    page_ranges: jsonFormField(z.array(pageRangeSchema.nullable()).max(MAX_PAGE_RANGES_ENTRIES).optional(), (why) => invalidParameter('page_ranges', `The "page_ranges" field is not valid JSON (${why}).`), { rank: -2 }).meta({
      description: 'JSON array with one entry per file: a page range such as "1-3,8-end", or null for all pages, e.g. ["3,1", null]. Default: all pages of every file.',
    }),
    options: jsonFormField(mergeOptionsSchema, optionsNotJson, { rank: -1 }).meta({ description: 'JSON object with output_filename and title (as in the JSON body), e.g. {"output_filename": "bundle"}.' }),
    store: storeFormSchema,
  })
  .superRefine((form, ctx) => {
    const ranges: unknown = form.page_ranges;
    if (ranges === undefined || issueAt(ctx.issues, 'page_ranges')?.code === 'custom' || !Array.isArray(form.files)) return;
    if (!Array.isArray(ranges) || ranges.length !== form.files.length) {
      const count = form.files.length;
      refuse(ctx, invalidParameter('page_ranges', `page_ranges must be a JSON array with one entry per file (${count}): a page range, or null for all pages.`), { rank: -2 });
    }
  }, EVEN_AFTER_FIELD_ERRORS);

export type MergeForm = FormFields<typeof mergeFormSchema>;

/** A request as it arrived: a JSON body, or the fields of a multipart form. */
export type Submitted<F> = { json: unknown } | { form: F };

/** The instant merge request (multipart or JSON). */
export function parseMergeRequest(submitted: Submitted<MergeForm>): MergeRequest {
  if ('form' in submitted) {
    const files = submitted.form.files ?? [];
    const refusals = {
      page_ranges: (_value: unknown, issue: z.core.$ZodIssue) => {
        if (issue.path.length < 2) return parameterRefusal('page_ranges', issue, undefined);
        const index = Number(issue.path[1]);
        const parameter = `page_ranges[${index}]`;
        const where = { filename: inputName(files[index]?.filename, index), input_index: index };
        return rangeRefusal(parameter, issue, where, `${parameter} must be a page range string such as "1-3,8-end", or null for all pages of file ${index + 1}.`);
      },
    };
    const form = parseRequest(mergeFormSchema, submitted.form, { refusals });
    return {
      inputs: form.files.map((file, index) => ({
        bytes: file.data,
        filename: inputName(file.filename, index),
        index,
        pages: form.page_ranges?.[index] ?? null,
        pagesParameter: `page_ranges[${index}]`,
      })),
      ...form.options,
      store: form.store,
    };
  }
  const body = parseRequest(mergeJsonBodySchema, submitted.json, {
    first: (sent) => (Array.isArray(sent.inputs) ? mergeCountProblem(sent.inputs.length, INSTANT_LIMITS) : undefined),
    example: '{"inputs": [{"pdf_base64": "JVBERi0…", "filename": "a.pdf"}, {"pdf_base64": "JVBERi0…", "pages": "1-3"}]} (or send multipart/form-data)',
    refusals: { inputs: (_value, issue) => (issue.path.length === 1 ? invalidParameter('inputs', 'inputs must be an array of {pdf_base64, filename, pages}.') : parameterRefusal(issue.path.join('.'), issue, undefined)) },
  });
  return {
    inputs: body.inputs.map((input, index) => ({ bytes: input.pdf_base64, filename: inputName(input.filename, index), index, pages: input.pages ?? null })),
    ...body.options,
    store: body.store,
  };
}

// ---- POST /pdf/split -------------------------------------------------------------------------------

const splitJsonInputSchema = z
  .object({ filename: filenameSchema, pdf_base64: pdfBase64Schema })
  .superRefine((input, ctx) => {
    const size = input.pdf_base64.length;
    if (size > INSTANT_LIMITS.maxInputBytes) refuse(ctx, tooLarge(size, INSTANT_LIMITS, { filename: inputName(input.filename, 0), input_index: 0 }));
  })
  .meta({ description: 'The PDF to split (4 MB decoded, 500 pages; larger: POST /pdf/jobs).' });

/** POST /pdf/split as JSON: one PDF as base64. */
export const splitJsonBodySchema = z.object({
  input: splitJsonInputSchema,
  split: splitModeSchema,
  options: splitOptionsSchema,
  store: storeSchema,
});

/** POST /pdf/split as multipart/form-data: the fields as the multipart parser yields them. */
export const splitFormSchema = z.object({
  file: z
    .array(formFileSchema)
    .superRefine((files, ctx) => {
      if (files.length === 0) return refuse(ctx, noSplitInput());
      if (files.length > 1) return refuse(ctx, new ServiceError('TOO_MANY_FILES', 'A split takes exactly one PDF.', { file_count: files.length, max_files: 1 }));
      const filename = inputName(files[0].filename, 0);
      const size = files[0].data.length;
      if (size === 0) return refuse(ctx, new ServiceError('MISSING_PDF', `${filename} is empty (0 bytes); attach the PDF itself.`, { filename, input_index: 0 }));
      if (size > INSTANT_LIMITS.maxInputBytes) refuse(ctx, tooLarge(size, INSTANT_LIMITS, { filename, input_index: 0 }));
    })
    .meta({ description: 'The PDF to split: exactly one file (4 MB, 500 pages).', minItems: 1, maxItems: 1 }),
  split: jsonFormField(splitModeSchema, splitFieldNotJson, { rank: -2 }).meta({
    description: 'JSON object: how to split, as in the JSON body, e.g. {"mode": "ranges", "ranges": ["1-3", "4-end"]}. Required.',
  }),
  options: jsonFormField(splitOptionsSchema, optionsNotJson, { rank: -1 }).meta({ description: 'JSON object with filename_pattern (as in the JSON body), e.g. {"filename_pattern": "{basename} {pages}.pdf"}.' }),
  store: storeFormSchema,
  // A missing split reaches its own refusal (INVALID_SPLIT_MODE) through the JSON field's reading: required all the same.
}).meta({ required: ['file', 'split'] });

export type SplitForm = FormFields<typeof splitFormSchema>;

function parseJsonQuietly(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : parseJsonText(text);
  } catch {
    return undefined;
  }
}

/** The instant split request (multipart or JSON). */
export function parseSplitRequest(submitted: Submitted<SplitForm>): SplitRequest {
  if ('form' in submitted) {
    const sent = submitted.form;
    const context = { filename: inputName(sent.file?.[0]?.filename, 0), input_index: 0 };
    const form = parseRequest(splitFormSchema, sent, { refusals: { split: splitRefusal(parseJsonQuietly(sent.split), context) } });
    const file = form.file[0];
    return { input: { bytes: file.data, filename: inputName(file.filename, 0), index: 0 }, split: form.split, pattern: form.options, store: form.store };
  }
  const raw = isJsonObject(submitted.json) ? submitted.json : {};
  const context = { filename: inputName(isJsonObject(raw.input) ? raw.input.filename : undefined, 0), input_index: 0 };
  const body = parseRequest(splitJsonBodySchema, submitted.json, {
    example: '{"input": {"pdf_base64": "JVBERi0…", "filename": "a.pdf"}, "split": {"mode": "each_page"}} (or send multipart/form-data)',
    refusals: {
      input: (value, issue) => {
        if (issue.path.length > 1) return inputRefusal({ base: 'input', index: 0, shape: '' }, issue.path[1], issue, value);
        return value === undefined || value === null ? noSplitInput() : invalidParameter('input', 'input must be an object {pdf_base64, filename}.');
      },
      split: splitRefusal(raw.split, context),
    },
  });
  return { input: { bytes: body.input.pdf_base64, filename: inputName(body.input.filename, 0), index: 0 }, split: body.split, pattern: body.options, store: body.store };
}

const splitOnlySchema = z.object({ split: jobSplitModeSchema });

/** A `split` object on its own (a background job's stored request). */
export function parseSplitMode(value: unknown, context: Record<string, unknown> = {}): SplitMode {
  return parseRequest(splitOnlySchema, { split: value }, { refusals: { split: splitRefusal(value, context) } }).split;
}

/** Merge `options` on their own (a background job's stored request). */
export function parseMergeOptions(value: unknown): { outputFilename: string | null; title: string | null } {
  return parseRequest(mergeOptionsSchema, value, { prefix: 'options' });
}

/** Split `options` on their own (a background job's stored request). */
export function parseSplitOptions(value: unknown): FilenamePattern {
  return parseRequest(splitOptionsSchema, value, { prefix: 'options' });
}

// ---- POST /pdf/jobs --------------------------------------------------------------------------------

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

const jobInputFields = {
  filename: filenameSchema,
  s3_key: z.string().min(1).meta({ description: 'The s3_key returned by POST /pdf/upload-url, after the PUT of the file.' }),
};

/** A job's inputs; a missing list is read as an empty one so that it gets the count's refusal (required all the same). */
function jobInputs<T extends z.ZodType>(input: T, count: (items: unknown, ctx: z.RefinementCtx) => void, meta: { description: string; minItems: number; maxItems: number }) {
  return z.array(input).superRefine(count, EVEN_AFTER_FIELD_ERRORS).prefault([]).meta(meta);
}

function splitCountProblem(count: number): ServiceError | undefined {
  if (count === 0) return new ServiceError('MISSING_PDF', 'A split job needs exactly one input {s3_key, filename}.');
  if (count > 1) return new ServiceError('TOO_MANY_FILES', 'A split job takes exactly one input.', { file_count: count, max_files: 1 });
  return undefined;
}

function splitJobCount(items: unknown, ctx: z.RefinementCtx) {
  const problem = Array.isArray(items) ? splitCountProblem(items.length) : undefined;
  if (problem) refuse(ctx, problem, { rank: -1 });
}

/** POST /pdf/jobs: a background merge of 2–100 uploads or split of one, up to 150 MB each. */
export const pdfJobBodySchema = z.discriminatedUnion('operation', [
  z
    .object({
      operation: z.literal('merge').meta({ description: 'merge: the inputs into one PDF, in order.' }),
      inputs: jobInputs(
        z.object({ ...jobInputFields, pages: optional(pageRangeSchema).meta({ description: 'The pages of this input to use, e.g. "1-3,8-end"; absent or null for all.' }) }),
        (items, ctx) => {
          const problem = Array.isArray(items) ? mergeCountProblem(items.length, JOB_LIMITS) : undefined;
          if (problem) refuse(ctx, problem, { rank: -1 });
        },
        { description: 'The uploaded PDFs to merge, 2 to 100, in this order; 150 MB in total.', ...mergeCountBounds(JOB_LIMITS) },
      ),
      options: mergeOptionsSchema,
    })
    .meta({ description: 'A background merge.', required: ['operation', 'inputs'] }),
  z
    .object({
      operation: z.literal('split').meta({ description: 'split: the one input into several PDFs.' }),
      inputs: jobInputs(
        z.object({ ...jobInputFields, pages: optional(z.null()).meta({ description: 'Not used by a split: choose pages with split.mode "extract".' }) }),
        splitJobCount,
        { description: 'The uploaded PDF to split: exactly one (150 MB, 5000 pages).', minItems: 1, maxItems: 1 },
      ),
      split: jobSplitModeSchema,
      options: splitOptionsSchema,
    })
    .superRefine((_job, ctx) => {
      // options must be an object before the split settings are looked at; its fields come after them.
      if (issueAt(ctx.issues, 'options') && !ctx.issues.some((issue) => issue.path?.[0] === 'inputs')) {
        refuse(ctx, invalidParameter('options', 'options: expected an object.'), { rank: -0.5 });
      }
    }, EVEN_AFTER_FIELD_ERRORS)
    .meta({ description: 'A background split.', required: ['operation', 'inputs', 'split'] }),
]);

/** POST /pdf/jobs body. Page ranges and split settings are checked now; page numbers once the files are read. */
export function parsePdfJobRequest(body: unknown): PdfJobRequest {
  const raw = isJsonObject(body) ? body : {};
  const sentInputs = Array.isArray(raw.inputs) ? (raw.inputs as unknown[]) : [];
  const operation = raw.operation === 'split' ? 'split' : 'merge';
  const request = parseRequest(pdfJobBodySchema, body, {
    // With a known operation the input count is its first check.
    first: () => {
      if (!Array.isArray(raw.inputs)) return undefined;
      if (raw.operation === 'merge') return mergeCountProblem(sentInputs.length, JOB_LIMITS);
      return raw.operation === 'split' ? splitCountProblem(sentInputs.length) : undefined;
    },
    refusals: {
      '': () => invalidParameter('body', 'The request body must be a JSON object, e.g. {"operation": "split", "inputs": [{"s3_key": "…"}], "split": {"mode": "each_page"}}.'),
      operation: (value) => invalidParameter('operation', 'operation is required: "merge" or "split".', { operation: value ?? null }),
      inputs: (_value, issue) => {
        if (issue.path.length === 1) return invalidParameter('inputs', 'inputs must be an array of {s3_key, filename, pages}.');
        const index = Number(issue.path[1]);
        return inputRefusal({ base: `inputs[${index}]`, index, shape: '{s3_key, filename, pages}' }, issue.path[2], issue, sentInputs[index], operation);
      },
      split: splitRefusal(raw.split, { filename: inputName(isJsonObject(sentInputs[0]) ? sentInputs[0].filename : undefined, 0), input_index: 0 }),
    },
  });
  const inputs = request.inputs.map((item, index): JobInput => ({ s3_key: item.s3_key, filename: inputName(item.filename, index), pages: item.pages ? item.pages.text : null }));
  return { operation: request.operation, inputs, split: request.operation === 'split' ? (raw.split as Record<string, unknown>) : null, options: isJsonObject(raw.options) ? raw.options : {} };
}
