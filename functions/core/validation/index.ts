import { z } from 'zod';
import { type ErrorDetails, ServiceError, invalidParameter } from '../errors';
import { parseJsonText } from './json-text';

/**
 * Request validation: every request body and query is a zod schema (which also writes the OpenAPI document), and
 * `parseRequest` turns the first problem into the spec's refusal. Zod's own issues become 400 INVALID_PARAMETER
 * naming the parameter unless the request names a spec code for that field (`refusals`); checks that need a spec
 * code of their own add it to the issue with `refuse()`.
 */

/** Builds the spec's refusal for a field whose value failed its schema. `value` is what the client sent there. */
export type Refuser = (value: unknown, issue: z.core.$ZodIssue) => ServiceError;

export interface ParseOptions {
  /**
   * Spec refusals by parameter path ("url", "options.filename_pattern"): the longest path that starts the issue's
   * path wins. Paths not listed get INVALID_PARAMETER.
   */
  refusals?: Record<string, Refuser>;
  /** Prepended to every parameter name (a query's or a nested object's). */
  prefix?: string;
  /** Shown when the body is not a JSON object at all, e.g. '{"name": "CI"}'. */
  example?: string;
  /**
   * The request's first check, run before the schema reads the body: a count that is refused first anyway is refused
   * before zod validates every element of an array of a million (seconds of CPU for one request).
   */
  first?: (input: Record<string, unknown>) => ServiceError | undefined;
}

/** Where a refusal stands among several problems of one request: lower first; fields keep their schema order. */
const RANK = 'rank';
const ERROR = 'serviceError';

/**
 * Adds an issue carrying a spec refusal to a refinement. `rank` below zero puts it ahead of every field's own issue
 * (e.g. CONFLICTING_FIELDS before a field's type), as the spec's error tables order them.
 */
export function refuse(ctx: z.RefinementCtx, error: ServiceError, { path = [], rank }: { path?: PropertyKey[]; rank?: number } = {}): void {
  ctx.addIssue({ code: 'custom', message: error.message, path, params: { [ERROR]: error, ...(rank === undefined ? {} : { [RANK]: rank }) } });
}

/** 400 INVALID_PARAMETER for a zod issue: the parameter's dotted path and what was expected there. */
export function parameterRefusal(parameter: string, issue: z.core.$ZodIssue, value: unknown): ServiceError {
  return invalidParameter(parameter, `${parameter}: ${describeIssue(issue, value)}.`);
}

/** Zod's messages, worded for API clients ("expected a string", "at most 100 characters"). */
function describeIssue(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return 'required';
      return `expected ${issue.expected === 'int' ? 'an integer' : /^[aeiou]/.test(issue.expected) ? `an ${issue.expected}` : `a ${issue.expected}`}`;
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      const word = issue.code === 'too_small' ? 'at least' : 'at most';
      const exact = issue.inclusive === false ? (issue.code === 'too_small' ? 'more than' : 'less than') : word;
      if (issue.origin === 'string') return `${word} ${bound} character${Number(bound) === 1 ? '' : 's'}`;
      if (issue.origin === 'array' || issue.origin === 'set') return `${word} ${bound} item${Number(bound) === 1 ? '' : 's'}`;
      return `${exact} ${bound}`;
    }
    case 'invalid_value':
      return `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
    default:
      return issue.message;
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    // A JSON form field (jsonFormField) is text until parsed: its issues' paths go on into the parsed value.
    if (typeof value === 'string') value = parsedOrText(value);
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function rankOf(issue: z.core.$ZodIssue, fieldOrder: string[]): number {
  const explicit = issue.code === 'custom' ? issue.params?.[RANK] : undefined;
  if (typeof explicit === 'number') return explicit;
  const index = fieldOrder.indexOf(String(issue.path[0]));
  return index === -1 ? fieldOrder.length : index;
}

function parsedOrText(text: string): unknown {
  try {
    return parseJsonText(text);
  } catch {
    return text;
  }
}

/** The spec refusal for the first problem (by rank, then as zod found them). */
export function refusalFor(issues: readonly z.core.$ZodIssue[], input: unknown, schema: z.ZodType, options: ParseOptions = {}): ServiceError {
  const fieldOrder = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const issue = issues
    .map((candidate, order) => ({ candidate, order, rank: rankOf(candidate, fieldOrder) }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order)[0].candidate;
  const carried = issue.code === 'custom' ? issue.params?.[ERROR] : undefined;
  if (carried instanceof ServiceError) return carried;
  const parts = issue.path.map(String);
  const parameter = [options.prefix, ...parts].filter(Boolean).join('.') || options.prefix || 'body';
  const own = parts.join('.');
  const key = Object.keys(options.refusals ?? {})
    .filter((path) => own === path || own.startsWith(`${path}.`))
    .sort((a, b) => b.length - a.length)[0];
  if (key !== undefined) return options.refusals![key](valueAt(input, key.split('.')), issue);
  return parameterRefusal(parameter, issue, valueAt(input, issue.path));
}

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates `input` against `schema`; the first problem becomes the spec refusal (see ParseOptions). */
export function parseRequest<S extends z.ZodType>(schema: S, input: unknown, options: ParseOptions = {}): z.output<S> {
  if (schema instanceof z.ZodObject && !isJsonObject(input)) {
    const what = options.prefix ?? 'body';
    const example = options.example ? `, e.g. ${options.example}` : '';
    throw invalidParameter(what, `${what === 'body' ? 'The request body' : what} must be a JSON object${example}.`);
  }
  const early = options.first && isJsonObject(input) ? options.first(input) : undefined;
  if (early) throw early;
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw refusalFor(parsed.error.issues, input, schema, options);
}

/**
 * Refinement option: the check runs even when fields already failed (zod skips it after a type error otherwise), so
 * it can read their issues and report the first problem in the spec's order. Its input may then be ill-typed.
 */
export const EVEN_AFTER_FIELD_ERRORS = { when: () => true };

/** A zod issue as a refinement sees it in `ctx.issues` (raw) or a refusal receives it (final). */
export type AnyIssue = { readonly code: string; readonly path?: readonly PropertyKey[] };

/** The first issue exactly at `path` (relative to the schema being refined). */
export function issueAt<I extends AnyIssue>(issues: readonly I[], ...path: PropertyKey[]): I | undefined {
  return issues.find((issue) => issue.path?.length === path.length && path.every((key, n) => issue.path![n] === key));
}

/** The first issue at or under `path`. */
export function issueUnder<I extends AnyIssue>(issues: readonly I[], ...path: PropertyKey[]): I | undefined {
  return issues.find((issue) => path.every((key, n) => issue.path?.[n] === key));
}

/**
 * A reference, inside `.meta()`, to a schema named with `.meta({ id })` (the OpenAPI document keeps it under
 * components.schemas): for document keywords that restate what a refinement checks, such as a body's per-type options.
 */
export function schemaRef(id: 'PdfOptions' | 'ImageOptions'): { $ref: string } {
  return { $ref: `#/$defs/${id}` };
}

/** A field that may be left out or sent as null (both mean "use the default"). */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}

/**
 * A query-string integer ("50"): digits only, within [min, max]. Query values arrive as strings, so the schema
 * reads them; the OpenAPI document shows an integer.
 */
export function queryInteger(min: number, max: number) {
  return z
    .string()
    .transform((text, ctx) => {
      const value = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
      if (value >= min && value <= max) return value;
      ctx.addIssue({ code: 'custom', message: `expected a whole number from ${min} to ${max}` });
      return z.NEVER;
    })
    .meta({ type: 'integer', minimum: min, maximum: max } as Record<string, unknown>);
}

/**
 * A multipart field carrying JSON text (`options`, `split`, `page_ranges`): absent or blank is undefined, text that
 * is not JSON is refused with `notJson(reason, text)` (ranked like `rank`), and the parsed value is then read by `inner`.
 */
export function jsonFormField<T extends z.ZodType>(inner: T, notJson: (reason: string, text: string) => ServiceError, { rank }: { rank?: number } = {}) {
  return z
    .string()
    .optional()
    .transform((text, ctx): unknown => {
      if (text === undefined || text.trim() === '') return undefined;
      try {
        return parseJsonText(text);
      } catch (err) {
        refuse(ctx, notJson((err as Error).message, text), { rank });
        return z.NEVER;
      }
    })
    .pipe(inner as unknown as z.ZodType<z.output<T>, unknown>);
}

export { base64Text, decodeBase64Text, decodedLength } from './base64';
export { parseJsonText } from './json-text';
export { labelRule, labelSchema } from './label';
export type { ErrorDetails };
