import { Validator } from '@seriousme/openapi-schema-validator';
import { documentedCodesByStatus, openApiDocument } from '../../../functions/http/openapi/document';
import { codesByStatus } from '../../../functions/http/errors';
import { PDF_OPTION_KEYS } from '../../../functions/core/render/options';
import { ROUTES, routeById } from '../../../functions/routes';
import { RESPONSE_SCHEMAS, UNDESCRIBED_RESPONSES } from '../../../functions/http/openapi/responses';
import { contractViolation } from '../../../functions/http/openapi/contract';
import { json, pdf } from '../../../functions/http/responses';
import { BODILESS_WRITES, REQUEST_SCHEMAS } from '../../../functions/http/openapi/requests';
import { createWebhookBodySchema } from '../../../functions/core/webhooks/requests';
import { parseJsonConversion, quickjobBodySchema } from '../../../functions/core/conversion/request';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ServiceError } from '../../../functions/core/errors';
import { validateUrl } from '../../../functions/core/conversion/url-input';
import { parseLongJobRequest } from '../../../functions/core/conversion/longjob';
import { parseBulkJson } from '../../../functions/core/bulk/requests';
import { parseMergeRequest, parsePdfJobRequest, parseSplitRequest } from '../../../functions/core/pdfops/requests';
import { parseCreateWebhook, parseUpdateWebhook } from '../../../functions/core/webhooks/requests';
import { ERROR_CODES, toHttpError } from '../../../functions/http/errors';
import { GATEWAY_RESPONSES } from '../../../functions/http/gateway-responses';
import { ERROR_DETAILS } from '../../../functions/http/openapi/responses';
import { RETRY_DELAYS_MS } from '../../../functions/core/webhooks/delivery';
import { newAccount } from '../../../functions/core/accounts/account';
import { STANDARD_PLAN_ID, planCatalogue } from '../../../functions/core/billing/plans';
import { insufficientCredits } from '../../../functions/core/billing/charging';
import { requireConversionType } from '../../../functions/core/accounts/entitlements';
import { assertWithinDocument, parsePageRange } from '../../../functions/core/pdf/page-ranges';

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
    // null is the default, as everywhere: the bounds are on the number.
    expect(doc.components.schemas.PdfOptions.properties.scale).toMatchObject({ anyOf: [{ type: 'number', minimum: 0.1, maximum: 2 }, { type: 'null' }], default: 1 });
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
    expect(Object.keys(quick['200'].headers)).toEqual(['Content-Disposition', 'X-PDF-Pages', 'X-PDF-Truncated', 'X-Job-Id', 'X-Request-Id']);
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

/** The schema a $ref points at (one level). */
function resolve(node: Json): Json {
  return node.$ref ? node.$ref.replace(/^#\//, '').split('/').reduce((n: Json, k: string) => n[k], doc) : node;
}

/** The body schema of one operation's response (JSON). */
function jsonBody(path: string, method: string, status: string): Json {
  return resolve(doc.paths[path][method].responses[status].content['application/json'].schema);
}

describe('PDF answer headers', () => {
  it('says X-PDF-Truncated is always false (compatibility), with typed values for the page and truncation headers', () => {
    const headers = doc.paths['/quickjob'].post.responses['200'].headers;
    expect(headers['X-PDF-Truncated'].description).toMatch(/always "false"/i);
    expect(headers['X-PDF-Truncated'].description).not.toMatch(/when pageRanges cut/);
    expect(headers['X-PDF-Truncated'].schema).toEqual({ type: 'string', enum: ['true', 'false'] });
    expect(headers['X-PDF-Pages'].schema).toEqual({ type: 'string', pattern: '^[0-9]+$' });
    expect(doc.paths['/pdf/merge'].post.responses['200'].headers['X-PDF-Pages'].schema).toEqual({ type: 'string', pattern: '^[0-9]+$' });
    const truncated = doc.paths['/jobs'].get.parameters.find((p: Json) => p.name === 'truncated');
    expect(truncated.description).toMatch(/compatibility/i);
    expect(truncated.description).not.toMatch(/whose output was truncated/);
  });

  it('holds PDF answers to those header schemas', () => {
    const quick = routeById('quickjob.create');
    const ok = { 'Content-Disposition': 'inline; filename=job_1.pdf', 'X-PDF-Pages': '3', 'X-PDF-Truncated': 'false', 'X-Job-Id': 'job_1' };
    expect(contractViolation(quick, pdf(new Uint8Array([37]), ok))).toBeNull();
    expect(contractViolation(quick, pdf(new Uint8Array([37]), { ...ok, 'X-PDF-Pages': 'three' }))).toMatch(/X-PDF-Pages/);
    expect(contractViolation(quick, pdf(new Uint8Array([37]), { ...ok, 'X-PDF-Truncated': 'no' }))).toMatch(/X-PDF-Truncated/);
  });
});

describe('error codes in the OpenAPI document', () => {
  const all = [...new Set(Object.values(codesByStatus()).flat())].sort();

  it('gives Error.code an enum of every code the service answers, derived from the error map', () => {
    const code = resolve(doc.components.schemas.Error.properties.error.properties.code);
    expect([...code.enum].sort()).toEqual(all);
    expect([...ERROR_CODES].sort()).toEqual(all);
    // The gateway's own answers (AWS and local) use codes of the same list.
    for (const def of GATEWAY_RESPONSES) if (!def.code.startsWith('$')) expect(all).toContain(def.code);
    expect(all).toEqual(expect.arrayContaining(['REQUEST_TIMEOUT', 'UNAUTHORIZED', 'NOT_FOUND']));
  });

  it('lists, per status, exactly the codes of that status as a machine-readable enum', () => {
    const handlers = codesByStatus();
    // API Gateway answers a function that failed without answering with 502 in its default 5xx envelope.
    expect(documentedCodesByStatus()[502]).toEqual([...handlers[502], 'INTERNAL_SERVER_ERROR']);
    for (const [status, codes] of Object.entries(documentedCodesByStatus())) {
      expect([status, codes]).toEqual([status, expect.arrayContaining([...(handlers[Number(status)] ?? [])])]);
      const schema = doc.components.responses[`Error${status}`].content['application/json'].schema;
      expect(schema.allOf[0]).toEqual({ $ref: '#/components/schemas/Error' });
      expect([status, schema.allOf[1].properties.error.properties.code.enum]).toEqual([status, [...codes]]);
      expect(doc.components.responses[`Error${status}`].description).toMatch(/every code of this status in the API/);
    }
  });

  it('documents the details the spec names, per code, as the service sends them', () => {
    const required: Record<string, string[]> = {
      INSUFFICIENT_CREDITS: ['current_balance', 'required_amount', 'subscription_credits_remaining', 'action_required'],
      QUICKJOB_TIMEOUT: ['job_id', 'timeout_seconds', 'suggestion'],
      RATE_LIMIT_EXCEEDED: ['retry_after'],
      CONVERSION_TYPE_NOT_ENABLED: ['enabled_types'],
      WEBHOOK_LIMIT_EXCEEDED: ['plan_id', 'plan_type', 'current_count', 'max_allowed', 'upgrade_required'],
      INVALID_PAGE_RANGE: ['token'],
      PAGE_OUT_OF_RANGE: ['total_pages'],
      URL_FETCH_HTTP_ERROR: ['status_code'],
    };
    const conditionals = doc.components.schemas.Error.properties.error.allOf as Json[];
    for (const [code, fields] of Object.entries(required)) {
      const rule = conditionals.find((c) => c.if.properties.code.const === code);
      expect([code, rule !== undefined]).toEqual([code, true]);
      const details = resolve(rule!.then.properties.details);
      expect([code, details.required]).toEqual([code, expect.arrayContaining(fields)]);
    }
  });

  it('holds refusals built by the service to those details', () => {
    const now = new Date('2026-11-22T10:00:00Z');
    const account = newAccount({ account_id: 'acc_1', email: 'a@example.com', plan_id: STANDARD_PLAN_ID, now });
    const plan = { ...planCatalogue()[0], enabled_conversion_types: ['html' as const] };
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err as ServiceError;
      }
      throw new Error('no refusal');
    };
    const refusals = [
      insufficientCredits(account, 10_000, now),
      thrown(() => requireConversionType(plan, 'url')),
      thrown(() => parsePageRange('1,0')),
      thrown(() => assertWithinDocument(parsePageRange('2-9'), 3)),
    ];
    for (const err of refusals) {
      expect([err.code, ERROR_DETAILS[err.code].safeParse(err.details).success]).toEqual([err.code, true]);
      expect(contractViolation(routeById('pdf.merge'), json(toHttpError(err, 'req_1').status, toHttpError(err, 'req_1').body))).toBeNull();
    }
  });

  it('refuses an answer whose details leave out what its code documents, or whose code its status does not list', () => {
    const merge = routeById('pdf.merge');
    expect(contractViolation(merge, json(403, { error: { code: 'INSUFFICIENT_CREDITS', message: 'No.', details: {} } }))).toMatch(/details\.current_balance/);
    expect(contractViolation(merge, json(400, { error: { code: 'INVALID_PAGE_RANGE', message: 'No.', details: { token: 0 } } }))).toMatch(/details\.token/);
    expect(contractViolation(merge, json(400, { error: { code: 'NO_SUCH_CODE', message: 'No.', details: {} } }))).toMatch(/error\.code/);
    expect(contractViolation(merge, json(400, { error: { code: 'JOB_NOT_READY', message: 'No.', details: {} } }))).toMatch(/code JOB_NOT_READY, which that status does not list/);
  });
});

describe('success bodies as tight as the service answers them', () => {
  it('always sends page_range, size_bytes and a download link for each stored merge/split output', () => {
    const item = resolve(jsonBody('/pdf/merge', 'post', '200').properties.outputs.items);
    expect(item.required).toEqual(expect.arrayContaining(['page_range', 'size_bytes', 'download_url']));
    expect(item.properties.page_range.type).toBe('string');
    expect(item.properties.download_url.type).toBe('string');
    const stored = {
      job_id: 'job_1', operation: 'pdf_split', status: 'completed', input_pages: 4, output_count: 1,
      outputs: [{ index: 0, name: 'a-001.pdf', pages: 2, page_range: '1-2', size_bytes: 10, warnings: [], download_url: 'https://s3.example.com/a' }],
      zip_url: null, download_url_expires_at: '2026-11-22T11:00:00.000Z', warnings: [],
    };
    const split = routeById('pdf.split');
    expect(contractViolation(split, json(200, stored))).toBeNull();
    expect(contractViolation(split, json(200, { ...stored, outputs: [{ ...stored.outputs[0], download_url: null }] }))).toMatch(/download_url/);
  });

  it('gives the subscription the five statuses of the spec', () => {
    const status = doc.components.schemas.BillingSummary.properties.subscription.anyOf.map(resolve).find((s: Json) => s.type === 'object').properties.status;
    expect(status.enum).toEqual(['active', 'trialing', 'past_due', 'paused', 'canceled']);
  });

  it('bounds retry_count by the retries made and gives every delivery its job', () => {
    const delivery = doc.components.schemas.WebhookDelivery;
    expect(delivery.properties.retry_count).toMatchObject({ minimum: 0, maximum: RETRY_DELAYS_MS.length });
    expect(RETRY_DELAYS_MS.length).toBe(3);
    expect(delivery.properties.job_id.type).toBe('string');
  });

  it('has the mail merge job fields and the reserved job.timeout payload fields', () => {
    expect(Object.keys(doc.components.schemas.Job.properties)).toEqual(
      expect.arrayContaining(['campaign_name', 'valid_row_count', 'sent_count', 'failed_count', 'rejected_count', 'unconfirmed_count', 'skipped_count', 'report_available']),
    );
    expect(doc.components.schemas.Job.properties.report_available.type).toBe('boolean');
    expect(doc.components.schemas.WebhookPayload.properties).toMatchObject({ timeout_seconds: { type: 'integer' }, timeout_at: { format: 'date-time' } });
  });

  it('ties a cancel\'s 200 to cancelled and its 202 to processing', () => {
    expect(jsonBody('/jobs/{job_id}/cancel', 'post', '200').properties.status.const).toBe('cancelled');
    expect(jsonBody('/jobs/{job_id}/cancel', 'post', '202').properties.status.const).toBe('processing');
    const cancel = routeById('jobs.cancel');
    const body = { job_id: 'job_1', cancel_requested: true, message: 'x' };
    expect(contractViolation(cancel, json(200, { ...body, status: 'cancelled' }))).toBeNull();
    expect(contractViolation(cancel, json(200, { ...body, status: 'processing' }))).toMatch(/status/);
    expect(contractViolation(cancel, json(202, { ...body, status: 'cancelled' }))).toMatch(/status/);
  });

  it('describes its own document (GET /openapi.json) as an object', () => {
    const schema = jsonBody('/openapi.json', 'get', '200');
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(expect.arrayContaining(['openapi', 'info', 'paths']));
    expect(contractViolation(routeById('openapi.get'), json(200, doc))).toBeNull();
  });
});

describe('statuses and headers every answer can have', () => {
  const operations = ROUTES.map((route) => [route, doc.paths[route.path][route.method.toLowerCase()]] as const);

  it('lists 409 on webhook routes only where a webhook error maps to it (none does)', () => {
    expect(Object.keys(doc.paths['/accounts/me/webhooks'].post.responses)).not.toContain('409');
    expect(Object.keys(doc.paths['/accounts/me/webhooks/{webhook_id}'].put.responses)).not.toContain('409');
    expect(Object.keys(doc.paths['/jobs/{job_id}/cancel'].post.responses)).toContain('409');
  });

  it("lists API Gateway's 502 and 504 and a slow request's 408 on every operation (each is a Lambda behind the gateway)", () => {
    for (const [route, op] of operations) {
      for (const status of ['408', '502', '504']) expect([route.id, op.responses[status]]).toEqual([route.id, { $ref: `#/components/responses/Error${status}` }]);
    }
    expect(doc.components.responses.Error408.description).toMatch(/REQUEST_TIMEOUT when the request itself did not arrive in time/);
    expect(doc.components.responses.Error502.description).toMatch(/INTERNAL_SERVER_ERROR when the route's function failed without answering/);
    const timeout = GATEWAY_RESPONSES.find((g) => g.type === 'INTEGRATION_TIMEOUT')!;
    expect(timeout.status).toBe(504);
    expect(doc.components.responses.Error504.description).toMatch(/integration timeout/);
    expect(doc.components.responses.Error504.content['application/json'].schema.allOf[1].properties.error.properties.code.enum).toEqual([timeout.code]);
  });

  it('documents WWW-Authenticate on 401 and X-Request-Id on every answer', () => {
    const challenge = GATEWAY_RESPONSES.find((g) => g.type === 'UNAUTHORIZED')!.headers!['WWW-Authenticate'];
    expect(doc.components.responses.Error401.headers['WWW-Authenticate']).toEqual({ $ref: '#/components/headers/WWW-Authenticate' });
    expect(doc.components.headers['WWW-Authenticate'].schema.enum).toEqual([challenge]);
    for (const response of Object.values(doc.components.responses as Json)) expect(response.headers['X-Request-Id']).toEqual({ $ref: '#/components/headers/X-Request-Id' });
    for (const [route, op] of operations) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const headers = resolve(response).headers;
        expect([route.id, status, headers?.['X-Request-Id']]).toEqual([route.id, status, { $ref: '#/components/headers/X-Request-Id' }]);
      }
    }
  });
});

/*
 * The document's request schemas against the service: each body the service refuses (parsed by the route's own
 * parser, with its spec code) is refused by the published schema too, and the README's bodies pass both.
 */
describe('request schemas in the OpenAPI document, held to what the service enforces', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(openApiDocument() as object, 'openapi.json');
  const pointer = (...parts: string[]) => parts.map((p) => encodeURIComponent(p.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');
  const validators = new Map<string, ValidateFunction>();
  /** The published schema of a route's body, as a validator. */
  function documented(path: string, method: string, media = 'application/json'): ValidateFunction {
    const ref = `openapi.json#/${pointer('paths', path, method, 'requestBody', 'content', media, 'schema')}`;
    if (!validators.has(ref)) validators.set(ref, ajv.compile({ $ref: ref }));
    return validators.get(ref)!;
  }
  /** The spec code the service refuses with, or null when it accepts. */
  function refusal(parse: () => unknown): string | null {
    try {
      parse();
      return null;
    } catch (err) {
      if (err instanceof ServiceError) return err.code;
      throw err;
    }
  }

  const guard = { checkLiteral: () => ({ allowed: true as const }) };
  const pdf = 'JVBERi0xLjQK';
  const pdfFile = { filename: 'a.pdf', data: new Uint8Array(Buffer.from('%PDF-1.4\n')) };
  const job = (n: number) => Array.from({ length: n }, (_, i) => ({ s3_key: `uploads/acc/pdf/${i}.pdf` }));
  const inline = (n: number) => Array.from({ length: n }, () => ({ pdf_base64: pdf }));
  const html = { input_type: 'html', html: '<p>Hello</p>' };

  type Route = { path: string; method: string; media?: string; parse: (body: any) => unknown; doc?: (body: any) => unknown };
  const ROUTES_UNDER_TEST: Record<string, Route> = {
    quickjob: { path: '/quickjob', method: 'post', parse: parseJsonConversion },
    quickjobUrl: { path: '/quickjob', method: 'post', parse: (body) => validateUrl((parseJsonConversion(body) as { url: string }).url, guard as never) },
    longjob: { path: '/longjob', method: 'post', parse: parseLongJobRequest },
    bulkjob: { path: '/bulkjob', method: 'post', parse: parseBulkJson },
    merge: { path: '/pdf/merge', method: 'post', parse: (json) => parseMergeRequest({ json }) },
    splitForm: {
      path: '/pdf/split',
      method: 'post',
      media: 'multipart/form-data',
      parse: (form) => parseSplitRequest({ form: { ...form, file: [pdfFile] } }),
      doc: (form) => ({ ...form, file: ['%PDF-1.4'] }),
    },
    pdfJobs: { path: '/pdf/jobs', method: 'post', parse: parsePdfJobRequest },
    webhookCreate: { path: '/accounts/me/webhooks', method: 'post', parse: (body) => parseCreateWebhook(body, guard) },
    webhookUpdate: { path: '/accounts/me/webhooks/{webhook_id}', method: 'put', parse: (body) => parseUpdateWebhook(body, guard) },
  };

  const REFUSED: [string, keyof typeof ROUTES_UNDER_TEST, unknown, string][] = [
    // 1. lengths: a unit, or zero
    ['a margin as a number other than 0', 'quickjob', { ...html, options: { margin: { top: 10 } } }, 'INVALID_PARAMETER'],
    ['a length without its unit', 'quickjob', { ...html, options: { format: null, width: '100', height: '150mm' } }, 'INVALID_PARAMETER'],
    ['a length in an unknown unit', 'longjob', { input_type: 'markdown', markdown: '# Notes', options: { margin: { left: '12pt' } } }, 'INVALID_PARAMETER'],
    ['a bulk paper height as a number', 'bulkjob', { s3_key: 'uploads/acc/bulk/x.zip', options: { format: null, height: 5 } }, 'INVALID_PARAMETER'],
    ['a paper format that does not exist', 'quickjob', { ...html, options: { format: 'B5' } }, 'INVALID_PARAMETER'],
    // 2. quickjob options: HTML and Markdown take the PDF options only
    ['HTML with options.scale as a string', 'quickjob', { ...html, options: { scale: '1' } }, 'INVALID_PARAMETER'],
    ['Markdown with options.printBackground as a string', 'quickjob', { input_type: 'markdown', markdown: '# Notes', options: { printBackground: 'yes' } }, 'INVALID_PARAMETER'],
    // 3. required fields
    ['quickjob html without its html', 'quickjob', { input_type: 'html' }, 'MISSING_CONTENT_FIELD'],
    ['quickjob url without its url', 'quickjob', { input_type: 'url' }, 'MISSING_URL'],
    ['quickjob html with blank html', 'quickjob', { input_type: 'html', html: '  \n ' }, 'EMPTY_CONTENT_FIELD'],
    ['quickjob with both html and markdown', 'quickjob', { ...html, markdown: '# Notes' }, 'CONFLICTING_FIELDS'],
    ['quickjob markdown sent in html', 'quickjob', { input_type: 'markdown', html: '<p>Hello</p>' }, 'WRONG_FIELD_PROVIDED'],
    ['quickjob url that is not https', 'quickjobUrl', { input_type: 'url', url: 'http://example.com/' }, 'INVALID_URL'],
    ['longjob markdown without its markdown', 'longjob', { input_type: 'markdown' }, 'MISSING_CONTENT_FIELD'],
    ['longjob with a url', 'longjob', { ...html, url: 'https://example.com/' }, 'WRONG_FIELD_PROVIDED'],
    ['a PDF job merge without inputs', 'pdfJobs', { operation: 'merge' }, 'MISSING_PDFS'],
    ['a PDF job merge of one input', 'pdfJobs', { operation: 'merge', inputs: job(1) }, 'MISSING_PDFS'],
    ['a PDF job merge of 101 inputs', 'pdfJobs', { operation: 'merge', inputs: job(101) }, 'TOO_MANY_FILES'],
    ['a PDF job split without inputs', 'pdfJobs', { operation: 'split', split: { mode: 'each_page' } }, 'MISSING_PDF'],
    ['a PDF job split of two inputs', 'pdfJobs', { operation: 'split', inputs: job(2), split: { mode: 'each_page' } }, 'TOO_MANY_FILES'],
    ['a JSON merge without inputs', 'merge', {}, 'MISSING_PDFS'],
    ['a JSON merge of one input', 'merge', { inputs: inline(1) }, 'MISSING_PDFS'],
    ['a JSON merge of 21 inputs', 'merge', { inputs: inline(21) }, 'TOO_MANY_FILES'],
    ['a multipart split without split', 'splitForm', {}, 'INVALID_SPLIT_MODE'],
    ['a bulk job without an input', 'bulkjob', { bundle_type: 'html' }, 'INVALID_BULK_INPUT'],
    ['a bulk job with two inputs', 'bulkjob', { s3_key: 'uploads/acc/bulk/x.zip', zip_base64: 'UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA==' }, 'INVALID_BULK_INPUT'],
    ['a bulk job whose only input is an empty list of files', 'bulkjob', { files: [] }, 'INVALID_BULK_INPUT'],
    ['an empty webhook update', 'webhookUpdate', {}, 'INVALID_PARAMETER'],
    ['a webhook update of unknown fields only', 'webhookUpdate', { colour: 'blue' }, 'INVALID_PARAMETER'],
    ['a webhook renamed to spaces', 'webhookUpdate', { name: '   ' }, 'INVALID_PARAMETER'],
    ['a webhook named with a control character', 'webhookCreate', { url: 'https://hooks.example.com/pdf', name: 'ci\u0007build' }, 'INVALID_PARAMETER'],
  ];

  it.each(REFUSED)('refuses %s, as the service does', (_, routeName, body, code) => {
    const route = ROUTES_UNDER_TEST[routeName];
    expect(refusal(() => route.parse(body))).toBe(code);
    const validate = documented(route.path, route.method, route.media);
    expect(validate(route.doc ? route.doc(body) : body)).toBe(false);
  });

  const ACCEPTED: [string, keyof typeof ROUTES_UNDER_TEST, unknown][] = [
    ['the README invoice', 'quickjob', { input_type: 'html', html: '<title>Invoice</title><h1>Invoice 42</h1>', options: { format: 'Letter', margin: { top: '20mm', bottom: '20mm' }, displayHeaderFooter: true } }],
    ['the README Markdown, stored', 'quickjob', { input_type: 'markdown', markdown: '---\ntitle: Notes\n---\n# Notes', store: true }],
    ['the README label size', 'quickjob', { input_type: 'html', html: '<p>label</p>', options: { format: null, width: '100mm', height: '150mm' } }],
    ['lengths in any case, a zero string and the number 0', 'quickjob', { ...html, options: { margin: { top: '0.5IN', right: ' 1.5 Cm ', bottom: '0', left: 0 } } }],
    ['null for every unused field', 'quickjob', { ...html, markdown: null, url: null, options: null, store: null }],
    ['unknown option keys (ignored)', 'quickjob', { ...html, options: { format: 'a4', fit: 'cover', colour: 'blue' } }],
    ['the README URL', 'quickjobUrl', { input_type: 'url', url: 'https://example.com/', options: { format: 'Letter' } }],
    ['a URL with image options', 'quickjobUrl', { input_type: 'url', url: 'https://example.com/photo.png', options: { fit: 'cover', margin: { top: '5mm' } } }],
    // Read either way until fetched: the image reading ignores scale, so the service takes this up front.
    ['a URL with options only an image can use', 'quickjobUrl', { input_type: 'url', url: 'https://example.com/photo.png', options: { scale: '1' } }],
    ['the README long job', 'longjob', { input_type: 'markdown', markdown: '# Annual report\n\n…', email_notification: false }],
    ['the README bulk job', 'bulkjob', { s3_key: 'uploads/acc/bulk/x.zip', bundle_type: 'html', options: { format: 'A4' } }],
    ['a bulk job of files, with an empty ZIP (none)', 'bulkjob', { files: [{ path: 'index.html', content_base64: 'PHA+SGk8L3A+' }], zip_base64: '' }],
    ['the README JSON merge', 'merge', { inputs: [{ pdf_base64: pdf, filename: 'a.pdf', pages: '3,1' }, { pdf_base64: pdf, filename: 'b.pdf' }], store: true }],
    ['the README split', 'splitForm', { split: '{"mode":"ranges","ranges":["1-3","4-end"]}', options: '{"filename_pattern":"{basename}-part{index}.pdf"}' }],
    ['the README PDF job', 'pdfJobs', { operation: 'split', inputs: [{ s3_key: 'uploads/acc/pdf/big.pdf', filename: 'big.pdf' }], split: { mode: 'every_n', every_n: 50 } }],
    ['a PDF job merge of two', 'pdfJobs', { operation: 'merge', inputs: job(2) }],
    ['the README webhook', 'webhookCreate', { name: 'orders', url: 'https://hooks.example.com/pdf', events: ['job.completed', 'job.failed'] }],
    ['a name with white space around it', 'webhookCreate', { name: '  orders ci \n', url: 'https://hooks.example.com/pdf' }],
    ['the README webhook update', 'webhookUpdate', { is_active: false }],
  ];

  it.each(ACCEPTED)('accepts %s, as the service does', (_, routeName, body) => {
    const route = ROUTES_UNDER_TEST[routeName];
    expect(refusal(() => route.parse(body))).toBeNull();
    const validate = documented(route.path, route.method, route.media);
    expect([validate(route.doc ? route.doc(body) : body), validate.errors]).toEqual([true, null]);
  });

  it('documents no default the service refuses, and the defaults it applies', () => {
    const defaults: [string, unknown][] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${at}/${i}`));
      if (!node || typeof node !== 'object') return;
      if ('default' in node) defaults.push([at, (node as Json).default]);
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
    };
    walk(doc.paths, '#/paths');
    expect(defaults.filter(([, value]) => Array.isArray(value) && value.length === 0)).toEqual([]);
    const schemas = doc.components.schemas;
    expect(schemas.PdfOptions.properties).toMatchObject({ format: { default: 'A4' }, printBackground: { default: true }, scale: { default: 1 } });
    expect(schemas.ImageOptions.properties).toMatchObject({ fit: { default: 'contain' }, margin: { default: { top: '10mm', right: '10mm', bottom: '10mm', left: '10mm' } } });
    const body = (path: string, method = 'post') => doc.paths[path][method].requestBody.content['application/json'].schema;
    expect(body('/bulkjob').properties.bundle_type.default).toBe('html');
    expect(body('/accounts/me/webhooks').properties).toMatchObject({ events: { default: ['job.completed'] }, is_active: { default: true } });
    expect(body('/accounts/me/webhooks/{webhook_id}/rotate-secret').properties.grace_period_seconds.default).toBe(86400);
    for (const path of ['/jobs', '/accounts/me/webhooks']) {
      expect(doc.paths[path].get.parameters.find((p: Json) => p.name === 'limit').schema.default).toBe(50);
    }
  });
});
