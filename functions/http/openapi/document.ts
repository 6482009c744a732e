import { z } from 'zod';
import { pdfOptionsSchema } from '../../core/render/options';
import { type RouteDef, ROUTES } from '../../routes';
import { codesByStatus } from '../errors';
import { REQUEST_SCHEMAS, type RequestSchemas } from './requests';
import { RESPONSE_SCHEMAS, errorBodySchema, webhookPayloadSchema } from './responses';

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
    ...[...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
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
      schemas: {
        ...schemas,
        PdfOptions: openApiSchema(pdfOptionsSchema, schemas, 'input'),
      },
    },
  };
}
