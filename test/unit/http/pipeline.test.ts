import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { type Services, setServices } from '../../../functions/composition';
import { toHttpError } from '../../../functions/http/errors';
import { ServiceError } from '../../../functions/core/errors';
import { errorMapper } from '../../../functions/http/middleware/error-mapper';
import { type Middleware, buildRequest, httpRoute } from '../../../functions/http/pipeline';
import { routeById } from '../../../functions/routes';
import { json } from '../../../functions/http/responses';
import { captureLogs } from '../../support/log-capture';

const event = { headers: {}, requestContext: { requestId: 'req-1' }, body: null, isBase64Encoded: false } as unknown as APIGatewayProxyEvent;

function useServices(checkResponseContract: boolean) {
  const logged: unknown[] = [];
  setServices({ log: { error: (...args: unknown[]) => logged.push(args) }, config: { checkResponseContract } } as unknown as Services);
  return logged;
}

afterEach(() => setServices(null));

describe('httpRoute 500s', () => {
  const generic = toHttpError(new Error('x'), 'req-1').body;

  it('answers an error no middleware handled with the error mapper’s envelope, and logs it', async () => {
    const logged = useServices(false);
    const handler = httpRoute('me.get', async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.7 password=hunter2');
    }, () => []);
    const res = await handler(event);
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body)).toEqual(generic);
    expect(logged).toHaveLength(1);
    // The answer's request id is what a caller quotes to support: the log line must name it.
    expect((logged[0] as unknown[])[0]).toContain('req-1');
  });

  it('answers a response that breaks the OpenAPI document with the same envelope, naming the violation', async () => {
    const logged = useServices(true);
    const handler = httpRoute('me.get', async () => json(200, { not: 'an account' }), () => []);
    const res = await handler(event);
    expect(logged).toEqual([[expect.stringContaining('req-1')]]);
    expect(res.statusCode).toBe(500);
    const body = JSON.parse(res.body);
    expect(body.error.code).toBe(generic.error.code);
    expect(body.error.message).toBe(generic.error.message);
    expect(body.error.details).toEqual({ request_id: 'req-1', contract_violation: expect.any(String) });
  });
});

describe('httpRoute middleware', () => {
  it('runs befores in order, the handler, then afters in reverse; an early answer skips the rest and the handler', async () => {
    useServices(false);
    const seen: string[] = [];
    const mw = (name: string, early = false): Middleware => ({
      async before() {
        seen.push(`before ${name}`);
        return early ? json(202, { from: name }) : undefined;
      },
      async after(_req, res) {
        seen.push(`after ${name}`);
        return { ...res, headers: { ...res.headers, [`X-${name}`]: '1' } };
      },
    });
    const handler = async () => {
      seen.push('handler');
      return json(200, {});
    };
    const full = await httpRoute('me.get', handler, () => [mw('a'), mw('b')])(event);
    expect(seen).toEqual(['before a', 'before b', 'handler', 'after b', 'after a']);
    expect(full.headers).toMatchObject({ 'X-a': '1', 'X-b': '1' });

    seen.length = 0;
    const early = await httpRoute('me.get', handler, () => [mw('a'), mw('b', true), mw('c')])(event);
    expect(seen).toEqual(['before a', 'before b', 'after b', 'after a']);
    expect(early.statusCode).toBe(202);
    expect(JSON.parse(early.body)).toEqual({ from: 'b' });
  });

  it('lets the innermost onError that answers answer, and logs nothing for a refusal the error mapper answered', async () => {
    const logged = useServices(false);
    const inner: Middleware = { onError: async (_req, err) => (err instanceof ServiceError && err.code === 'CONFLICT' ? json(409, { inner: true }) : undefined) };
    const route = (code: string) =>
      httpRoute('me.get', async () => {
        throw new ServiceError(code, 'x');
      }, () => [errorMapper, inner]);
    expect(JSON.parse((await route('CONFLICT')(event)).body)).toEqual({ inner: true });
    const refused = await route('JOB_NOT_FOUND')(event);
    expect(refused.statusCode).toBe(404);
    expect(logged).toEqual([]);
  });
});

describe('buildRequest', () => {
  const withBody = (bytes: Buffer) => buildRequest({ ...event, body: bytes.toString('base64'), isBase64Encoded: true } as unknown as APIGatewayProxyEvent, routeById('quickjob.create'), {} as Services);

  it('refuses a JSON body that is not UTF-8 (it printed U+FFFD), and reads one behind a byte-order mark', () => {
    const latin1 = Buffer.from('{"input_type": "html", "html": "caf\xe9"}', 'latin1');
    expect(() => withBody(latin1).json()).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', message: expect.stringContaining('UTF-8'), details: { parameter: 'body' } }));
    expect(withBody(Buffer.from('\ufeff{"html": "café"}', 'utf8')).json()).toEqual({ html: 'café' });
  });

  it('refuses a body nested deeper than any request as JSON it cannot read (400), not a stack overflow later (500)', () => {
    const body = `{"input_type": ${'['.repeat(100_000)}${']'.repeat(100_000)}, "html": "x"}`;
    const req = buildRequest({ ...event, body } as unknown as APIGatewayProxyEvent, routeById('quickjob.create'), {} as Services);
    expect(() => req.json()).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', details: { parameter: 'body' } }));
  });

  it('refuses a compressed body, which no gateway inflates, instead of reading its compressed bytes or a mislabelled plain body', () => {
    const encoded = (coding: string, bytes: Buffer) =>
      buildRequest({ ...event, headers: { 'Content-Encoding': coding }, body: bytes.toString('base64'), isBase64Encoded: true } as unknown as APIGatewayProxyEvent, routeById('quickjob.create'), {} as Services);
    const text = '{"input_type": "html", "html": "<p>x</p>"}';
    const refusal = expect.objectContaining({ code: 'INVALID_PARAMETER', message: expect.stringContaining('uncompressed'), details: { parameter: 'Content-Encoding' } });
    expect(() => encoded('gzip', gzipSync(text)).json()).toThrow(refusal);
    expect(() => encoded('gzip', Buffer.from(text)).json()).toThrow(refusal);
    expect(() => encoded('br', Buffer.from(text)).body).toThrow(refusal);
    // Multipart routes read the bytes themselves.
    expect(() => encoded('deflate', Buffer.from('--b\r\n')).body).toThrow(refusal);
    expect(encoded('identity', Buffer.from(text)).json()).toEqual({ input_type: 'html', html: '<p>x</p>' });
    expect(encoded('gzip', Buffer.alloc(0)).json()).toBeUndefined();
  });

  it('reads a body of only white space as no body', () => {
    expect(withBody(Buffer.from(' \r\n\t')).json()).toBeUndefined();
  });

  it('never tells a negative time when the gateway\'s clock is ahead of the function\'s (a budget would grow past its limit)', () => {
    const clock = { now: () => new Date(Date.parse('2026-11-22T10:00:00Z')) };
    const ahead = { ...event, requestContext: { requestId: 'r', requestTimeEpoch: Date.parse('2026-11-22T10:00:02Z') } } as unknown as APIGatewayProxyEvent;
    expect(buildRequest(ahead, routeById('me.get'), {} as Services, clock).sinceReceivedMs()).toBe(0);
    // A time that is no time counts from when the request was built, as a missing one does.
    const broken = { ...event, requestContext: { requestId: 'r', requestTimeEpoch: Number.NaN } } as unknown as APIGatewayProxyEvent;
    expect(buildRequest(broken, routeById('me.get'), {} as Services, clock).sinceReceivedMs()).toBe(0);
  });

  it('tells how long ago the gateway received the request, and 0 without its time', () => {
    let now = Date.parse('2026-11-22T10:00:05Z');
    const clock = { now: () => new Date(now) };
    const stamped = { ...event, requestContext: { requestId: 'r', requestTimeEpoch: Date.parse('2026-11-22T10:00:00Z') } } as unknown as APIGatewayProxyEvent;
    const received = buildRequest(stamped, routeById('me.get'), {} as Services, clock);
    expect(received.sinceReceivedMs()).toBe(5_000);
    // Without the gateway's time it counts from when the request was built.
    const unstamped = buildRequest(event, routeById('me.get'), {} as Services, clock);
    expect(unstamped.sinceReceivedMs()).toBe(0);
    now += 250;
    expect(received.sinceReceivedMs()).toBe(5_250);
    expect(unstamped.sinceReceivedMs()).toBe(250);
  });
});

describe('httpRoute at cold start', () => {
  afterEach(() => {
    delete process.env.TEST_ONLY_SETTING_SECRET_ID;
    delete process.env.TEST_ONLY_SETTING;
  });

  it('answers 500 in the envelope while the deployment secrets cannot be read, and reads them on a later request', async () => {
    // A fresh module registry: a cold start, before anything read (or skipped) the secrets.
    let fresh!: { httpRoute: typeof httpRoute; setServices: typeof setServices };
    jest.isolateModules(() => {
      fresh = { httpRoute: require('../../../functions/http/pipeline').httpRoute, setServices: require('../../../functions/composition').setServices };
    });
    fresh.setServices({ log: { error: () => undefined }, config: { checkResponseContract: false } } as unknown as Services);
    const sm = mockClient(SecretsManagerClient);
    const logs = captureLogs();
    try {
      process.env.TEST_ONLY_SETTING_SECRET_ID = 'pdf-service/test';
      sm.on(GetSecretValueCommand).rejects(new Error('throttled'));
      const handler = fresh.httpRoute('me.get', async () => json(200, { setting: process.env.TEST_ONLY_SETTING }), () => []);
      const failed = await handler(event);
      expect(failed.statusCode).toBe(500);
      expect(JSON.parse(failed.body)).toEqual(toHttpError(new Error('x'), 'req-1').body);
      // One JSON line at error level (what the error alarm's metric filter counts), naming the request.
      expect(logs.entries()).toEqual([
        expect.objectContaining({ level: 'error', message: expect.stringMatching(/could not load the deployment's secrets.*req-1/), extra: expect.objectContaining({ message: 'throttled' }) }),
      ]);

      sm.on(GetSecretValueCommand).resolves({ SecretString: 'loaded' });
      const ok = await handler(event);
      expect(ok.statusCode).toBe(200);
      expect(JSON.parse(ok.body)).toEqual({ setting: 'loaded' });
    } finally {
      sm.restore();
      logs.restore();
    }
  });
});
