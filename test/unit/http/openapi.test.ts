import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiDocument } from '../../../functions/http/openapi/document';
import { codesByStatus } from '../../../functions/http/errors';
import { PDF_OPTION_KEYS } from '../../../functions/core/render/options';
import { ROUTES, routeById } from '../../../functions/routes';
import { RESPONSE_SCHEMAS, UNDESCRIBED_RESPONSES } from '../../../functions/http/openapi/responses';
import { contractViolation } from '../../../functions/http/openapi/contract';
import { json, pdf } from '../../../functions/http/responses';
import { BODILESS_WRITES, REQUEST_SCHEMAS } from '../../../functions/http/openapi/requests';
import { createWebhookBodySchema } from '../../../functions/core/webhooks/requests';
import { quickjobBodySchema } from '../../../functions/core/conversion/request';

type Json = Record<string, any>;
const doc = openApiDocument() as Json;

/** Every "$ref" string anywhere in a value. */
function refs(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refs);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refs(v)));
  return [];
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (checked against the specification\'s own schema)', async () => {
    const result = await new Validator().validate(openApiDocument() as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // The validator does refuse a broken document (a response without its description).
    const broken = openApiDocument() as Json;
    delete broken.paths['/jobs/{job_id}'].get.responses['200'].description;
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });

  it('has one operation per route, with its id, path parameters and credentials', () => {
    const operations = Object.values(doc.paths as Json).flatMap((methods) => Object.values(methods as Json));
    expect(operations).toHaveLength(ROUTES.length);
    for (const route of ROUTES) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op?.operationId).toBe(route.id);
      const schemes = (op.security as Json[]).flatMap((s) => Object.keys(s)).sort();
      expect(schemes).toEqual({ key_or_token: ['ApiKeyBearer', 'ApiKeyHeader', 'IdToken'], token: ['IdToken'], none: [] }[route.access]);
      const pathParameters = (op.parameters ?? []).filter((p: Json) => p.in === 'path');
      expect(pathParameters.map((p: Json) => p.name)).toEqual([...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
    }
  });

  it('gives accepted jobs and created resources their own success status', () => {
    expect(Object.keys(doc.paths['/longjob'].post.responses)).toContain('202');
    expect(Object.keys(doc.paths['/accounts/me/api-keys'].post.responses)).toContain('201');
    expect(Object.keys(doc.paths['/quickjob'].post.responses)).toContain('200');
  });

  it('marks routes not built yet with their 501 answer, and only those', () => {
    for (const route of ROUTES) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      expect([route.id, '501' in op.responses]).toEqual([route.id, route.handler === null]);
      expect([route.id, op['x-implemented']]).toEqual([route.id, route.handler === null ? false : undefined]);
    }
  });

  it('lists every error code under its status, and every reference resolves', () => {
    for (const [status, codes] of Object.entries(codesByStatus())) {
      for (const code of codes) expect(doc.components.responses[`Error${status}`].description).toContain(code);
    }
    for (const ref of refs(doc)) {
      const target = ref.replace(/^#\//, '').split('/').reduce((node: Json | undefined, key) => node?.[key], doc);
      expect([ref, target !== undefined]).toEqual([ref, true]);
    }
  });

  it('describes every PDF option from the schema that validates it', () => {
    expect(Object.keys(doc.components.schemas.PdfOptions.properties).sort()).toEqual([...PDF_OPTION_KEYS].sort());
    expect(doc.components.schemas.PdfOptions.properties.scale).toMatchObject({ minimum: 0.1, maximum: 2 });
  });

  it('documents the success body of every built route, or lists it as not described yet', () => {
    for (const route of ROUTES.filter((r) => r.handler !== null)) {
      const described = route.id in RESPONSE_SCHEMAS;
      const listed = (UNDESCRIBED_RESPONSES as readonly string[]).includes(route.id);
      expect([route.id, described !== listed]).toEqual([route.id, true]);
    }
    const job = doc.paths['/jobs/{job_id}'].get.responses['200'].content['application/json'].schema;
    expect(job).toEqual({ $ref: '#/components/schemas/Job' });
    expect(doc.components.schemas.Job.properties.status.enum).toContain('partial_failed');
    expect(doc.components.schemas.Job.properties.created_at).toEqual({ type: 'string', format: 'date-time', description: 'ISO 8601 time (UTC).' });
  });
});

describe('webhooks in the OpenAPI document', () => {
  it('publishes the delivered payload and the signature headers', () => {
    const post = doc.webhooks.jobEvent.post;
    expect(post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookPayload' });
    expect(doc.components.schemas.WebhookPayload.properties.event.enum).toContain('bulk.job.partial');
    expect(post.parameters.map((p: Json) => p.name)).toContain('Service-Signature');
  });
});

describe('request schemas in the OpenAPI document', () => {
  it('describes the body of every built POST and PUT route, or lists it as reading none', () => {
    for (const route of ROUTES.filter((r) => r.handler !== null && (r.method === 'POST' || r.method === 'PUT'))) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      const bodiless = (BODILESS_WRITES as readonly string[]).includes(route.id);
      expect([route.id, op.requestBody === undefined]).toEqual([route.id, bodiless]);
    }
  });

  it('takes each body from the schema its module validates with', () => {
    // quickjob's parser validates with this very object; webhook parsers with copies built by the same factory,
    // adding the network guard's host check to the url field.
    expect(REQUEST_SCHEMAS['quickjob.create'].json).toBe(quickjobBodySchema);
    expect(REQUEST_SCHEMAS['webhooks.create'].json).toBe(createWebhookBodySchema);
    const body = doc.paths['/accounts/me/webhooks'].post.requestBody;
    expect(body.required).toBe(true);
    const schema = body.content['application/json'].schema;
    expect(schema.required).toEqual(['url']);
    expect(Object.keys(schema.properties)).toEqual(['url', 'name', 'events', 'is_active']);
    expect(schema.properties.url.description).toMatch(/https/);
    expect(doc.paths['/accounts/me/api-keys'].post.requestBody.required).toBe(false);
  });

  it('lists query parameters with their types and bounds', () => {
    const params = doc.paths['/jobs'].get.parameters.filter((p: Json) => p.in === 'query');
    const limit = params.find((p: Json) => p.name === 'limit');
    expect(limit).toMatchObject({ required: false });
    expect(JSON.stringify(limit.schema)).toContain('"type":"integer"');
    expect(JSON.stringify(limit.schema)).toContain('"maximum":100');
  });
});

describe('the response contract (RESPONSE_CONTRACT=strict)', () => {
  const jobsGet = routeById('jobs.get');
  const job = {
    job_id: 'job_1',
    status: 'completed',
    job_type: 'quick',
    mode: 'html',
    pages: 1,
    truncated: false,
    created_at: '2026-11-22T10:00:00.000Z',
    completed_at: '2026-11-22T10:00:01.000Z',
    timeout_occurred: false,
    error_message: null,
    error_code: null,
  };

  it('passes a body that matches the documented schema', () => {
    expect(contractViolation(jobsGet, json(200, job))).toBeNull();
  });

  it('names a field that drifted, a field missing and a field not documented', () => {
    expect(contractViolation(jobsGet, json(200, { ...job, pages: '1' }))).toMatch(/jobs\.get answered 200 .*pages/);
    const { truncated: _, ...withoutTruncated } = job;
    expect(contractViolation(jobsGet, json(200, withoutTruncated))).toMatch(/truncated/);
    expect(contractViolation(jobsGet, json(200, { ...job, internal_key: 'x' }))).toMatch(/internal_key/);
  });

  it('holds every refusal to the error envelope', () => {
    const envelope = { error: { code: 'JOB_NOT_FOUND', message: 'No job.', details: { job_id: 'x' } } };
    expect(contractViolation(jobsGet, json(404, envelope))).toBeNull();
    expect(contractViolation(jobsGet, json(404, { error: { code: 'JOB_NOT_FOUND', message: 'No job.' } }))).toMatch(/details/);
    expect(contractViolation(jobsGet, json(500, { message: 'boom' }))).toMatch(/error/);
  });

  it('holds every answer to the statuses its operation lists', () => {
    const envelope = { error: { code: 'JOB_NOT_READY', message: 'Not yet.', details: {} } };
    expect(contractViolation(jobsGet, json(409, envelope))).toMatch(/jobs\.get answered 409, which its OpenAPI operation does not list/);
    expect(contractViolation(routeById('jobs.download'), json(409, envelope))).toBeNull();
    expect(contractViolation(routeById('jobs.cancel'), json(202, { job_id: 'job_1', status: 'processing', cancel_requested: true, message: 'Stopping.' }))).toBeNull();
  });

  it('documents PDF answers with their headers, every error status a route answers, and integer indexes', () => {
    const doc = openApiDocument() as any;
    const quick = doc.paths['/quickjob'].post.responses;
    expect(Object.keys(quick)).toEqual(expect.arrayContaining(['200', '402', '408', '422']));
    expect(quick['200'].content).toHaveProperty(['application/pdf']);
    expect(Object.keys(quick['200'].headers)).toEqual(['Content-Disposition', 'X-PDF-Pages', 'X-PDF-Truncated', 'X-Job-Id']);
    expect(Object.keys(doc.paths['/jobs/{job_id}/cancel'].post.responses)).toEqual(expect.arrayContaining(['200', '202', '409']));
    const index = doc.paths['/jobs/{job_id}/files/{file_index}/download'].get.parameters.find((p: any) => p.name === 'file_index');
    expect(index.schema).toEqual({ type: 'integer', minimum: 0 });
    expect(JSON.stringify(doc)).not.toContain('starts_with');
  });

  it('leaves PDF answers and routes without a documented body alone', () => {
    expect(contractViolation(routeById('quickjob.create'), pdf(new Uint8Array([37, 80, 68, 70]), {}))).toBeNull();
    expect(contractViolation(routeById('stripe.webhook'), json(200, { anything: true }))).toBeNull();
  });
});
