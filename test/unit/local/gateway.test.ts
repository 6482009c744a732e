import type { AddressInfo } from 'node:net';
import type { Services } from '../../../functions/composition';
import { ServiceError } from '../../../functions/core/errors';
import { GATEWAY_RESPONSES } from '../../../functions/http/gateway-responses';
import { type LocalRoute, MAX_REQUEST_BYTES, createGateway, gatewayResponseStatus } from '../../../local/gateway';

describe('local gateway responses', () => {
  it("answer the gateway's own failures with 500 and refusals with 4xx", () => {
    expect(gatewayResponseStatus('DEFAULT_5XX')).toBe(500);
    expect(gatewayResponseStatus('DEFAULT_4XX')).toBe(400);
    for (const def of GATEWAY_RESPONSES) {
      const status = gatewayResponseStatus(def.type);
      expect(def.code === 'INTERNAL_SERVER_ERROR' ? status >= 500 : status < 500).toBe(true);
    }
    expect(gatewayResponseStatus('REQUEST_TOO_LARGE')).toBe(413);
  });
});

describe('local gateway: local routes', () => {
  const errors: unknown[] = [];
  let base: string;
  let server: ReturnType<typeof createGateway>;
  const routes: LocalRoute[] = [
    { method: 'POST', path: '/_local/echo', handle: async (_p, body) => ({ status: 201, body: { length: typeof body === 'string' ? body.length : null, body } }) },
    { method: 'POST', path: '/_local/refuse/{code}', handle: async (p) => Promise.reject(p.code === 'boom' ? new Error('secret=hunter2') : new ServiceError(p.code, 'refused', { why: 'test' })) },
  ];

  beforeAll(async () => {
    const log = { error: (...args: unknown[]) => errors.push(args), warn: () => undefined, info: () => undefined, debug: () => undefined };
    server = createGateway({ services: { log } as unknown as Services, localRoutes: routes, throttle: { ratePerSecond: 1000, burst: 1000 } });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => (errors.length = 0));

  it('answers with the route\'s status and JSON, never cached (keys and tokens), with CORS and a request id', async () => {
    const res = await fetch(`${base}/_local/echo`, { method: 'POST', body: '{"a": 1}' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ length: null, body: { a: 1 } });
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers malformed JSON with 400 INVALID_PARAMETER naming the body', async () => {
    const res = await fetch(`${base}/_local/echo`, { method: 'POST', body: '{"a": ' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toEqual({ code: 'INVALID_PARAMETER', message: expect.any(String), details: { parameter: 'body' } });
    expect(errors).toEqual([]);
  });

  it('answers a refusal with its status, and an unexpected error with 500 that shows nothing of it and is logged', async () => {
    const refused = await fetch(`${base}/_local/refuse/NOT_FOUND`, { method: 'POST' });
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'refused', details: { why: 'test' } } });
    expect(errors).toEqual([]);
    const failed = await fetch(`${base}/_local/refuse/boom`, { method: 'POST' });
    expect(failed.status).toBe(500);
    const text = await failed.text();
    expect(JSON.parse(text).error).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', details: { request_id: failed.headers.get('x-request-id') } });
    expect(text).not.toContain('hunter2');
    expect(errors).toHaveLength(1);
  });

  it('takes a local route only with its method, and answers an unknown route with the 404 envelope', async () => {
    for (const [method, path] of [['GET', '/_local/echo'], ['POST', '/_local/nope']]) {
      const res = await fetch(`${base}${path}`, { method });
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 404`);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect((await res.json()).error).toEqual({ code: 'NOT_FOUND', message: expect.any(String), details: {} });
    }
  });

  it('takes a body of exactly 6 MB and refuses one byte more with 413 PAYLOAD_TOO_LARGE', async () => {
    const json = (bytes: number) => `"${'x'.repeat(bytes - 2)}"`;
    const whole = await fetch(`${base}/_local/echo`, { method: 'POST', body: json(MAX_REQUEST_BYTES) });
    expect(whole.status).toBe(201);
    expect((await whole.json()).length).toBe(MAX_REQUEST_BYTES - 2);
    const over = await fetch(`${base}/_local/echo`, { method: 'POST', body: json(MAX_REQUEST_BYTES + 1) });
    expect(over.status).toBe(413);
    expect((await over.json()).error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
