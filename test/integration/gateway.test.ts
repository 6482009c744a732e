import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { ROUTES } from '../../functions/routes';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account();
});
afterAll(() => stack?.stop());

function concretePath(path: string) {
  return path.replace(/\{[^}]+\}/g, 'x1');
}

describe('local gateway', () => {
  it('answers unknown routes and unknown methods with a 404 envelope', async () => {
    for (const [method, path] of [['GET', '/nope'], ['DELETE', '/quickjob'], ['GET', '/jobs/a/b/c/d/e'], ['GET', '/jobs//files']]) {
      const res = await stack.request(method, path, { key: user.api_key });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect((await res.json()).error.code).toBe('NOT_FOUND');
    }
  });

  it('refuses requests over 6 MB with 413 and an envelope', async () => {
    const body = JSON.stringify({ input_type: 'html', html: 'x'.repeat(6 * 1024 * 1024 + 10) });
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, body, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('takes header and query names that Object.prototype also has as ordinary names (API Gateway does)', async () => {
    for (const query of ['constructor=1', '__proto__=x', 'toString=1&hasOwnProperty=2']) {
      const res = await stack.request('GET', `/me?${query}`, { key: user.api_key });
      expect(`${query} ${res.status}`).toBe(`${query} 200`);
    }
    const res = await stack.request('GET', '/me', { key: user.api_key, headers: { toString: '1', constructor: 'x', valueOf: '1' } });
    expect(res.status).toBe(200);
  });

  it('routes the path the client sent: a leading // names no host and \\ is no separator', async () => {
    const port = Number(new URL(stack.baseUrl).port);
    const body = (reply: string) => JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
    // Both used to be read as links are (host `x`, backslash as `/`) and served as GET /me.
    for (const target of ['//x/me', '/x\\..\\me']) {
      const reply = await rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${user.api_key}\r\nConnection: close\r\n\r\n`);
      expect(`${target} ${reply.split('\r\n')[0]}`).toBe(`${target} HTTP/1.1 404 Not Found`);
      expect(body(reply).error.code).toBe('NOT_FOUND');
    }
    const reply = await rawExchange(port, `GET /jobs/a\\b HTTP/1.1\r\nHost: x\r\nX-API-Key: ${user.api_key}\r\nConnection: close\r\n\r\n`);
    expect(body(reply).error).toMatchObject({ code: 'JOB_NOT_FOUND', details: { job_id: 'a\\b' } });
  });

  it('answers a path parameter that is no percent-encoding with 404, not 500', async () => {
    const res = await stack.request('POST', '/_local/accounts/%ZZ/token');
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('NOT_FOUND');
  });

  it('answers JSON nested deeper than any request with 400 INVALID_PARAMETER, not a 500', async () => {
    const body = `{"input_type": ${'['.repeat(100_000)}${']'.repeat(100_000)}, "html": "x"}`;
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, body, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'body' } });
  });

  it('answers malformed JSON with 400 INVALID_PARAMETER', async () => {
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, body: '{"input_type": "html",', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'body' } });
  });

  it('refuses compressed bodies with 400 INVALID_PARAMETER naming Content-Encoding (no gateway inflates them)', async () => {
    const json = Buffer.from(JSON.stringify({ input_type: 'html', html: '<p>x</p>' }));
    for (const body of [gzipSync(json), json]) {
      const res = await stack.request('POST', '/quickjob', { key: user.api_key, body, headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' } });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'Content-Encoding' } });
    }
  });

  it('answers every route not built yet with 501 NOT_IMPLEMENTED, after the credential check', async () => {
    const pending = ROUTES.filter((r) => r.handler === null);
    expect(pending.length).toBeGreaterThan(0);
    for (const route of pending) {
      const auth = route.access === 'token' ? { token: user.id_token } : route.access === 'key_or_token' ? { key: user.api_key } : {};
      const res = await stack.request(route.method, concretePath(route.path), { ...auth, json: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
      expect(`${route.method} ${route.path} ${res.status}`).toBe(`${route.method} ${route.path} 501`);
      expect((await res.json()).error.code).toBe('NOT_IMPLEMENTED');
      if (route.access !== 'none') expect((await stack.request(route.method, concretePath(route.path))).status).toBe(401);
    }
  });

  it('serves its OpenAPI document without a credential, listing every route', async () => {
    const res = await stack.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const route of ROUTES) expect(doc.paths[route.path]?.[route.method.toLowerCase()]?.operationId).toBe(route.id);
  });

  it('answers CORS preflights for the dashboard', async () => {
    const res = await stack.request('OPTIONS', '/quickjob', { headers: { Origin: 'https://dashboard.example.com', 'Access-Control-Request-Method': 'POST' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toContain('X-API-Key');
  });

  it('answers preflights only where a route lives, naming that path\'s methods (as API Gateway does)', async () => {
    const preflight = (path: string) => stack.request('OPTIONS', path, { headers: { Origin: 'https://dashboard.example.com', 'Access-Control-Request-Method': 'GET' } });
    const job = await preflight('/jobs/job_123');
    expect(job.status).toBe(204);
    expect(job.headers.get('access-control-allow-methods')).toBe('GET,OPTIONS');
    const nowhere = await preflight('/nope');
    expect(nowhere.status).toBe(404);
    expect((await nowhere.json()).error.code).toBe('NOT_FOUND');
  });

  it('answers a pipelined request in full before closing on the unreadable one after it', async () => {
    // The first request's answer was cut off by the second one's 400 (and a quick job behind it was still charged).
    const reply = await rawExchange(Number(new URL(stack.baseUrl).port), `GET /me HTTP/1.1\r\nHost: x\r\nX-API-Key: ${user.api_key}\r\n\r\nGARBAGE\r\n\r\n`);
    expect(reply.slice(0, 600)).toMatch(/^HTTP\/1\.1 200/);
    const first = reply.slice(reply.indexOf('\r\n\r\n') + 4);
    expect(first).toContain(`"account_id":"${user.account_id}"`);
  });

  it('answers unexpected failures with 500 INTERNAL_SERVER_ERROR and no internals', async () => {
    const accounts = stack.services.accounts;
    const original = accounts.get.bind(accounts);
    accounts.get = async () => {
      throw new Error('connect ECONNREFUSED 10.1.2.3:8000 secret=hunter2');
    };
    try {
      const res = await stack.request('GET', '/me', { token: user.id_token });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text).error.code).toBe('INTERNAL_SERVER_ERROR');
      expect(text).not.toMatch(/ECONNREFUSED|hunter2|10\.1\.2\.3/);
    } finally {
      accounts.get = original;
    }
  });
});

describe('requests Node would answer with a bare status', () => {
  const port = () => Number(new URL(stack.baseUrl).port);
  const body = (reply: string) => JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));

  it('answers a request with an expectation other than 100-continue (no bare 417)', async () => {
    const reply = await rawExchange(port(), 'GET /nowhere HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 404/);
    expect(body(reply).error.code).toBe('NOT_FOUND');
  });

  it('answers a request without Host by its path (no bare 400)', async () => {
    const reply = await rawExchange(port(), 'GET /me HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 401/);
    expect(body(reply).error.code).toBe('UNAUTHORIZED');
  });

  it('refuses a body declared over 64 MB with 413 at once and closes, without waiting for (or reading) it', async () => {
    const socket = net.connect(port(), '127.0.0.1');
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk));
    socket.write(`POST /quickjob HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`);
    const closed = await new Promise<boolean>((resolve) => {
      socket.on('close', () => resolve(true));
      setTimeout(() => resolve(false), 5_000);
    });
    socket.destroy();
    expect(closed).toBe(true);
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(body(reply).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers CONNECT with the 404 envelope instead of closing the socket', async () => {
    const reply = await rawExchange(port(), 'CONNECT 169.254.169.254:80 HTTP/1.1\r\nHost: 169.254.169.254:80\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 404/);
    expect(body(reply).error.code).toBe('NOT_FOUND');
  });
});

describe('platform throttle', () => {
  it('answers 429 THROTTLED once the token bucket is empty', async () => {
    const throttled = await startTestStack({ LOCAL_THROTTLE_RPS: '0.001', LOCAL_THROTTLE_BURST: '3' });
    try {
      // A burst of 3 and one token per 1000 s: the first 3 requests pass (404, no such route), every later one is throttled.
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await throttled.request('GET', '/nope')).status);
      expect(statuses).toEqual([404, 404, 404, 429, 429]);
      const res = await throttled.request('GET', '/nope');
      expect(res.status).toBe(429);
      expect((await res.json()).error.code).toBe('THROTTLED');
    } finally {
      await throttled.stop();
    }
  });
});

/** Sends raw bytes and reads the whole reply (the connection is closed after it). */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk));
    socket.on('close', () => resolve(reply));
    socket.on('error', reject);
    socket.write(request);
  });
}

describe('requests Node cannot parse', () => {
  const body = (reply: string) => JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));

  it('answers headers over 16 KB (a giant token) with 400 and the envelope, not a bare 431', async () => {
    const reply = await rawExchange(Number(new URL(stack.baseUrl).port), `GET /me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(100_000)}\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(body(reply).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'headers' } });
  });

  it('answers a method Node does not know (BREW, lower-case get) with the unknown-route 404, not "not valid HTTP"', async () => {
    for (const method of ['BREW', 'get']) {
      const reply = await rawExchange(Number(new URL(stack.baseUrl).port), `${method} /me HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(reply).toMatch(/^HTTP\/1\.1 404/);
      expect(body(reply).error.code).toBe('NOT_FOUND');
    }
  });

  it('answers a control character in a header with 400 and the envelope', async () => {
    const reply = await rawExchange(Number(new URL(stack.baseUrl).port), 'GET /me HTTP/1.1\r\nHost: x\r\nX-API-Key: pk_\x01abc\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(body(reply).error.code).toBe('INVALID_PARAMETER');
  });
});

describe('slow clients', () => {
  it('answers a request whose body stalls with 408 and closes the connection, instead of holding it for minutes', async () => {
    const slow = await startTestStack({ LOCAL_REQUEST_TIMEOUT_MS: '1000' });
    try {
      const { port } = new URL(slow.baseUrl);
      const socket = net.connect(Number(port), '127.0.0.1');
      let reply = '';
      socket.on('data', (chunk) => (reply += chunk));
      socket.write('POST /quickjob HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"input_type":');
      const closed = await new Promise<boolean>((resolve) => {
        socket.on('close', () => resolve(true));
        setTimeout(() => resolve(false), 10_000);
      });
      expect(closed).toBe(true);
      expect(reply).toMatch(/^HTTP\/1\.1 408/);
      expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ code: 'REQUEST_TIMEOUT' });
    } finally {
      await slow.stop();
    }
  });

  it('answers a request in full when a pipelined request behind it stalls past the time limit, then closes', async () => {
    // The stalled request's 408 was written at once, ending the socket in place of the earlier answer: a quick job
    // that arrived whole was charged and its PDF lost, and the client read "did not arrive in time" as its reply.
    const slow = await startTestStack({ LOCAL_REQUEST_TIMEOUT_MS: '1000' });
    try {
      const account = await slow.account();
      const { port } = new URL(slow.baseUrl);
      const socket = net.connect(Number(port), '127.0.0.1');
      const raw: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => raw.push(chunk));
      const body = JSON.stringify({ input_type: 'html', html: '<script>const t = Date.now(); while (Date.now() - t < 3000) {}</script><p>slow</p>' });
      socket.write(`POST /quickjob HTTP/1.1\r\nHost: x\r\nX-API-Key: ${account.api_key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      // The next request's headers stall: its time limit (1 s) runs out while the first is still rendering.
      setTimeout(() => socket.write('GET /me HTTP/1.1\r\nHost: x\r\n'), 200);
      const closed = await new Promise<boolean>((resolve) => {
        socket.on('close', () => resolve(true));
        setTimeout(() => resolve(false), 20_000);
      });
      expect(closed).toBe(true);
      const reply = Buffer.concat(raw).toString('latin1');
      expect(reply.slice(0, 40)).toMatch(/^HTTP\/1\.1 200/);
      expect(reply).toContain('%PDF-');
      expect(reply).not.toContain('REQUEST_TIMEOUT');
    } finally {
      await slow.stop();
    }
  });
});
