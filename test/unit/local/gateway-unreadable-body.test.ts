import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { Services } from '../../../functions/composition';
import { createGateway } from '../../../local/gateway';

/** A gateway on a free loopback port, logging into `errors` (no route is reached: bodies are refused first). */
async function startGateway(errors: unknown[], requestTimeoutMs = 20_000) {
  const log = { error: (...args: unknown[]) => errors.push(args), warn: () => undefined, info: () => undefined, debug: () => undefined };
  const server = createGateway({ services: { log } as unknown as Services, localRoutes: [], throttle: { ratePerSecond: 1000, burst: 1000 }, requestTimeoutMs });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Sends raw bytes; resolves with what came back once the server closes the connection, or after `waitMs`. */
function exchange(port: number, request: string, waitMs: number): Promise<{ reply: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let firstByteMs: number | undefined;
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ reply, closed, ms: firstByteMs ?? Date.now() - started });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('data', (chunk) => {
      reply += chunk;
      firstByteMs ??= Date.now() - started;
    });
    socket.on('close', () => done(true));
    socket.on('error', () => done(true));
    socket.write(request);
  });
}

describe('local gateway: a request whose own chunked body is malformed', () => {
  it('is answered at once with 400 and the envelope (it waited for the 30 s request timeout, then said 408)', async () => {
    const errors: unknown[] = [];
    const { server, port } = await startGateway(errors);
    try {
      const { reply, closed, ms } = await exchange(port, 'POST /quickjob HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n', 5_000);
      expect(closed).toBe(true);
      expect(ms).toBeLessThan(5_000);
      expect(reply).toMatch(/^HTTP\/1\.1 400/);
      const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
      expect(body.error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'body' } });
      // The connection's close is no failure of ours: nothing is logged as an error.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(errors).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('logs no error when a client goes away in the middle of its body', async () => {
    const errors: unknown[] = [];
    // The gateway notices a half-closed connection at the request timeout (its 408 then finds nobody): 1 s here.
    const { server, port } = await startGateway(errors, 1_000);
    try {
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.on('connect', resolve));
      socket.write('POST /quickjob HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a"');
      await new Promise((resolve) => setTimeout(resolve, 200));
      socket.end();
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(errors).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
