import { z } from 'zod';
import { imageOptionsSchema } from '../../core/render/images';
import { pdfOptionsSchema } from '../../core/render/options';
import { type RouteDef, ROUTES } from '../../routes';
import { codesByStatus } from '../errors';
import { GATEWAY_RESPONSES, gatewayResponse } from '../gateway-responses';
import { REQUEST_SCHEMAS, type RequestSchemas } from './requests';
import { ERROR_DETAILS, errorBodySchema, successSchema, webhookPayloadSchema } from './responses';

type Json = Record<string, unknown>;

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);
/** JSON Schema's formats (draft 2020-12) that tools validate; others are dropped. */
const STANDARD_FORMATS = new Set(['date-time', 'date', 'time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uri', 'uri-reference', 'uuid', 'regex', 'int32', 'int64', 'float', 'double', 'byte', 'binary']);

/**
 * A zod schema as an OpenAPI schema: named parts (`.meta({ id })`) move to components.schemas and are referenced
 * from there; zod's implementation details (the date-time regex, safe-integer bounds) are left out. A request's
 * defaults are the ones `.meta({ default })` states: zod drops them from schemas that transform (`optional()`),
 * and documents a prefault as a default even where the schema refuses that value (an empty list of inputs).
 */
export function openApiSchema(schema: z.ZodType, components: Record<string, Json>, io: 'input' | 'output'): Json {
  const converted = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
      // zod names some checks as formats no OpenAPI tool knows (startsWith → "starts_with"); the pattern says it.
      if (typeof jsonSchema.format === 'string' && !STANDARD_FORMATS.has(jsonSchema.format)) delete jsonSchema.format;
      for (const bound of ['minimum', 'maximum'] as const) if (SAFE_INTEGER_BOUNDS.has(jsonSchema[bound] as number)) delete jsonSchema[bound];
      if (io !== 'input') return;
      const meta = z.globalRegistry.get(zodSchema);
      if (meta && 'default' in meta) jsonSchema.default = meta.default;
      else if ('default' in jsonSchema && !z.safeParse(zodSchema, jsonSchema.default).success) delete jsonSchema.default;
    },
  }) as Json;
  const text = JSON.stringify(converted).replaceAll('"#/$defs/', '"#/components/schemas/');
  const { $schema: _, $defs, ...body } = JSON.parse(text) as Json & { $defs?: Record<string, Json> };
  Object.assign(components, $defs ?? {});
  const id = z.globalRegistry.get(schema)?.id;
  if (typeof id !== 'string') return body;
  // A named schema comes back as a reference to its own definition, which $defs already moved into components.
  if (body.$ref !== `#/components/schemas/${id}`) components[id] = body;
  return { $ref: `#/components/schemas/${id}` };
}

/** Which security schemes a route accepts (the authorizer: a key wins over a token when both are sent). */
const SECURITY: Record<RouteDef['access'], Json[]> = {
  key_or_token: [{ ApiKeyHeader: [] }, { ApiKeyBearer: [] }, { IdToken: [] }],
  token: [{ IdToken: [] }],
  none: [],
};

/** Error statuses of a route beyond those every route of its kind has (see `errorStatuses`). */
const ROUTE_ERROR_STATUSES: Record<string, number[]> = {
  'quickjob.create': [402, 408, 422],
  'longjob.create': [402, 408],
  'bulkjob.uploadUrl': [402],
  'bulkjob.create': [402, 404, 409],
  'jobs.download': [409, 410],
  'jobs.fileDownload': [409, 410],
  'jobs.cancel': [409],
  'subscription.cancel': [409, 502, 503],
  'subscription.resume': [409, 502, 503],
  'subscription.change': [402, 409, 502, 503],
  'subscription.portal': [409, 502, 503],
  'stripe.webhook': [502, 503],
  'pdf.merge': [402, 408, 422],
  'pdf.split': [402, 408, 422],
  'pdf.inspect': [402, 404, 408, 422],
  'pdf.uploadUrl': [402],
  'pdf.jobs': [402, 404, 409],
  'webhooks.rotateSecret': [409],
};

/**
 * Every error status a route can answer: bad input, a request that arrives too slowly, throttling and failures
 * everywhere, and in AWS API Gateway's own 502 and 504 for any route's function (AWS_GATEWAY_STATUSES); credentials
 * where it needs one; 404 where the path names a resource; 413 for bodies; then the route's own
 * (ROUTE_ERROR_STATUSES). Routes not built yet add 501. The test stack checks every answer against this list
 * (RESPONSE_CONTRACT=strict).
 */
export function errorStatuses(route: RouteDef): number[] {
  const statuses = new Set([400, 408, 429, 500, ...AWS_GATEWAY_STATUSES]);
  if (route.access !== 'none') [401, 403].forEach((s) => statuses.add(s));
  if (route.path.includes('{')) statuses.add(404);
  if (route.method === 'POST' || route.method === 'PUT') statuses.add(413);
  if (route.handler === null) statuses.add(501);
  for (const s of ROUTE_ERROR_STATUSES[route.id] ?? []) statuses.add(s);
  return [...statuses].sort((a, b) => a - b);
}

function errorResponses(route: RouteDef): Record<string, Json> {
  return Object.fromEntries(errorStatuses(route).map((status) => [status, { $ref: `#/components/responses/Error${status}` }]));
}

/**
 * Statuses API Gateway answers for any route's function in AWS (gateway-responses.ts): 502 when the function failed
 * without answering (it crashed or ran out of time), 504 when the gateway stopped waiting for it.
 */
const AWS_GATEWAY_STATUSES = [502, 504] as const;

/**
 * The codes each error status carries: the handlers' map (errors.ts) and the gateway's own answers with a fixed status
 * and code (gateway-responses.ts; the authorizer's refusals fill in UNAUTHORIZED). Per status, not per operation: the
 * codes are thrown by domain code shared between routes, so a per-operation list could only be kept by hand.
 */
export function documentedCodesByStatus(): Record<number, string[]> {
  const out: Record<number, string[]> = {};
  for (const [status, codes] of Object.entries(codesByStatus())) out[Number(status)] = [...codes];
  const add = (status: number, code: string) => {
    const codes = (out[status] ??= []);
    if (!codes.includes(code)) codes.push(code);
  };
  for (const def of GATEWAY_RESPONSES) if (def.status !== undefined && !def.code.startsWith('$')) add(def.status, def.code);
  // A function that failed without answering: API Gateway's 502, in its default 5xx envelope.
  add(502, gatewayResponse('DEFAULT_5XX').code);
  return out;
}

/** What a status means beyond its codes, where that needs saying. */
const STATUS_NOTES: Record<number, string> = {
  401: 'A missing or refused credential, answered by the gateway before any function runs.',
  408:
    'Besides the operation\'s own time limits: REQUEST_TIMEOUT when the request itself did not arrive in time (the local gateway; ' +
    'API Gateway cuts slow clients off itself). Send the whole request at once, then retry.',
  502:
    `Besides payment provider failures: in AWS, ${gatewayResponse('DEFAULT_5XX').code} when the route's function failed without ` +
    'answering (it crashed or ran out of time). Retry with backoff.',
  504:
    `AWS only (the local service never answers it): API Gateway stopped waiting for the function (its integration timeout, ` +
    `29 s unless raised), with code ${gatewayResponse('INTEGRATION_TIMEOUT').code}. The function may still finish what it started ` +
    '(a quick job past its limit is not charged). Retry with backoff, or use an asynchronous route.',
};

/** Headers every answer (REQUEST_ID) or every 401 (the challenge) carries: components.headers. */
const RESPONSE_HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description:
      "The request's id (API Gateway's request id); quote it to support. On every answer of the service's functions and of the local " +
      "gateway. In AWS, API Gateway's own answers (a refused credential, no such route, a body over 6 MB, throttling, 504) carry the same id as x-amzn-RequestId instead.",
    schema: { type: 'string' },
  },
  'WWW-Authenticate': {
    description: 'The scheme that works (RFC 9110): Authorization: Bearer with an API key (pk_…) or an ID token; X-API-Key works too.',
    schema: { type: 'string', enum: [gatewayResponse('UNAUTHORIZED').headers!['WWW-Authenticate']] },
  },
};
const REQUEST_ID = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };

/** A response header: what it says, and the zod schema of its value (the contract check holds answers to it). */
export interface HeaderDoc {
  description: string;
  schema: z.ZodType;
}

const jobIdHeader = (description: string): HeaderDoc => ({ description, schema: z.string().min(1) });
const pagesHeader: HeaderDoc = { description: 'Pages in the PDF, an integer in text.', schema: z.string().regex(/^[0-9]+$/) };

/** Routes whose success is the PDF itself (unless stored), with the headers that describe it. */
export const PDF_RESPONSE_HEADERS: Record<string, Record<string, HeaderDoc>> = {
  'quickjob.create': {
    'Content-Disposition': { description: 'inline; filename=<job_id>.pdf', schema: z.string() },
    'X-PDF-Pages': pagesHeader,
    'X-PDF-Truncated': {
      description: 'Always "false": kept for compatibility (document 1); pageRanges chooses pages, it never cuts a document short.',
      schema: z.enum(['true', 'false']),
    },
    'X-Job-Id': jobIdHeader('The job that made it (GET /jobs/{job_id}).'),
  },
  'pdf.merge': {
    'Content-Disposition': { description: 'attachment, with the output file name (ASCII and UTF-8 forms).', schema: z.string() },
    'X-PDF-Pages': pagesHeader,
    'X-PDF-Output-Count': { description: 'Always 1 for a PDF body.', schema: z.literal('1') },
    'X-PDF-Warnings': { description: 'Comma-separated warnings (e.g. BOOKMARKS_NOT_PRESERVED), empty when none. Also on a stored result.', schema: z.string() },
    'X-Job-Id': jobIdHeader('The job that made it. Also on a stored result.'),
  },
};
PDF_RESPONSE_HEADERS['pdf.split'] = PDF_RESPONSE_HEADERS['pdf.merge'];

function headerObject({ description, schema }: HeaderDoc): Json {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as Json;
  return { description, schema: json };
}

function successBody(route: RouteDef, status: number, components: Record<string, Json>): Json {
  const schema = successSchema(route.id, status);
  if (!schema) return { description: 'Success (see the README for the body of this route).', headers: REQUEST_ID };
  const json = { 'application/json': { schema: openApiSchema(schema, components, 'output') } };
  const pdfHeaders = PDF_RESPONSE_HEADERS[route.id];
  if (!pdfHeaders) return { description: 'Success.', headers: REQUEST_ID, content: json };
  return {
    description: 'Success: the PDF itself, or JSON with a download link when it was stored (store: true, several files, or too large to return).',
    headers: { ...Object.fromEntries(Object.entries(pdfHeaders).map(([name, header]) => [name, headerObject(header)])), ...REQUEST_ID },
    content: { 'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf' } }, ...json },
  };
}

/** The error envelope's `details` per code (ERROR_DETAILS), as JSON Schema conditionals on `code`. */
function withDetailsByCode(errorSchema: Json, components: Record<string, Json>): void {
  const error = (errorSchema.properties as Record<string, Json>).error;
  error.allOf = Object.entries(ERROR_DETAILS).map(([code, details]) => ({
    if: { properties: { code: { const: code } }, required: ['code'] },
    then: { properties: { details: openApiSchema(details, components, 'output') } },
  }));
}

/** One query parameter per property of the route's query schema, with its description and whether it is required. */
function queryParameters(query: RequestSchemas['query'], components: Record<string, Json>): Json[] {
  if (!query) return [];
  const schema = openApiSchema(query, components, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'query', required: schema.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest };
  });
}

function requestBody(route: RouteDef, components: Record<string, Json>): Json | null {
  const doc = REQUEST_SCHEMAS[route.id];
  if (doc?.json || doc?.form) {
    const content: Json = {};
    if (doc.json) content['application/json'] = { schema: openApiSchema(doc.json, components, 'input') };
    if (doc.form) content['multipart/form-data'] = { schema: openApiSchema(doc.form, components, 'input') };
    return { required: !doc.bodyOptional, content };
  }
  return null;
}

function operation(route: RouteDef, components: Record<string, Json>): Json {
  const parameters = [
    ...[...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: name.endsWith('_index') ? { type: 'integer', minimum: 0 } : { type: 'string' } })),
    ...queryParameters(REQUEST_SCHEMAS[route.id]?.query, components),
  ];
  const body = requestBody(route, components);
  const built = route.handler !== null;
  return {
    operationId: route.id,
    summary: route.summary,
    tags: [route.path.split('/')[1]],
    ...(parameters.length ? { parameters } : {}),
    security: SECURITY[route.access],
    ...(built ? {} : { description: 'Not built yet: answers 501 NOT_IMPLEMENTED.', 'x-implemented': false }),
    ...(body ? { requestBody: body } : {}),
    responses: {
      ...(built ? Object.fromEntries(successStatuses(route).map((status) => [status, successBody(route, status, components)])) : {}),
      ...errorResponses(route),
    },
  };
}

/** Routes that do not (only) answer 200 on success: accepted jobs, created resources, a cancel still under way. */
const SUCCESS_STATUSES: Record<string, number[]> = {
  'longjob.create': [202],
  'bulkjob.create': [202],
  'pdf.jobs': [202],
  'apiKeys.create': [201],
  'webhooks.create': [201],
  'jobs.cancel': [200, 202],
};

export function successStatuses(route: RouteDef): number[] {
  return route.handler === null ? [] : (SUCCESS_STATUSES[route.id] ?? [200]);
}

/** The components' schemas with the named option schemas (PdfOptions, ImageOptions), which request bodies reference. */
function namedOptions(schemas: Record<string, Json>): Record<string, Json> {
  for (const named of [pdfOptionsSchema, imageOptionsSchema]) openApiSchema(named, schemas, 'input');
  return schemas;
}

/**
 * This API as an OpenAPI 3.1 document, built from the route table (paths, credentials, what is not built yet),
 * the error map (every code under its status) and the zod options schema, so it cannot drift from them.
 */
export function openApiDocument(routes: readonly RouteDef[] = ROUTES): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const schemas: Record<string, Json> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, schemas);

  const errorSchema = openApiSchema(errorBodySchema, schemas, 'output');
  withDetailsByCode(schemas.Error, schemas);
  const errorResponses: Record<string, Json> = {};
  for (const [status, codes] of Object.entries(documentedCodesByStatus())) {
    const note = STATUS_NOTES[Number(status)];
    errorResponses[`Error${status}`] = {
      description: `Codes: ${codes.join(', ')} (every code of this status in the API; an operation answers those that apply to it).${note ? ` ${note}` : ''}`,
      headers: { ...REQUEST_ID, ...(status === '401' ? { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } } : {}) },
      content: {
        'application/json': {
          schema: { allOf: [errorSchema, { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } }] },
        },
      },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'PDF service',
      version: '1',
      description: 'HTML, Markdown, URLs and images to PDF; PDF tools; jobs, billing and webhooks. Every refusal is { error: { code, message, details } }.',
    },
    paths,
    webhooks: {
      jobEvent: {
        post: {
          summary: 'A job event, POSTed to every active webhook subscribed to it',
          description:
            'When the webhook has a secret, Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"> signs it ' +
            "(Stripe's scheme; during a rotation's grace period a second v1 for the previous secret). A 2xx answer within 10 s is " +
            'success; a network error, a timeout, 429 or 5xx is retried after 1, 2 and 4 s; redirects and other 4xx are not retried.',
          parameters: [
            { name: 'Service-Signature', required: false },
            { name: 'User-Agent', required: true },
            { name: 'X-Webhook-Event', required: true },
            { name: 'X-Webhook-Id', required: true },
            { name: 'X-Webhook-Delivery-Id', required: true, description: 'A ULID, the same on every retry of one delivery.' },
            { name: 'X-Webhook-Timestamp', required: true },
          ].map((header) => ({ ...header, in: 'header', schema: { type: 'string' } })),
          requestBody: { required: true, content: { 'application/json': { schema: openApiSchema(webhookPayloadSchema, schemas, 'output') } } },
          responses: { '2XX': { description: 'Acknowledges the delivery.' } },
        },
      },
    },
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (pk_…).' },
        ApiKeyBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'pk_…', description: 'An API key sent as Authorization: Bearer pk_….' },
        IdToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A Cognito ID token of the dashboard.' },
      },
      responses: errorResponses,
      headers: RESPONSE_HEADERS,
      schemas: namedOptions(schemas),
    },
  };
}
