import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { EgressProxy } from '../../../../functions/adapters/net/egress-proxy';
import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../../functions/core/net/guard';

/** A target that counts the connections it gets. */
async function countingServer() {
  const server = net.createServer((s) => s.destroy());
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** An HTTP server on 127.0.0.2 — where the guard's resolver (not the system's, which says 127.0.0.1) puts `localhost`. */
async function approvedServer() {
  const server = http.createServer((req, res) => res.end(`approved ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  const close = () => (server.closeAllConnections(), new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as AddressInfo).port, close };
}

/** A guard that resolves `localhost` to 127.0.0.2 and allows only `localhost:<port>`. */
const pinningGuard = (port: number) => new NetworkGuard({ resolve: async () => [{ address: '127.0.0.2', family: 4 as const }] }, new PrivateTargetAllowlist(`localhost:${port}`));

/** A CONNECT through the proxy, then a GET through the tunnel: the tunnel's status, and the response's body when it opened. */
async function throughTunnel(proxyUrl: string, target: string): Promise<{ status: number; body?: string }> {
  const { port } = new URL(proxyUrl);
  const [res, socket] = await new Promise<[http.IncomingMessage, net.Socket]>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: Number(port), method: 'CONNECT', path: target });
    req.on('connect', (r, s) => resolve([r, s]));
    req.on('error', reject);
    req.end();
  });
  if (res.statusCode !== 200) return (socket.destroy(), { status: res.statusCode ?? 0 });
  const body = await new Promise<string>((resolve, reject) => {
    http.get({ createConnection: () => socket, path: '/tunnelled', headers: { Connection: 'close' } }, (r) => {
      let text = '';
      r.on('data', (c: Buffer) => (text += c));
      r.on('end', () => resolve(text));
    }).on('error', reject);
  });
  return { status: 200, body };
}

describe('EgressProxy', () => {
  it('tunnels CONNECT to the address the guard approved, never to what the system resolver answers for the name', async () => {
    const target = await approvedServer();
    const proxy = await EgressProxy.open(pinningGuard(target.port));
    try {
      expect(await throughTunnel(proxy.url, `localhost:${target.port}`)).toEqual({ status: 200, body: 'approved /tunnelled' });
      expect(proxy.blocked).toBe(0);
    } finally {
      await proxy.close();
      await target.close();
    }
  });

  it('checks the port a CONNECT names: the same host on a port the guard does not allow is refused and counted', async () => {
    const target = await approvedServer();
    const other = await approvedServer();
    const proxy = await EgressProxy.open(pinningGuard(target.port));
    try {
      expect(await throughTunnel(proxy.url, `localhost:${other.port}`)).toEqual({ status: 403 });
      expect(proxy.refused).toEqual([`localhost:${other.port}`]);
    } finally {
      await proxy.close();
      await target.close();
      await other.close();
    }
  });

  it('sends a plain-http request to the address the guard approved, and checks its port', async () => {
    const target = await approvedServer();
    const other = await approvedServer();
    const proxy = await EgressProxy.open(pinningGuard(target.port));
    const { port } = new URL(proxy.url);
    const get = (url: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: Number(port), path: url }, (r) => {
          let body = '';
          r.on('data', (c: Buffer) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        }).on('error', reject);
      });
    try {
      expect(await get(`http://localhost:${target.port}/page`)).toEqual({ status: 200, body: 'approved /page' });
      expect(await get(`http://localhost:${other.port}/page`)).toEqual({ status: 403, body: '' });
      expect(proxy.refused).toEqual([`localhost:${other.port}`]);
    } finally {
      await proxy.close();
      await target.close();
      await other.close();
    }
  });

  it('opens no upstream connection for a request still being checked when the proxy closes', async () => {
    const target = await countingServer();
    let answer: () => void = () => undefined;
    const checking = new Promise<void>((resolve) => (answer = resolve));
    let asked: () => void = () => undefined;
    const lookupStarted = new Promise<void>((resolve) => (asked = resolve));
    // The name's lookup waits until the test lets it answer, after the proxy has closed.
    const resolver = { resolve: async () => (asked(), await checking, [{ address: '127.0.0.1', family: 4 as const }]) };
    const proxy = await EgressProxy.open(new NetworkGuard(resolver, new PrivateTargetAllowlist(`slow.test:${target.port}`)));
    const { port } = new URL(proxy.url);
    const tunnel = http.request({ host: '127.0.0.1', port: Number(port), method: 'CONNECT', path: `slow.test:${target.port}` });
    tunnel.on('error', () => undefined);
    tunnel.end();
    await lookupStarted;
    await proxy.close();
    answer();
    await new Promise((r) => setTimeout(r, 200));
    expect(target.connections()).toBe(0);
    await target.close();
  });
});
