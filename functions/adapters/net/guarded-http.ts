import http from 'node:http';
import https from 'node:https';
import { Transform, type TransformCallback } from 'node:stream';
import { rootCertificates } from 'node:tls';
import zlib from 'node:zlib';
import type { LookupFunction } from 'node:net';
import { FetchError, type HttpClient, type HttpRequestSpec, type HttpResult } from '../../core/net/fetch';
import { BlockedTargetError, type ApprovedTarget, type NetworkGuard, ResolveError } from '../../core/net/guard';

/** How much of a discarded body is read before the socket is dropped: enough for a short answer to end cleanly. */
export const DISCARD_READ_BYTES = 16 * 1024;
/** How long a discarded body may keep the socket open before it is dropped. */
const DISCARD_WAIT_MS = 1_000;

function headerRecord(raw: http.IncomingHttpHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return headers;
}

/** Reads a little of an unwanted body, then closes the connection (never left open for a slow or endless body). */
function discard(res: http.IncomingMessage, req: http.ClientRequest): void {
  let read = 0;
  const drop = () => {
    clearTimeout(timer);
    req.destroy();
  };
  const timer = setTimeout(drop, DISCARD_WAIT_MS);
  timer.unref();
  res.on('data', (c: Buffer) => {
    read += c.length;
    if (read > DISCARD_READ_BYTES) drop();
  });
  res.on('end', drop);
  res.on('error', drop);
}

/** A lookup that answers only with the addresses the guard approved: the connection cannot go anywhere else. */
export function pinnedLookup(target: ApprovedTarget): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, target.addresses.map((a) => ({ address: a.address, family: a.family })));
    else callback(null, target.addresses[0].address, target.addresses[0].family);
  }) as unknown as LookupFunction;
}

function connectFailure(err: NodeJS.ErrnoException, url: string): FetchError {
  const code = err.code ?? '';
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|HOSTNAME|ERR_TLS/.test(code) || /certificate|SSL|TLS/.test(err.message)) {
    return new FetchError('tls', url, `TLS failed (${code || err.message})`);
  }
  return new FetchError('connect', url, `connection failed (${code || err.message})`);
}

/**
 * `Content-Encoding: deflate` as browsers read it: zlib-wrapped, as HTTP means it, or the raw deflate stream some
 * servers send (old IIS, hand-rolled PHP). The first two bytes tell them apart (a zlib header's check bits).
 */
class DeflateEitherWay extends Transform {
  private inner: zlib.Inflate | zlib.InflateRaw | null = null;
  private head = Buffer.alloc(0);

  /** The inflater the first two bytes call for. */
  private start(): zlib.Inflate | zlib.InflateRaw {
    const [cmf, flg] = this.head;
    const wrapped = (cmf & 0x0f) === 8 && ((cmf << 8) | flg) % 31 === 0;
    const inner = wrapped ? zlib.createInflate() : zlib.createInflateRaw();
    inner.on('data', (c: Buffer) => this.push(c));
    inner.on('error', (err) => this.destroy(err));
    this.inner = inner;
    return inner;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.inner) return void this.inner.write(chunk, () => done());
    this.head = Buffer.concat([this.head, chunk]);
    if (this.head.length < 2) return done();
    this.start().write(this.head, () => done());
  }

  override _flush(done: TransformCallback): void {
    let inner = this.inner;
    // A body under two bytes: the inflater still says whether it is a whole stream.
    if (!inner) (inner = this.start()).write(this.head);
    inner.once('end', () => done());
    inner.end();
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    this.inner?.destroy();
    done(err);
  }
}

function decoder(encoding: string | undefined): zlib.Gunzip | DeflateEitherWay | zlib.BrotliDecompress | null {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return new DeflateEitherWay();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

/** `work`, or `timedOut()` once `deadline` (epoch ms) passes first. The work goes on unwatched; its outcome is dropped. */
async function beforeDeadline<T>(work: Promise<T>, deadline: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(timedOut()), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

const REDIRECTS = [301, 302, 303, 307, 308];

/** Whether a response is a redirect this request follows (the redirect limit is checked when following it). */
function followed(spec: HttpRequestSpec, status: number, location: string | undefined): boolean {
  return spec.maxRedirects > 0 && REDIRECTS.includes(status) && !!location;
}

/**
 * Outbound HTTP(S) through the network guard: each hop's host is approved and the socket connects only to
 * the approved addresses; redirects are re-checked hop by hop; the body is capped on decoded bytes; one
 * deadline covers the whole exchange (up to the status line when the body is discarded), and with `idleTimeoutMs`
 * a remote silent that long fails at once. NODE_EXTRA_CA_CERTS
 * (passed in as `extraCa`) is trusted in addition to the public roots.
 */
export class GuardedHttpClient implements HttpClient {
  private readonly ca: string[] | undefined;

  constructor(
    private readonly guard: NetworkGuard,
    private readonly options: { extraCa?: string; userAgent: string },
  ) {
    this.ca = options.extraCa ? [...rootCertificates, options.extraCa] : undefined;
  }

  async request(spec: HttpRequestSpec): Promise<HttpResult> {
    const deadline = Date.now() + spec.timeoutMs;
    const redirects: string[] = [];
    let url = spec.url;
    let method = spec.method;
    let body = spec.body;
    for (;;) {
      const result = await this.hop(url, method, body, spec, deadline);
      const location = result.headers.location;
      if (!followed(spec, result.status, location)) return { ...result, redirects };
      if (redirects.length >= spec.maxRedirects) throw new FetchError('too_many_redirects', url, `more than ${spec.maxRedirects} redirects`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new FetchError('bad_response', url, `redirect to an invalid URL: ${location}`);
      }
      redirects.push(next.href);
      url = next.href;
      if (result.status === 303 || ((result.status === 301 || result.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  }

  private async hop(rawUrl: string, method: string, body: Uint8Array | undefined, spec: HttpRequestSpec, deadline: number): Promise<Omit<HttpResult, 'redirects'>> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new FetchError('invalid_url', rawUrl, 'not a valid URL');
    }
    if (!spec.schemes.includes(url.protocol as 'https:')) throw new FetchError('scheme', rawUrl, `scheme ${url.protocol} is not allowed`);
    if (url.username || url.password) throw new FetchError('credentials', rawUrl, 'URLs with user names or passwords are not accepted');
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;

    let target: ApprovedTarget;
    try {
      // The lookup counts against the deadline too: a resolver that never answers must not hold the exchange.
      // Silence from the resolver counts as the remote's silence; when the whole exchange's deadline comes first, the
      // exchange was too slow (redirects used up the time) rather than silent.
      const leftMs = Math.max(0, deadline - Date.now());
      const idle = spec.idleTimeoutMs;
      const byIdle = idle !== undefined && idle < leftMs;
      const waitMs = byIdle ? idle : leftMs;
      const kind = byIdle || idle === undefined ? 'timeout' : 'too_slow';
      target = await beforeDeadline(this.guard.approve(url.hostname, port), Date.now() + waitMs, () => new FetchError(kind, rawUrl, `no DNS answer within ${waitMs} ms`));
    } catch (err) {
      if (err instanceof BlockedTargetError) throw new FetchError('blocked', rawUrl, err.message);
      if (err instanceof ResolveError) throw new FetchError('dns', rawUrl, err.message);
      throw err;
    }

    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new FetchError(spec.idleTimeoutMs === undefined ? 'timeout' : 'too_slow', rawUrl, 'no answer in time');
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      let settled = false;
      let decode: ReturnType<typeof decoder> = null;
      const fail = (err: FetchError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        // The decoder too: it would go on inflating what it already holds (3 KB of brotli is 2 GB of output, seconds of
        // a thread-pool thread) after the request was refused.
        decode?.destroy();
        reject(err);
      };
      // One timer: the whole exchange's deadline, or, with idleTimeoutMs, the remote's silence, re-armed by each
      // chunk received (the deadline still caps a remote that keeps sending slowly).
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        const left = Math.max(0, deadline - Date.now());
        const idle = spec.idleTimeoutMs;
        if (idle === undefined) timer = setTimeout(() => fail(new FetchError('timeout', rawUrl, `no complete answer within ${spec.timeoutMs} ms`)), left);
        else if (idle < left) timer = setTimeout(() => fail(new FetchError('timeout', rawUrl, `the remote sent nothing for ${idle} ms`)), idle);
        else timer = setTimeout(() => fail(new FetchError('too_slow', rawUrl, `the answer did not complete within ${spec.timeoutMs} ms`)), left);
      };
      arm();
      const req = transport.request(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[|\]$/g, ''),
          servername: /^[\d.]+$|:/.test(target.host) ? undefined : target.host,
          port,
          method,
          path: `${url.pathname}${url.search}`,
          lookup: pinnedLookup(target),
          agent: false,
          ca: this.ca,
          headers: {
            'User-Agent': this.options.userAgent,
            'Accept-Encoding': 'gzip, deflate, br',
            ...spec.headers,
            ...(body ? { 'Content-Length': String(body.byteLength) } : {}),
          },
        },
        (res) => {
          // A redirect that will be followed is not the answer: its body (a browser never reads it) is not downloaded,
          // so neither its size nor a slow or endless one can fail the fetch.
          if (spec.discardBody || followed(spec, res.statusCode ?? 0, res.headers.location)) {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, headers: headerRecord(res.headers), body: Buffer.alloc(0), finalUrl: rawUrl });
            discard(res, req);
            return;
          }
          if (spec.idleTimeoutMs !== undefined) arm();
          const declared = Number(res.headers['content-length']);
          const encoding = res.headers['content-encoding'];
          if (!encoding && Number.isFinite(declared) && declared > spec.maxBytes) {
            fail(new FetchError('too_large', rawUrl, `the response is ${declared} bytes; the limit is ${spec.maxBytes}`));
            return;
          }
          decode = decoder(encoding);
          const stream = decode ? res.pipe(decode) : res;
          const chunks: Buffer[] = [];
          let raw = 0;
          let size = 0;
          res.on('data', (c: Buffer) => {
            if (spec.idleTimeoutMs !== undefined && !settled) arm();
            raw += c.length;
            if (raw > spec.maxBytes) fail(new FetchError('too_large', rawUrl, `the response exceeds ${spec.maxBytes} bytes`));
          });
          stream.on('data', (c: Buffer) => {
            size += c.length;
            if (size > spec.maxBytes) {
              fail(new FetchError('too_large', rawUrl, `the decoded response exceeds ${spec.maxBytes} bytes`));
              return;
            }
            chunks.push(c);
          });
          stream.on('error', (err) => fail(new FetchError('bad_response', rawUrl, `could not decode the response (${err.message})`)));
          res.on('error', (err) => fail(connectFailure(err as NodeJS.ErrnoException, rawUrl)));
          stream.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, headers: headerRecord(res.headers), body: Buffer.concat(chunks), finalUrl: rawUrl });
          });
        },
      );
      req.on('error', (err) => fail(connectFailure(err as NodeJS.ErrnoException, rawUrl)));
      // A 101 with an Upgrade header comes only as this event, never as a response (Node then drops the socket with no
      // error): unheard, the exchange waited out its whole deadline and read as a silent remote. It is the answer.
      req.on('upgrade', (res: http.IncomingMessage, socket) => {
        socket.destroy();
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 101, headers: headerRecord(res.headers), body: Buffer.alloc(0), finalUrl: rawUrl });
      });
      req.end(body);
    });
  }
}
