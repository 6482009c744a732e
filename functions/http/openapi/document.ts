import { z } from 'zod';
import { pdfOptionsSchema } from '../../core/render/options';
import { type RouteDef, ROUTES } from '../../routes';
import { codesByStatus } from '../errors';
import { RESPONSE_SCHEMAS, errorBodySchema } from './responses';

type Json = Record<string, unknown>;

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/**
 * A zod schema as an OpenAPI schema: named parts (`.meta({ id })`) move to components.schemas and are referenced
 * from there; zod's implementation details (the date-time regex, safe-integer bounds) are left out.
 */
export function openApiSchema(schema: z.ZodType, components: Record<string, Json>, io: 'input' | 'output'): Json {
  const converted = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: ({ jsonSchema }) => {
      if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
      for (const bound of ['minimum', 'maximum'] as const) if (SAFE_INTEGER_BOUNDS.has(jsonSchema[bound] as number)) delete jsonSchema[bound];
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

/** Statuses every route can answer besides its own: bad input, credentials, gateway limits, failures. */
function commonResponses(route: RouteDef): Record<string, Json> {
  const ref = (status: number) => ({ $ref: `#/components/responses/Error${status}` });
  const responses: Record<string, Json> = { 400: ref(400), 429: ref(429), 500: ref(500) };
  if (route.access !== 'none') Object.assign(responses, { 401: ref(401), 403: ref(403) });
  if (route.path.includes('{')) responses[404] = ref(404);
  if (route.method === 'POST' || route.method === 'PUT') responses[413] = ref(413);
  return responses;
}

function successBody(route: RouteDef, components: Record<string, Json>): Json {
  const schema = RESPONSE_SCHEMAS[route.id];
  if (!schema) return { description: 'Success (see the README for the body of this route).' };
  return { description: 'Success.', content: { 'application/json': { schema: openApiSchema(schema, components, 'output') } } };
}

function operation(route: RouteDef, components: Record<string, Json>): Json {
  const parameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const built = route.handler !== null;
  return {
    operationId: route.id,
    summary: route.summary,
    tags: [route.path.split('/')[1]],
    ...(parameters.length ? { parameters } : {}),
    security: SECURITY[route.access],
    ...(built ? {} : { description: 'Not built yet: answers 501 NOT_IMPLEMENTED.', 'x-implemented': false }),
    ...(REQUEST_BODIES[route.id] ? { requestBody: { required: true, content: REQUEST_BODIES[route.id] } } : {}),
    responses: {
      ...(built ? { [SUCCESS_STATUS[route.id] ?? 200]: successBody(route, components) } : { 501: { $ref: '#/components/responses/Error501' } }),
      ...commonResponses(route),
    },
  };
}

/** Routes that do not answer 200 on success: accepted jobs and created resources. */
const SUCCESS_STATUS: Record<string, number> = {
  'longjob.create': 202,
  'bulkjob.create': 202,
  'pdf.jobs': 202,
  'apiKeys.create': 201,
  'webhooks.create': 201,
};

const schemaRef = (name: string) => ({ schema: { $ref: `#/components/schemas/${name}` } });

/** Request bodies described so far (the README has the rest). */
const REQUEST_BODIES: Record<string, Json> = {
  'quickjob.create': { 'application/json': schemaRef('QuickJobRequest'), 'multipart/form-data': schemaRef('QuickJobImageForm') },
  'longjob.create': { 'application/json': schemaRef('LongJobRequest') },
};

const CONVERSION_BASE = {
  input_type: { type: 'string', enum: ['html', 'markdown', 'url'] },
  html: { type: 'string', description: 'With input_type html; up to 5 MB.' },
  markdown: { type: 'string', description: 'With input_type markdown; leading YAML front matter is removed.' },
  options: { $ref: '#/components/schemas/PdfOptions' },
};

/**
 * This API as an OpenAPI 3.1 document, built from the route table (paths, credentials, what is not built yet),
 * the error map (every code under its status) and the zod options schema, so it cannot drift from them.
 */
export function openApiDocument(routes: readonly RouteDef[] = ROUTES): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const schemas: Record<string, Json> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, schemas);

  const errorSchema = openApiSchema(errorBodySchema, schemas, 'output');
  const errorResponses: Record<string, Json> = {};
  for (const [status, codes] of Object.entries(codesByStatus())) {
    errorResponses[`Error${status}`] = {
      description: `Codes: ${codes.join(', ')}.`,
      content: { 'application/json': { schema: errorSchema } },
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
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (pk_…).' },
        ApiKeyBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'pk_…', description: 'An API key sent as Authorization: Bearer pk_….' },
        IdToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A Cognito ID token of the dashboard.' },
      },
      responses: errorResponses,
      schemas: {
        ...schemas,
        PdfOptions: z.toJSONSchema(pdfOptionsSchema, { io: 'input', unrepresentable: 'any' }),
        QuickJobRequest: {
          type: 'object',
          required: ['input_type'],
          properties: {
            ...CONVERSION_BASE,
            url: { type: 'string', format: 'uri', description: 'With input_type url: a public HTTPS address.' },
            store: { type: 'boolean', description: 'Answer JSON with a one-hour download link instead of the PDF.' },
          },
        },
        LongJobRequest: {
          type: 'object',
          required: ['input_type'],
          properties: {
            input_type: { type: 'string', enum: ['html', 'markdown'] },
            html: CONVERSION_BASE.html,
            markdown: CONVERSION_BASE.markdown,
            options: CONVERSION_BASE.options,
            email_notification: { type: 'boolean', description: 'false turns the ready/failed email off for this job.' },
            webhook_url: { type: 'string', format: 'uri', description: 'Checked (HTTPS only) and otherwise ignored: webhooks are registered under /accounts/me/webhooks.' },
          },
        },
        QuickJobImageForm: {
          type: 'object',
          required: ['input_type', 'images'],
          properties: {
            input_type: { type: 'string', enum: ['image'] },
            images: { type: 'array', items: { type: 'string', format: 'binary' }, description: 'PNG or JPEG files, one page each (the field repeated, up to 25).' },
            options: { type: 'string', description: 'JSON: format, margin (10mm default), fit (contain, cover, fill, none), landscape.' },
            store: { type: 'string', enum: ['true', 'false'] },
          },
        },
      },
    },
  };
}
