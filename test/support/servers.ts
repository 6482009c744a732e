import dgram from 'node:dgram';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { tempDir } from './temp';

export interface TestServer {
  port: number;
  url: string;
  /** Paths requested, in order. */
  hits: string[];
  close(): Promise<void>;
}

/**
 * A port nothing listens on, for "connection refused". Taken below Linux's ephemeral range (32768 and up), where every
 * test server listens (port 0): a port freed from that range was handed to another test's TLS server meanwhile, and
 * the refused connection became a TLS failure.
 */
export async function closedPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      // Every address (IPv4 and IPv6): `localhost` may resolve to either.
      probe.listen(port, () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('No free port found below the ephemeral range.');
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function track(server: http.Server | https.Server, scheme: string, handler: Handler): Promise<TestServer> {
  const hits: string[] = [];
  server.on('request', (req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  server.on('upgrade', (req, socket) => {
    hits.push(`upgrade ${req.url}`);
    socket.destroy();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        port,
        url: `${scheme}://127.0.0.1:${port}`,
        hits,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections?.();
            server.close(() => r());
          }),
      });
    }),
  );
}

/** A plain HTTP server on loopback. */
export function httpServer(handler: Handler): Promise<TestServer> {
  return track(http.createServer(), 'http', handler);
}

export interface TestCa {
  caFile: string;
  key: string;
  cert: string;
}

/**
 * A throwaway CA and a server certificate for localhost/127.0.0.1, made with the openssl CLI. Its directory goes after
 * the test file (see tempDir): a service reads `caFile` when it starts and when it first fetches, not when it stops.
 */
export function makeTestCa(): TestCa {
  const dir = tempDir('pdfsvc-ca-');
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=PDF service test CA');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  require('node:fs').writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
  return { caFile: path.join(dir, 'ca.pem'), key: readFileSync(path.join(dir, 'server.key'), 'utf8'), cert: readFileSync(path.join(dir, 'server.pem'), 'utf8') };
}

/** An HTTPS server on loopback with a certificate from `ca`. */
export function httpsServer(ca: TestCa, handler: Handler): Promise<TestServer> {
  return track(https.createServer({ key: ca.key, cert: ca.cert }), 'https', handler);
}

/** A UDP socket that records every datagram (to prove nothing was sent). */
export function udpListener(): Promise<{ port: number; packets: number; close(): void }> {
  const socket = dgram.createSocket('udp4');
  const state = { port: 0, packets: 0, close: () => socket.close() };
  socket.on('message', () => state.packets++);
  return new Promise((resolve) => socket.bind(0, '127.0.0.1', () => resolve(Object.assign(state, { port: socket.address().port }))));
}
