import { randomUUID } from 'node:crypto';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { handlerRef, matchRoute } from '../../functions/routes';
import { lambdaContext, loadHandler } from '../../local/handlers';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account();
});
afterAll(() => stack?.stop());

type Invoke<E, R> = (event: E, context: ReturnType<typeof lambdaContext>) => Promise<R>;

/**
 * The request as API Gateway (REST, Lambda proxy, binary media `*\/*`) hands it over in AWS, built here from the
 * documented event shape rather than by the local gateway: header names as sent plus the ones API Gateway adds,
 * every body base64-encoded, path parameters decoded, the authorizer's context as strings beside `principalId`.
 */
async function viaLambdaAdapter(method: string, target: string, headers: Record<string, string>, body?: string): Promise<APIGatewayProxyResult> {
  const url = new URL(target, 'https://api.example.com');
  const match = matchRoute(method, url.pathname);
  if (!match) throw new Error(`no route for ${method} ${url.pathname}`);
  const sent = { ...headers, Host: 'api.example.com', 'X-Forwarded-For': '203.0.113.9', 'X-Forwarded-Proto': 'https', 'X-Amzn-Trace-Id': 'Root=1-00000000-000000000000000000000000' };
  const multiValueHeaders = Object.fromEntries(Object.entries(sent).map(([k, v]) => [k, [v]]));
  const query: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (query[k] ??= []).push(v);
  const single = Object.keys(query).length ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v[v.length - 1]])) : null;
  const requestId = randomUUID();
  const requestContext = {
    accountId: '123456789012',
    apiId: 'abc123',
    httpMethod: method,
    path: `/v1${url.pathname}`,
    protocol: 'HTTP/1.1',
    requestId,
    requestTimeEpoch: Date.now(),
    resourceId: 'r1',
    resourcePath: match.route.path,
    stage: 'v1',
    identity: { sourceIp: '203.0.113.9', userAgent: null },
    authorizer: null as Record<string, unknown> | null,
  };
  if (match.route.access !== 'none') {
    const authorize = loadHandler<Invoke<unknown, APIGatewayAuthorizerResult>>('http/authorizer#handler');
    const verdict = await authorize(
      { type: 'REQUEST', methodArn: `arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/${method}${match.route.path}`, resource: match.route.path, path: url.pathname, httpMethod: method, headers: sent, multiValueHeaders, pathParameters: match.params, queryStringParameters: single, multiValueQueryStringParameters: Object.keys(query).length ? query : null, stageVariables: null, requestContext },
      lambdaContext('authorizer', 10_000),
    );
    if (!verdict.policyDocument.Statement.some((s) => s.Effect === 'Allow')) throw new Error(`denied: ${JSON.stringify(verdict.context)}`);
    requestContext.authorizer = { principalId: verdict.principalId, integrationLatency: 12, ...verdict.context };
  }
  const event = {
    resource: match.route.path,
    path: url.pathname,
    httpMethod: method,
    headers: sent,
    multiValueHeaders,
    queryStringParameters: single,
    multiValueQueryStringParameters: Object.keys(query).length ? query : null,
    pathParameters: Object.keys(match.params).length ? match.params : null,
    stageVariables: null,
    requestContext,
    body: body === undefined ? null : Buffer.from(body).toString('base64'),
    isBase64Encoded: body !== undefined,
  } as unknown as APIGatewayProxyEvent;
  return loadHandler<Invoke<APIGatewayProxyEvent, APIGatewayProxyResult>>(handlerRef(match.route))(event, lambdaContext(match.route.id, 30_000, requestId));
}

/** What API Gateway sends the client for a proxy result: a base64 body as its bytes (binary media `*\/*`). */
function answered(result: APIGatewayProxyResult) {
  const headers = new Map(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return { status: result.statusCode, headers, body: result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body, 'utf8') };
}

async function viaLocalGateway(method: string, target: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`${stack.baseUrl}${target}`, { method, headers, body });
  return { status: res.status, headers: new Map([...res.headers].map(([k, v]) => [k.toLowerCase(), v])), body: Buffer.from(await res.arrayBuffer()) };
}

/** An error envelope without what differs per request. */
const envelope = (body: Buffer) => {
  const { error } = JSON.parse(body.toString('utf8'));
  delete error.details?.request_id;
  return error;
};

describe('the same request through the local gateway and through the Lambda adapter with an API Gateway event', () => {
  it('a quick job: the PDF as bytes, with the same headers', async () => {
    const headers = { 'X-API-Key': user.api_key, 'Content-Type': 'application/json' };
    const body = JSON.stringify({ input_type: 'html', html: '<p>one</p><p style="page-break-before: always">two</p>' });
    const [local, aws] = [await viaLocalGateway('POST', '/quickjob', headers, body), answered(await viaLambdaAdapter('POST', '/quickjob', headers, body))];
    expect([local.status, aws.status]).toEqual([200, 200]);
    for (const name of ['content-type', 'content-disposition', 'x-pdf-pages', 'x-pdf-truncated', 'cache-control', 'access-control-expose-headers']) {
      // The file is named after its job, one per request.
      const value = (answer: typeof local) => answer.headers.get(name)?.replace(answer.headers.get('x-job-id') ?? '', '<job>');
      expect(`${name}: ${value(aws)}`).toBe(`${name}: ${value(local)}`);
    }
    expect(local.headers.get('x-pdf-pages')).toBe('2');
    for (const answer of [local, aws]) {
      expect(answer.body.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(answer.headers.get('x-job-id')).toMatch(/\S/);
    }
  });

  it('refusals: the same status and envelope', async () => {
    const cases: [string, string, Record<string, string>, string?][] = [
      ['POST', '/quickjob', { 'X-API-Key': user.api_key, 'Content-Type': 'Application/JSON; Charset=UTF-8' }, '{"input_type": "html",'],
      ['POST', '/quickjob', { 'X-API-Key': user.api_key }, ''],
      ['GET', '/jobs?limit=1&limit=2', { Authorization: `Bearer ${user.id_token}` }],
      ['GET', '/jobs/a%2Fb%20c', { 'X-API-Key': user.api_key }],
      ['POST', '/pdf/merge', { 'X-API-Key': user.api_key, 'Content-Type': 'Multipart/Form-Data; Boundary=XyZ' }, '--XyZ\r\nContent-Disposition: form-data; name="files"; filename="a.pdf"\r\n\r\nnot a pdf\r\n--XyZ--\r\n'],
    ];
    for (const [method, target, headers, body] of cases) {
      const local = await viaLocalGateway(method, target, headers, body);
      const aws = answered(await viaLambdaAdapter(method, target, headers, body));
      expect(`${method} ${target} ${aws.status}`).toBe(`${method} ${target} ${local.status}`);
      expect(local.status).toBeGreaterThanOrEqual(400);
      expect(envelope(aws.body)).toEqual(envelope(local.body));
    }
  });
});
