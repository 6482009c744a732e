import { ServiceError } from '../core/errors';

/**
 * The single map from spec error codes to HTTP statuses (documents 1 and 2). A code not listed is a
 * programming error and is answered as 500 so it is noticed.
 */
const STATUS_BY_CODE: Record<string, number> = {};
const statuses: Record<number, string[]> = {
  400: [
    'MISSING_INPUT_TYPE', 'INVALID_INPUT_TYPE', 'MISSING_CONTENT_FIELD', 'EMPTY_CONTENT_FIELD', 'CONFLICTING_FIELDS',
    'WRONG_FIELD_PROVIDED', 'CONTENT_TYPE_MISMATCH', 'INPUT_SIZE_EXCEEDED', 'MISSING_URL', 'INVALID_URL',
    'PAGE_LIMIT_EXCEEDED', 'INVALID_PARAMETER', 'INVALID_OPTIONS_JSON', 'INVALID_MULTIPART', 'MISSING_IMAGES',
    'INVALID_IMAGE_FORMAT', 'INVALID_IMAGE_DATA', 'IMAGE_TOO_LARGE', 'INVALID_WEBHOOK_URL',
    'INVALID_BUNDLE_TYPE', 'INVALID_BULK_INPUT', 'INVALID_BULK_PATH', 'INVALID_BULK_PATHS', 'INVALID_BASE64', 'BULK_ZIP_TOO_LARGE',
    'BULK_ZIP_TOO_MANY_ENTRIES',
    'MISSING_PDFS', 'MISSING_PDF', 'TOO_MANY_FILES', 'PDF_INPUT_TOO_LARGE', 'PDF_PAGE_LIMIT_EXCEEDED', 'INVALID_PAGE_RANGE',
    'PAGE_OUT_OF_RANGE', 'INVALID_SPLIT_MODE', 'OUTPUT_COUNT_EXCEEDED', 'OUTPUT_TOO_LARGE', 'INVALID_RECIPE', 'UNKNOWN_EDIT_OP',
    'INVALID_EDIT_OP', 'INVALID_PAGE_SELECTION', 'PAGE_ID_UNKNOWN', 'PAGE_ID_DELETED', 'FONT_GLYPH_UNSUPPORTED', 'UNKNOWN_FIELD',
    'INVALID_FIELD_VALUE', 'FIELD_READ_ONLY', 'FIELD_NOT_FLATTENABLE',
    'TEMPLATE_DATA_INVALID', 'TEMPLATE_DATA_TOO_LARGE', 'TEMPLATE_INVALID',
    'MAILMERGE_CONSENT_REQUIRED', 'MAILMERGE_TOO_MANY_ROWS', 'INVALID_EVENTS',
    'INVALID_SIGNATURE',
  ],
  401: ['UNAUTHORIZED'],
  402: ['UPGRADE_REQUIRED', 'PAYMENT_FAILED'],
  403: [
    'ACCOUNT_NOT_FOUND', 'INSUFFICIENT_CREDITS', 'CONVERSION_TYPE_NOT_ENABLED', 'RATE_LIMIT_EXCEEDED', 'ACCESS_DENIED',
    'BULK_NOT_ENABLED', 'FORBIDDEN', 'PDF_TOOLS_NOT_ENABLED', 'PDF_EDITOR_NOT_ENABLED', 'UPLOAD_FORBIDDEN',
    'MAILMERGE_NOT_ENABLED', 'API_KEY_LIMIT_EXCEEDED', 'WEBHOOK_LIMIT_EXCEEDED', 'WEBHOOK_ACCESS_DENIED', 'TEMPLATE_LIMIT_EXCEEDED',
  ],
  404: [
    'NOT_FOUND', 'JOB_NOT_FOUND', 'OUTPUT_NOT_AVAILABLE', 'FILE_NOT_FOUND', 'UPLOAD_NOT_FOUND', 'TEMPLATE_NOT_FOUND',
    'WEBHOOK_NOT_FOUND', 'PLAN_NOT_FOUND', 'API_KEY_NOT_FOUND', 'CAMPAIGN_NOT_FOUND', 'CONNECTION_NOT_FOUND',
  ],
  408: ['QUICKJOB_TIMEOUT', 'PDFOP_TIMEOUT', 'RENDER_TIMEOUT', 'REQUEST_TIMEOUT'],
  409: [
    'JOB_NOT_READY', 'JOB_NOT_CANCELLABLE', 'JOB_ALREADY_FINISHED', 'BULK_JOB_ALREADY_ACTIVE', 'PDF_JOB_ALREADY_ACTIVE', 'COMMIT_IN_PROGRESS',
    'CONNECTION_NOT_VERIFIED', 'MAILMERGE_CAMPAIGN_ALREADY_ACTIVE', 'MAILMERGE_NOT_DRAFT', 'NO_ACTIVE_SUBSCRIPTION', 'NO_BILLING_CUSTOMER',
    'TEMPLATE_VERSION_CONFLICT', 'CONFLICT',
  ],
  410: ['OUTPUT_EXPIRED'],
  413: ['PAYLOAD_TOO_LARGE', 'BULK_INLINE_TOO_LARGE'],
  422: [
    'URL_FETCH_FAILED', 'URL_FETCH_TIMEOUT', 'URL_FETCH_HTTP_ERROR', 'URL_CONTENT_TYPE_NOT_SUPPORTED',
    'PDF_ENCRYPTED', 'INVALID_PDF', 'PDF_NO_PAGES', 'PDF_TOO_COMPLEX', 'PDF_NO_FORM', 'PDF_XFA_FORM', 'NO_ANNOTATIONS',
  ],
  429: ['THROTTLED', 'LIMIT_REQUEST_PENDING'],
  // SERVICE_UNAVAILABLE (a queue or workflow that would not take a job) is a 500, the spec's "server-side failure"
  // that clients retry with backoff; a 503 would fall outside the spec's status table and its retry advice.
  500: ['PDF_GENERATION_FAILED', 'INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE'],
  501: ['NOT_IMPLEMENTED'],
  502: ['PAYMENT_PROVIDER_ERROR'],
  503: ['PAYMENTS_NOT_CONFIGURED'],
};
for (const [status, codes] of Object.entries(statuses)) for (const code of codes) STATUS_BY_CODE[code] = Number(status);

/** Every spec error code by HTTP status (for the OpenAPI document). */
export function codesByStatus(): Record<number, readonly string[]> {
  return statuses;
}

/**
 * Every code an error answer can carry: the handlers answer only these (a code not in the map is answered as 500
 * INTERNAL_SERVER_ERROR), and the gateway's own answers (gateway-responses.ts, the local gateway) use them too.
 */
export const ERROR_CODES: readonly string[] = Object.keys(STATUS_BY_CODE);

export function statusForCode(code: string): number | undefined {
  return STATUS_BY_CODE[code];
}

export interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

export function errorBody(code: string, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { error: { code, message, details } };
}

/**
 * Refusals often show back what was sent (a value, a list of unknown names). What a caller sent can be a 5 MB string or
 * an array nested 100,000 deep, which would make the answer larger than the request, larger than a Lambda may answer
 * (6 MB), or too deep to serialise at all (a 500). So an error shows at most this much of it.
 */
const ERROR_ECHO_LIMITS = { depth: 6, items: 50, stringChars: 2048, messageChars: 4096 } as const;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function bounded(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return clip(value, ERROR_ECHO_LIMITS.stringChars);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= ERROR_ECHO_LIMITS.depth) return Array.isArray(value) ? '[…]' : '{…}';
  if (Array.isArray(value)) return value.slice(0, ERROR_ECHO_LIMITS.items).map((item) => bounded(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).slice(0, ERROR_ECHO_LIMITS.items)) {
    // Defined, not assigned: a "__proto__" key that was sent (JSON.parse makes it an own key) would set the prototype.
    Object.defineProperty(out, clip(key, ERROR_ECHO_LIMITS.stringChars), { value: bounded((value as Record<string, unknown>)[key], depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Any thrown value → status and envelope. Unexpected errors say nothing about internals. */
export function toHttpError(err: unknown, requestId: string): { status: number; body: ErrorBody; unexpected: boolean } {
  if (err instanceof ServiceError) {
    const status = statusForCode(err.code);
    if (status !== undefined) {
      const details = bounded(err.details ?? {}, 0) as Record<string, unknown>;
      return { status, body: errorBody(err.code, clip(err.message, ERROR_ECHO_LIMITS.messageChars), details), unexpected: false };
    }
  }
  return { status: 500, body: internalErrorBody(requestId), unexpected: true };
}

/**
 * The one 500 envelope (also for failures outside the error mapper, e.g. a broken response contract), so clients
 * always see the same code and advice. `details` adds what our own logs and tests need, never internals.
 */
export function internalErrorBody(requestId: string, details: Record<string, unknown> = {}): ErrorBody {
  return errorBody('INTERNAL_SERVER_ERROR', 'Something went wrong on our side. Retry with backoff; if it persists, contact support with the request id.', {
    request_id: requestId,
    ...details,
  });
}
