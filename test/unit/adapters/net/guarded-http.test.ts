import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { GuardedHttpClient } from '../../../../functions/adapters/net/guarded-http';
import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { FetchError } from '../../../../functions/core/net/fetch';
import { NetworkGuard } from '../../../../functions/core/net/guard';

const MiB = 1024 * 1024;
/** 256 MiB of zeros as a few hundred bytes of brotli. */
const BROTLI_BOMB = zlib.brotliCompressSync(Buffer.alloc(256 * MiB), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
let server: http.Server;
let port: number;
/** A server on loopback the allowlist does not name, counting its hits. */
let unlisted: { server: http.Server; port: number; hits: string[] };
/** How each response ended on the server side: `finished` (whole body written) or `closed` (client dropped it). */
const endings = new Map<string, Promise<'finished' | 'closed'>>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    endings.set(
      path,
      new Promise((resolve) => {
        res.on('finish', () => resolve('finished'));
        res.on('close', () => resolve(res.writableFinished ? 'finished' : 'closed'));
      }),
    );
    req.resume();
    req.on('end', () => {
      if (path === '/big') return res.writeHead(200, { 'Content-Length': String(2 * MiB) }).end(Buffer.alloc(2 * MiB, 0x61));
      if (path === '/big-chunked') {
        res.writeHead(202);
        for (let i = 0; i < 4; i++) res.write(Buffer.alloc(MiB / 2, 0x62));
        return res.end();
      }
      if (path === '/endless') {
        res.writeHead(200);
        const tick = setInterval(() => res.write('x'.repeat(100)), 10);
        res.on('close', () => clearInterval(tick));
        return;
      }
      // Exactly the limit, declared or chunked; one byte over it, chunked (no Content-Length to refuse it by).
      if (path === '/exact') return res.writeHead(200, { 'Content-Length': String(MiB) }).end(Buffer.alloc(MiB, 0x63));
      if (path === '/exact-chunked' || path === '/over-by-one-chunked') {
        res.writeHead(200);
        res.write(Buffer.alloc(MiB / 2, 0x64));
        return res.end(Buffer.alloc(MiB / 2 + (path === '/exact-chunked' ? 0 : 1), 0x64));
      }
      // Stored (level 0) gzip: the download is over the limit although what it decodes to is exactly the limit.
      if (path === '/gzip-stored') return res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(zlib.gzipSync(Buffer.alloc(MiB, 0x65), { level: 0 }));
      if (path === '/gzip-over-by-one') return res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(zlib.gzipSync(Buffer.alloc(MiB + 1, 0x66)));
      if (path === '/brotli-bomb') return res.writeHead(200, { 'Content-Encoding': 'br' }).end(BROTLI_BOMB);
      // Redirects to a server the allowlist does not name, and to a scheme this request does not allow.
      if (path === '/to-unlisted') return res.writeHead(302, { Location: `http://127.0.0.1:${unlisted.port}/secret` }).end();
      if (path === '/to-https') return res.writeHead(302, { Location: `https://127.0.0.1:${port}/small-500` }).end();
      // Each hop answers only after a while: the hops together outlast the exchange's deadline, none alone does.
      const hop = /^\/slow-hop\/(\d+)$/.exec(path);
      if (hop) return void setTimeout(() => (Number(hop[1]) > 0 ? res.writeHead(302, { Location: `/slow-hop/${Number(hop[1]) - 1}` }).end() : res.writeHead(200).end('done')), 150);
      if (path === '/see-other') return res.writeHead(303, { Location: '/method' }).end();
      if (path === '/temporary') return res.writeHead(307, { Location: '/method' }).end();
      if (path === '/method') return res.writeHead(200).end(req.method);
      if (path === '/to-credentials') return res.writeHead(302, { Location: `http://bob:hunter2@127.0.0.1:${port}/big` }).end();
      if (path === '/deflate-bytewise' || path === '/deflate-raw-bytewise') {
        // A deflate body one byte per write, so the two bytes that tell zlib from raw deflate arrive apart.
        const text = Buffer.from('deflated either way');
        const body = path === '/deflate-bytewise' ? zlib.deflateSync(text) : zlib.deflateRawSync(text);
        res.writeHead(200, { 'Content-Encoding': 'deflate' });
        let at = 0;
        const tick = setInterval(() => (at < body.length ? res.write(body.subarray(at, ++at)) : (clearInterval(tick), res.end())), 1);
        return;
      }
      if (path === '/deflate-empty') return res.writeHead(200, { 'Content-Encoding': 'deflate' }).end();
      if (path === '/small-500') return res.writeHead(500, { 'Content-Type': 'text/plain' }).end('broken');
      if (path === '/silent') return; // never answers
      // Switches protocols unasked (the request named no Upgrade), written raw: Node's server would not send it.
      if (path === '/switches') return void req.socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      if (path === '/trickle') {
        // Keeps sending (a chunk every 50 ms), finishing after ~600 ms.
        res.writeHead(200);
        let sent = 0;
        const tick = setInterval(() => (++sent === 12 ? (clearInterval(tick), res.end('x')) : res.write('x')), 50);
        res.on('close', () => clearInterval(tick));
        return;
      }
      if (path === '/stalls') {
        // Starts the body, then falls silent.
        res.writeHead(200);
        res.write('first bytes');
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  const hits: string[] = [];
  const other = http.createServer((req, res) => (hits.push(req.url ?? ''), res.end('secret')));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  unlisted = { server: other, port: (other.address() as AddressInfo).port, hits };
});
afterAll(async () => {
  unlisted.server.closeAllConnections();
  await new Promise((resolve) => unlisted.server.close(resolve));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const client = () => new GuardedHttpClient(new NetworkGuard({ resolve: async () => [] }, new PrivateTargetAllowlist(`127.0.0.1:${port}`)), { userAgent: 'test' });
const post = (path: string, extra: { discardBody?: boolean; timeoutMs?: number; idleTimeoutMs?: number } = {}) =>
  client().request({ method: 'POST', url: `http://127.0.0.1:${port}${path}`, body: Buffer.from('{}'), schemes: ['http:'], maxRedirects: 0, maxBytes: MiB, timeoutMs: 5_000, ...extra });

describe('GuardedHttpClient', () => {
  it('refuses a redirect to a URL with a user name or password as credentials, before connecting', async () => {
    const request = client().request({ method: 'GET', url: `http://127.0.0.1:${port}/to-credentials`, schemes: ['http:'], maxRedirects: 5, maxBytes: MiB, timeoutMs: 5_000 });
    await expect(request).rejects.toMatchObject({ kind: 'credentials', url: `http://bob:hunter2@127.0.0.1:${port}/big` });
    expect(endings.has('/big')).toBe(false);
  });

  it('checks every redirect hop with the guard: one to a target the guard refuses is blocked before connecting', async () => {
    const request = client().request({ method: 'GET', url: `http://127.0.0.1:${port}/to-unlisted`, schemes: ['http:'], maxRedirects: 5, maxBytes: MiB, timeoutMs: 5_000 });
    await expect(request).rejects.toMatchObject({ kind: 'blocked', url: `http://127.0.0.1:${unlisted.port}/secret` });
    expect(unlisted.hits).toEqual([]);
  });

  it('checks the scheme of every redirect hop, not only the first URL', async () => {
    const request = client().request({ method: 'GET', url: `http://127.0.0.1:${port}/to-https`, schemes: ['http:'], maxRedirects: 5, maxBytes: MiB, timeoutMs: 5_000 });
    await expect(request).rejects.toMatchObject({ kind: 'scheme', url: `https://127.0.0.1:${port}/small-500` });
  });

  it('connects to the address the guard approved, never to what the system resolver answers for the name', async () => {
    // The guard's resolver says 127.0.0.2, where the server is; the system's says 127.0.0.1 (or ::1), where nothing
    // answers on that port: as a name rebinding between the check and the connection would.
    const approved = http.createServer((_req, res) => res.end('approved address'));
    await new Promise<void>((resolve) => approved.listen(0, '127.0.0.2', resolve));
    try {
      const approvedPort = (approved.address() as AddressInfo).port;
      const guard = new NetworkGuard({ resolve: async () => [{ address: '127.0.0.2', family: 4 }] }, new PrivateTargetAllowlist(`localhost:${approvedPort}`));
      const res = await new GuardedHttpClient(guard, { userAgent: 'test' }).request({ method: 'GET', url: `http://localhost:${approvedPort}/`, schemes: ['http:'], maxRedirects: 0, maxBytes: MiB, timeoutMs: 5_000 });
      expect(res.body.toString()).toBe('approved address');
    } finally {
      approved.closeAllConnections();
      await new Promise((resolve) => approved.close(resolve));
    }
  });

  it('one deadline covers every hop: redirects each in time but together too slow time out', async () => {
    const request = client().request({ method: 'GET', url: `http://127.0.0.1:${port}/slow-hop/8`, schemes: ['http:'], maxRedirects: 10, maxBytes: MiB, timeoutMs: 600 });
    await expect(request).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('follows a 303 with a GET and a 307 with the same POST', async () => {
    const send = (path: string) => client().request({ method: 'POST', url: `http://127.0.0.1:${port}${path}`, body: Buffer.from('{}'), schemes: ['http:'], maxRedirects: 1, maxBytes: MiB, timeoutMs: 5_000 });
    expect((await send('/see-other')).body.toString()).toBe('GET');
    expect((await send('/temporary')).body.toString()).toBe('POST');
  });

  it('by default reads the body and refuses one over maxBytes (URL input keeps this)', async () => {
    await expect(post('/big')).rejects.toMatchObject({ kind: 'too_large' });
    await expect(post('/big-chunked')).rejects.toMatchObject({ kind: 'too_large' });
  });

  it('takes a body of exactly maxBytes, declared or chunked, and refuses one byte more', async () => {
    for (const path of ['/exact', '/exact-chunked']) expect([path, (await post(path)).body.length]).toEqual([path, MiB]);
    await expect(post('/over-by-one-chunked')).rejects.toMatchObject({ kind: 'too_large' });
    // Decoded bytes count: a small download that decodes to one byte over is refused.
    await expect(post('/gzip-over-by-one')).rejects.toMatchObject({ kind: 'too_large', message: expect.stringContaining('decoded') });
    // A declared length over the limit is refused from the headers, before the body is downloaded.
    await expect(post('/big')).rejects.toMatchObject({ kind: 'too_large', message: `the response is ${2 * MiB} bytes; the limit is ${MiB}` });
  });

  it('caps the download itself too: a compressed body over maxBytes is refused although it decodes to no more than that', async () => {
    await expect(post('/gzip-stored')).rejects.toMatchObject({ kind: 'too_large', message: expect.stringContaining(`exceeds ${MiB} bytes`) });
  });

  it('reads Content-Encoding: deflate zlib-wrapped or raw, as browsers do, however its first bytes arrive', async () => {
    for (const path of ['/deflate-bytewise', '/deflate-raw-bytewise']) expect((await post(path)).body.toString()).toBe('deflated either way');
    await expect(post('/deflate-empty')).rejects.toMatchObject({ kind: 'bad_response' });
  });

  it('stops decoding a compressed body once it is refused (the decoder would go on inflating what it holds)', async () => {
    expect(BROTLI_BOMB.length).toBeLessThan(64 * 1024);
    const destroy = jest.spyOn(zlib.BrotliDecompress.prototype, 'destroy');
    try {
      await expect(post('/brotli-bomb')).rejects.toMatchObject({ kind: 'too_large' });
      expect(destroy.mock.contexts.some((d) => d instanceof zlib.BrotliDecompress && d.destroyed)).toBe(true);
    } finally {
      destroy.mockRestore();
    }
  });

  it('with discardBody settles on the status line: a 2xx with a body over maxBytes is an answer', async () => {
    for (const path of ['/big', '/big-chunked']) {
      const res = await post(path, { discardBody: true });
      expect([path, res.status, res.body.length]).toEqual([path, path === '/big' ? 200 : 202, 0]);
    }
    const small = await post('/small-500', { discardBody: true });
    expect(small).toMatchObject({ status: 500, headers: expect.objectContaining({ 'content-type': 'text/plain' }) });
  });

  it('with discardBody does not wait for a body that never ends, and closes it', async () => {
    // Waiting for the body would end in the 3 s timeout's rejection, not a status.
    expect((await post('/endless', { discardBody: true, timeoutMs: 3_000 })).status).toBe(200);
    expect(await endings.get('/endless')).toBe('closed');
  });

  it('counts the DNS lookup against the deadline: a resolver that never answers is a timeout', async () => {
    const stuck = new GuardedHttpClient(new NetworkGuard({ resolve: () => new Promise(() => {}) }, new PrivateTargetAllowlist('')), { userAgent: 'test' });
    // Without the deadline this never settles (and jest's timeout fails the test).
    const err = await stuck
      .request({ method: 'POST', url: 'https://hooks.example.com/in', body: Buffer.from('{}'), schemes: ['https:'], maxRedirects: 0, maxBytes: MiB, timeoutMs: 300, discardBody: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect(err).toMatchObject({ kind: 'timeout' });
    // With a silence limit: silent when the limit ends the wait, too slow when the whole exchange's deadline does.
    const get = (idleTimeoutMs: number, timeoutMs: number) =>
      stuck.request({ method: 'GET', url: 'https://example.com/', schemes: ['https:'], maxRedirects: 0, maxBytes: MiB, timeoutMs, idleTimeoutMs }).catch((e: unknown) => e);
    expect(await get(100, 60_000)).toMatchObject({ kind: 'timeout', message: 'no DNS answer within 100 ms' });
    expect(await get(60_000, 150)).toMatchObject({ kind: 'too_slow' });
  });

  it('with idleTimeoutMs waits for a remote that keeps sending, and fails one that falls silent that long', async () => {
    // Silent for 200 ms at most between chunks: the 600 ms trickle completes although it outlasts the idle wait.
    expect((await post('/trickle', { idleTimeoutMs: 200, timeoutMs: 5_000 })).body.toString()).toBe('x'.repeat(12));
    // The deadline is a minute away: only the idle wait can settle these before jest's 5 s test timeout.
    await expect(post('/stalls', { idleTimeoutMs: 200, timeoutMs: 60_000 })).rejects.toMatchObject({ kind: 'timeout', message: expect.stringContaining('sent nothing for 200 ms') });
    await expect(post('/silent', { idleTimeoutMs: 200, timeoutMs: 60_000 })).rejects.toMatchObject({ kind: 'timeout' });
    expect(await endings.get('/stalls')).toBe('closed');
  });

  it('with idleTimeoutMs still caps the whole exchange: a remote that keeps sending past timeoutMs is too slow', async () => {
    await expect(post('/trickle', { idleTimeoutMs: 200, timeoutMs: 300 })).rejects.toMatchObject({ kind: 'too_slow' });
    await expect(post('/endless', { idleTimeoutMs: 200, timeoutMs: 300 })).rejects.toMatchObject({ kind: 'too_slow' });
  });

  it('answers a 101 with an Upgrade header as the status it is, at once, rather than waiting out the deadline', async () => {
    for (const discardBody of [true, false]) {
      const res = await post('/switches', { discardBody, timeoutMs: 3_000 });
      expect([res.status, res.headers.upgrade, res.body.length]).toEqual([101, 'websocket', 0]);
    }
  });

  it('with discardBody still times out when no status line comes', async () => {
    const err = await post('/silent', { discardBody: true, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect(err).toMatchObject({ kind: 'timeout' });
  });
});
