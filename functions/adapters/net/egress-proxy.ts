import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { BlockedTargetError, type NetworkGuard } from '../../core/net/guard';
import { pinnedLookup } from './guarded-http';

/**
 * The loopback proxy every rendered page's traffic goes through (its browser context is configured with
 * this proxy and `<-loopback>`, so not even loopback bypasses it). Each connection — a CONNECT tunnel
 * for https/wss, or an absolute-form request for plain http — is approved by the network guard and
 * connected to the approved address only; refusals are counted for the document's `blocked_requests`.
 * One proxy per document, so counts are per document.
 */
export class EgressProxy {
  /** Refused targets (host:port), in order; their count is the document's blocked network requests. */
  readonly refused: string[] = [];
  /** Set by close(): requests still being checked then open no upstream connection. */
  private closed = false;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  /** Without a guard the proxy refuses every connection. */
  static async open(guard?: NetworkGuard): Promise<EgressProxy> {
    const server = http.createServer();
    const listening = new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await listening;
    const proxy = new EgressProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    proxy.attach(guard);
    return proxy;
  }

  private refuse(socket: import('node:stream').Duplex, status: number, reason: string) {
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  }

  private attach(guard: NetworkGuard | undefined) {
    const approve = (host: string, port: number) => {
      if (!guard) throw new BlockedTargetError(host, 'no network access is configured for pages');
      return guard.approve(host, port);
    };
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });

    this.server.on('connect', async (req, client, head) => {
      client.on('error', () => undefined);
      const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '');
      if (!m) return this.refuse(client, 400, 'Bad Request');
      try {
        const target = await approve(m[1], Number(m[2]));
        // Closed while the name was being checked (the document ended): no connection is opened for nobody.
        if (this.closed || client.destroyed) return client.destroy();
        // The host name goes to the pinned lookup, which answers only with the approved addresses (all are tried).
        const upstream = net.connect({ host: target.host, port: target.port, lookup: pinnedLookup(target), autoSelectFamily: true });
        this.sockets.add(upstream);
        upstream.on('close', () => this.sockets.delete(upstream));
        upstream.once('connect', () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on('error', () => (client.writable ? this.refuse(client, 502, 'Bad Gateway') : client.destroy()));
        client.on('close', () => upstream.destroy());
      } catch (err) {
        if (err instanceof BlockedTargetError) {
          this.refused.push(`${m[1]}:${m[2]}`);
          return this.refuse(client, 403, 'Forbidden');
        }
        this.refuse(client, 502, 'Bad Gateway');
      }
    });

    this.server.on('request', async (req, res) => {
      let url: URL;
      try {
        url = new URL(req.url ?? '');
        if (url.protocol !== 'http:') throw new Error('only absolute http URLs');
      } catch {
        res.writeHead(400).end();
        return;
      }
      try {
        const port = url.port ? Number(url.port) : 80;
        const target = await approve(url.hostname, port);
        if (this.closed || res.destroyed) return res.destroy();
        const headers = { ...req.headers };
        delete headers['proxy-connection'];
        delete headers['proxy-authorization'];
        const upstream = http.request(
          { hostname: url.hostname.replace(/^\[|\]$/g, ''), port, method: req.method, path: `${url.pathname}${url.search}`, headers, lookup: pinnedLookup(target), agent: false },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        // Tracked like tunnels, so closing the proxy when the document ends also ends a response still streaming.
        upstream.on('socket', (socket) => {
          this.sockets.add(socket);
          socket.on('close', () => this.sockets.delete(socket));
        });
        res.on('close', () => upstream.destroy());
        upstream.on('error', () => {
          if (!res.headersSent) res.writeHead(502);
          res.end();
        });
        req.pipe(upstream);
      } catch (err) {
        if (err instanceof BlockedTargetError) this.refused.push(url.host);
        res.writeHead(err instanceof BlockedTargetError ? 403 : 502, { 'Content-Length': '0' }).end();
      }
    });
  }

  get blocked(): number {
    return this.refused.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
