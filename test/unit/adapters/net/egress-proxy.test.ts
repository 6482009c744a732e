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

describe('EgressProxy', () => {
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
