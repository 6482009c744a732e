import { z } from 'zod';
import { CONVERSION_TYPES } from '../billing/plans';
import { ServiceError, invalidParameter, isServiceError } from '../errors';
import { contentMismatch } from '../render/content-sniffer';
import { imageOptionsSchema, parseImageOptions } from '../render/images';
import { MARKDOWN_DEFAULT_MARGIN } from '../render/markdown';
import { type PdfOptions, parsePdfOptions, pdfOptionsSchema } from '../render/options';
import { EVEN_AFTER_FIELD_ERRORS, type Refuser, optional, parseRequest, refuse, schemaRef } from '../validation';

/** Inline content (HTML or Markdown) may be up to 5 MB. */
export const MAX_CONTENT_BYTES = 5 * 1024 * 1024;

const CONTENT_FIELDS = ['html', 'markdown', 'url'] as const;
type ContentField = (typeof CONTENT_FIELDS)[number];

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

/** 400 MISSING_INPUT_TYPE or INVALID_INPUT_TYPE for an `input_type` no conversion route takes; null for one some route takes. */
export function inputTypeRefusal(value: unknown, missingMessage = `input_type is required: one of ${CONVERSION_TYPES.join(', ')}.`): ServiceError | null {
  if (value === undefined || value === null || value === '') return new ServiceError('MISSING_INPUT_TYPE', missingMessage);
  if (typeof value !== 'string' || !(CONVERSION_TYPES as readonly string[]).includes(value)) {
    return new ServiceError('INVALID_INPUT_TYPE', `input_type must be one of ${CONVERSION_TYPES.join(', ')}.`, { input_type: value, allowed: CONVERSION_TYPES });
  }
  return null;
}

/**
 * A refusal about the printed document names the field the caller sent it in: the renderer only sees HTML and calls
 * it `html`, also for Markdown, a URL's page or images (`images`).
 */
export function namingInputField(err: ServiceError, inputType: string): ServiceError {
  const field = inputType === 'image' ? 'images' : inputType;
  if (err.details.parameter !== 'html' || field === 'html') return err;
  return new ServiceError(err.code, err.message, { ...err.details, parameter: field });
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

const textField = (type: 'html' | 'markdown', what: string) =>
  z
    .string()
    .nullish()
    .meta({ description: `${what}, with input_type "${type}" (required then, refused otherwise). Up to 5 MB (UTF-8); must not be blank, and must not plainly be another type's content.` });

/** The fields of a JSON conversion body, in the order their own problems are reported. */
export const conversionFields = {
  input_type: z.enum(['html', 'markdown', 'url']).meta({ description: 'What is converted: html, markdown or url. Images are sent as multipart/form-data instead.' }),
  html: textField('html', 'The HTML document'),
  markdown: textField('markdown', 'The Markdown document (GitHub flavour; leading YAML front matter is removed and its title used)'),
  url: z
    .string()
    .trim()
    .nullish()
    .meta({
      description:
        'With input_type "url" (required then, refused otherwise): a public https:// address, fetched server-side (≤ 5 redirects, 10 s, 5 MB) and converted by its Content-Type.',
      format: 'uri',
    }),
  options: optional(z.union([pdfOptionsSchema.loose(), imageOptionsSchema.loose()])).meta({
    description:
      'PDF options (absent or null: the defaults); HTML and Markdown take exactly these. A URL is read either way until it is fetched: a URL that serves an image takes the image options (format, margin, landscape, width, height, fit) instead.',
    // The loose readings accept any object here; the content rules then read it as input_type uses it (see the body's oneOf).
    anyOf: [schemaRef('PdfOptions'), schemaRef('ImageOptions'), { type: 'null' }],
  }),
  store: optional(z.boolean()).meta({ description: 'true stores the PDF and answers JSON with a one-hour download link instead of the PDF. Default false.', default: false }),
};

/*
 * The content rules of the spec's error table, as ranked refusals. They wait for a valid input_type (whose own
 * problems are the first ones), then come ahead of every field's type: conflicting fields, a field that does not
 * belong to input_type, the missing field; its type (the field's own schema); then emptiness, size, and content that
 * plainly is something else. Options follow (their reading depends on input_type, so it happens here too, ranked
 * just ahead of the options field), then store.
 */
const RANK = { conflicting: -6, wrongField: -5, missing: -4, empty: -3, size: -2, mismatch: -1 } as const;

interface RuleContext {
  /** The input types the schema's input_type takes: the rules wait for one of them. */
  types: readonly unknown[];
  optionsRank: number;
}

function contentRules(body: Record<string, unknown>, ctx: z.RefinementCtx, { types, optionsRank }: RuleContext): void {
  const type = body.input_type;
  if (!types.includes(type) || (type !== 'html' && type !== 'markdown' && type !== 'url')) return;
  // null means absent, as for every optional field: clients that send every field, null when unused, are not refused.
  if (body.html != null && body.markdown != null) {
    return refuse(ctx, new ServiceError('CONFLICTING_FIELDS', 'Send either html or markdown, not both.', { fields: ['html', 'markdown'] }), { rank: RANK.conflicting });
  }
  const wrong = CONTENT_FIELDS.find((field: ContentField) => field !== type && body[field] != null);
  if (wrong) {
    const message = `input_type is "${type}", so send the content in "${type}", not in "${wrong}".`;
    return refuse(ctx, new ServiceError('WRONG_FIELD_PROVIDED', message, { field: wrong, input_type: type, expected_field: type }), { rank: RANK.wrongField });
  }
  const value = body[type];
  if (type === 'url') {
    if (value === undefined || value === null || value === '') {
      return refuse(ctx, new ServiceError('MISSING_URL', 'url is required for input_type "url": a public https:// address.'), { rank: RANK.missing });
    }
    return checkOptions(ctx, optionsRank, () => assertUsableUrlOptions(body.options));
  }
  if (value === undefined || value === null) {
    return refuse(ctx, new ServiceError('MISSING_CONTENT_FIELD', `input_type is "${type}", so the "${type}" field is required.`, { field: type }), { rank: RANK.missing });
  }
  if (typeof value === 'string') {
    const problem = contentProblem(type, value);
    if (problem) return refuse(ctx, problem.error, { rank: RANK[problem.rank] });
  }
  checkOptions(ctx, optionsRank, () => parseTextOptions(type, body.options));
}

/** Emptiness, size and content sniffing of html or markdown. */
function contentProblem(type: 'html' | 'markdown', value: string): { error: ServiceError; rank: keyof typeof RANK } | null {
  if (value.trim() === '') return { rank: 'empty', error: new ServiceError('EMPTY_CONTENT_FIELD', `The "${type}" field is empty; send the document to convert in it.`, { field: type }) };
  const size = Buffer.byteLength(value, 'utf8');
  if (size > MAX_CONTENT_BYTES) {
    const message = `${type} is ${size} bytes; the limit is ${MAX_CONTENT_BYTES} bytes (5 MB). Use /bulkjob with an uploaded ZIP for bigger documents.`;
    return { rank: 'size', error: new ServiceError('INPUT_SIZE_EXCEEDED', message, { field: type, size_bytes: size, max_bytes: MAX_CONTENT_BYTES }) };
  }
  const detected = contentMismatch(type, value);
  if (!detected) return null;
  const hint = detected === 'html' || detected === 'markdown' || detected === 'url' ? ` Send it with input_type "${detected}".` : '';
  const message = `The ${type} field looks like ${detected} content, not ${type}.${hint}`;
  return { rank: 'mismatch', error: new ServiceError('CONTENT_TYPE_MISMATCH', message, { input_type: type, detected_type: detected }) };
}

/** Reads the options as input_type will use them; their refusal (INVALID_PARAMETER options.<key>) joins the issues. */
function checkOptions(ctx: z.RefinementCtx, rank: number, read: () => unknown): void {
  try {
    read();
  } catch (err) {
    if (!isServiceError(err)) throw err;
    refuse(ctx, err, { path: ['options'], rank });
  }
}

/**
 * The content rules as the OpenAPI document states them: one branch per input type, with its content field required
 * (not blank; https for a URL), the other content fields absent or null, and the options as that type reads them.
 * Emptiness is exact; size (bytes, not characters) and content sniffing are checked by the service only.
 */
function contentBranch(type: ContentField): Record<string, unknown> {
  const others = Object.fromEntries(CONTENT_FIELDS.filter((field) => field !== type).map((field) => [field, { type: 'null' }]));
  const content = type === 'url' ? { type: 'string', pattern: String.raw`^\s*[hH][tT][tT][pP][sS]:` } : { type: 'string', pattern: String.raw`\S`, maxLength: MAX_CONTENT_BYTES };
  const options = type === 'url' ? [schemaRef('PdfOptions'), schemaRef('ImageOptions')] : [schemaRef('PdfOptions')];
  return {
    properties: { input_type: { const: type }, ...others, [type]: content, options: { anyOf: [...options, { type: 'null' }] } },
    required: ['input_type', type],
  };
}

/**
 * Adds the content rules to a conversion body's object schema (which must hold every content field it refuses:
 * as a field, or by being loose). They run even when a field failed, so they guard every type they read.
 */
export function withContentRules<T extends z.ZodObject<{ input_type: z.ZodEnum }>>(schema: T): T {
  const rules: RuleContext = { types: schema.shape.input_type.options, optionsRank: Object.keys(schema.shape).indexOf('options') - 0.5 };
  return schema
    .superRefine((body, ctx) => contentRules(body as Record<string, unknown>, ctx, rules), EVEN_AFTER_FIELD_ERRORS)
    .meta({ oneOf: rules.types.map((type) => contentBranch(type as ContentField)) });
}

/** Route quickjob.create, application/json: HTML, Markdown or URL input. */
export const quickjobBodySchema = withContentRules(z.object(conversionFields)).meta({
  description: 'A synchronous conversion: exactly one of html, markdown or url, matching input_type.',
});

/** Spec codes for a conversion body's own field problems: input_type, and a url that is not a string. */
export const conversionRefusals: Record<string, Refuser> = {
  input_type: (value) =>
    inputTypeRefusal(value) ??
    (value === 'image'
      ? invalidParameter('input_type', 'Image input is sent as multipart/form-data with one "images" part per PNG or JPEG file.')
      : invalidParameter('input_type', `input_type must be one of ${CONVERSION_TYPES.join(', ')}.`)),
  url: (value) => new ServiceError('INVALID_URL', 'url must be a string holding an https:// address.', { url: value }),
};

const EXAMPLE = '{"input_type": "html", "html": "<p>Hello</p>"}';

/**
 * A JSON conversion request body (quickjob), refused in the spec's order: MISSING_INPUT_TYPE / INVALID_INPUT_TYPE,
 * CONFLICTING_FIELDS, WRONG_FIELD_PROVIDED, MISSING_CONTENT_FIELD / MISSING_URL, the field's type, EMPTY_CONTENT_FIELD,
 * INPUT_SIZE_EXCEEDED, CONTENT_TYPE_MISMATCH, then options (INVALID_PARAMETER options.<key>), then store.
 */
export function parseJsonConversion(body: unknown): JsonConversion {
  const request = parseRequest(quickjobBodySchema, body, { refusals: conversionRefusals, example: EXAMPLE });
  const store = request.store ?? false;
  if (request.input_type === 'url') return { input_type: 'url', url: request.url!, rawOptions: request.options, store };
  const type = request.input_type;
  return { input_type: type, content: request[type]!, options: parseTextOptions(type, request.options), store };
}
