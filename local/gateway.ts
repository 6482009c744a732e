/**
 * The local stand-in for API Gateway (REST, Lambda proxy). Built from the same route table as the CDK API:
 * it matches routes, enforces the 6 MB request cap (413), throttles (429), runs the same REQUEST authorizer
 * Lambda, renders the same gateway responses, and invokes the same handlers with API-Gateway-shaped events.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import type { Services } from '../functions/composition';
import { toHttpError } from '../functions/http/errors';
import { type GatewayResponseType, gatewayResponse } from '../functions/http/gateway-responses';
import { EXPOSED_HEADERS, preflightHeaders } from '../functions/http/responses';
import { functionTimeoutSeconds } from '../functions/profiles';
import { type RouteDef, handlerRef, matchPath, matchRoute, preflightRoutePath } from '../functions/routes';
import { lambdaContext, loadHandler } from './handlers';

export const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
/** Past this the connection is dropped instead of drained. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

type LambdaHandler = (event: any, context: Context) => Promise<any>;

export interface LocalRoute {
  method: string;
  /** e.g. /_local/accounts/{account_id}/token */
  path: string;
  handle(params: Record<string, string>, body: unknown): Promise<{ status: number; body: unknown }>;
}

export interface GatewayOptions {
  services: Services;
  localRoutes: LocalRoute[];
  /** Platform throttle (token bucket), like API Gateway's stage throttling. */
  throttle: { ratePerSecond: number; burst: number };
  /** Time allowed to send a whole request (default 30 s); a client trickling a body must not hold its buffers for long. */
  requestTimeoutMs?: number;
}

class TokenBucket {
  private tokens: number;
  private last = Date.now();
  constructor(private readonly rate: number, private readonly burst: number) {
    this.tokens = burst;
  }
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

function send(res: http.ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer) {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': EXPOSED_HEADERS.join(', '),
};

function sendJson(res: http.ServerResponse, status: number, body: unknown, requestId: string, headers: Record<string, string> = {}) {
  send(res, status, { 'Content-Type': 'application/json', 'X-Request-Id': requestId, ...CORS, ...headers }, JSON.stringify(body));
}

/** The status a gateway response answers with; DEFAULT_4XX/5XX have none of their own in API Gateway (they keep the failure's). */
export function gatewayResponseStatus(type: GatewayResponseType): number {
  return gatewayResponse(type).status ?? (type === 'DEFAULT_5XX' ? 500 : 400);
}

/** Renders a gateway response, filling `$authorizer.<key>` from a Deny context. */
function sendGatewayResponse(res: http.ServerResponse, type: GatewayResponseType, requestId: string, authorizerContext: Record<string, unknown> = {}) {
  const def = gatewayResponse(type);
  const fill = (text: string) => text.replace(/^\$authorizer\.(\w+)$/, (_, key) => String(authorizerContext[key] ?? ''));
  const details = Object.fromEntries(Object.entries(def.details ?? {}).map(([key, text]) => [key, fill(text)]));
  sendJson(res, gatewayResponseStatus(type), { error: { code: fill(def.code), message: fill(def.message), details } }, requestId, def.headers);
}

/**
 * Requests Node cannot parse (headers over 16 KB, control characters in a header, a broken request line) or that
 * arrive too slowly never reach a handler; Node's own answer would be a bare status. They get the envelope too.
 */
function answerUnreadableRequest(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex) {
  if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const pending = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
  // The request being answered is still arriving (a broken chunk in its own body): that request is the unreadable
  // one, and it is answered now, like a timeout, instead of waiting for the request timeout with no answer.
  const ownBody = pending?.req?.complete === false;
  const [status, reason, message] = timedOut
    ? [408, 'Request Timeout', 'The request did not arrive in time. Send the whole request at once, then retry.']
    : err.code === 'HPE_HEADER_OVERFLOW'
      ? [400, 'Bad Request', 'The request headers are larger than 16 KB. Send large values in the body.']
      : ownBody
        ? [400, 'Bad Request', 'The request body is not valid HTTP (a malformed chunk of Transfer-Encoding: chunked).']
        : [400, 'Bad Request', 'The request is not valid HTTP (a malformed request line or header).'];
  // A slow client is no invalid parameter: its 408 has a code of its own (API Gateway cuts slow clients off itself).
  const error = timedOut ? { code: 'REQUEST_TIMEOUT', message, details: {} } : { code: 'INVALID_PARAMETER', message, details: { parameter: ownBody ? 'body' : 'headers' } };
  // A method Node does not know (`BREW`, lower-case `get`) is a well-formed request no route takes: the unknown-route
  // 404, as for a known method without a route, not "not valid HTTP".
  const noRoute = err.code === 'HPE_INVALID_METHOD' && !ownBody;
  // An earlier request on this connection (pipelined) is still being answered: it gets its whole response and the
  // connection closes after it; the unreadable request behind it gets none. A timeout is about the request being
  // answered itself only while that one is still arriving (ownBody): a request that arrived whole and is being answered
  // cannot time out, so a timeout then belongs to a pipelined request behind it (its headers stalled), and writing the
  // 408 now would end the socket in place of the earlier answer (a quick job charged, its PDF lost, the 408 read as its reply).
  if (!ownBody && pending && !pending.writableFinished) {
    pending.shouldKeepAlive = false;
    return;
  }
  if (noRoute) {
    const def = gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
    return endWithEnvelope(socket, gatewayResponseStatus('MISSING_AUTHENTICATION_TOKEN'), 'Not Found', { code: def.code, message: def.message, details: {} });
  }
  endWithEnvelope(socket, status, reason, error);
}

/** Writes a whole JSON error response straight to a socket no ServerResponse serves, and closes it. */
function endWithEnvelope(socket: import('node:stream').Duplex, status: number, reason: string, error: { code: string; message: string; details: object }) {
  const body = JSON.stringify({ error });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

function readBody(req: http.IncomingMessage): Promise<{ body: Buffer } | { tooLarge: true; drained: boolean }> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > MAX_DRAIN_BYTES) return resolve({ tooLarge: true, drained: false });
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) over = true;
      if (size > MAX_DRAIN_BYTES) {
        req.pause();
        resolve({ tooLarge: true, drained: false });
        return;
      }
      if (!over) chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? { tooLarge: true, drained: true } : { body: Buffer.concat(chunks) }));
    req.on('error', reject);
  });
}

/**
 * The request target as a URL whose path is the one the client sent. Read against a base with WHATWG's rules for
 * links, the target `//x/me` named a host `x` and left the path `/me`, and `\` counted as `/`: `GET //x/me` and
 * `GET /x\..\me` were served as `GET /me`. A request target names no host and `\` separates nothing in it.
 */
function requestUrl(target: string): URL {
  const escaped = target.replace(/\\/g, '%5C');
  return new URL(escaped.startsWith('/') ? `http://localhost${escaped}` : escaped, 'http://localhost');
}

/** A map for names the client chose: without a prototype, "constructor" or "toString" are names like any other. */
const dictionary = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

function headerMaps(req: http.IncomingMessage) {
  const headers = dictionary<string>();
  const multi = dictionary<string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    const value = req.rawHeaders[i + 1];
    headers[name] = value;
    (multi[name] ??= []).push(value);
  }
  return { headers, multi };
}

function queryMaps(url: URL) {
  if ([...url.searchParams.keys()].length === 0) return { single: null, multi: null };
  const single = dictionary<string>();
  const multi = dictionary<string[]>();
  for (const [k, v] of url.searchParams) {
    single[k] = v;
    (multi[k] ??= []).push(v);
  }
  return { single, multi };
}

export function createGateway(opts: GatewayOptions): http.Server {
  const throttle = new TokenBucket(opts.throttle.ratePerSecond, opts.throttle.burst);
  const authorizer = loadHandler<LambdaHandler>('http/authorizer#handler');
  const log = opts.services.log;

  async function handleApiRoute(req: http.IncomingMessage, res: http.ServerResponse, url: URL, route: RouteDef, params: Record<string, string>, body: Buffer, requestId: string) {
    const { headers, multi } = headerMaps(req);
    const query = queryMaps(url);
    const requestContext: any = {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      httpMethod: route.method,
      identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: req.headers['user-agent'] ?? null },
      path: `/local${url.pathname}`,
      protocol: `HTTP/${req.httpVersion}`,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.id,
      resourcePath: route.path,
      stage: 'local',
    };
    const methodArn = `arn:aws:execute-api:local:000000000000:local/local/${route.method}${route.path}`;

    if (route.access !== 'none') {
      const authEvent: APIGatewayRequestAuthorizerEvent = {
        type: 'REQUEST',
        methodArn,
        resource: route.path,
        path: url.pathname,
        httpMethod: route.method,
        headers,
        multiValueHeaders: multi,
        pathParameters: params,
        queryStringParameters: query.single,
        multiValueQueryStringParameters: query.multi,
        stageVariables: null,
        requestContext,
      };
      let verdict: APIGatewayAuthorizerResult;
      try {
        verdict = await authorizer(authEvent, lambdaContext('authorizer', functionTimeoutSeconds('light') * 1000, requestId));
      } catch (err) {
        log.error(`authorizer failure (request ${requestId})`, err);
        return sendGatewayResponse(res, 'AUTHORIZER_FAILURE', requestId);
      }
      const allowed = verdict.policyDocument.Statement.some((s: any) => s.Effect === 'Allow');
      if (!allowed) return sendGatewayResponse(res, 'ACCESS_DENIED', requestId, verdict.context ?? {});
      requestContext.authorizer = { principalId: verdict.principalId, ...(verdict.context ?? {}) };
    }

    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path: url.pathname,
      httpMethod: route.method,
      headers,
      multiValueHeaders: multi,
      queryStringParameters: query.single,
      multiValueQueryStringParameters: query.multi,
      pathParameters: Object.keys(params).length ? params : null,
      stageVariables: null,
      requestContext,
      // binaryMediaTypes is */* in the CDK API, so every body reaches Lambda base64-encoded.
      body: body.length ? body.toString('base64') : null,
      isBase64Encoded: body.length > 0,
    };
    const ref = handlerRef(route);
    const result: APIGatewayProxyResult = await loadHandler<LambdaHandler>(ref)(event, lambdaContext(route.id, functionTimeoutSeconds(route.profile, route.timeoutSeconds) * 1000, requestId));
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(result.headers ?? {})) out[k] = String(v);
    for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) out[k] = v.map(String);
    const payload = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
    if (!res.headersSent) {
      res.writeHead(result.statusCode, { ...out, 'Content-Length': String(payload.length) });
      res.end(payload);
    }
  }

  function matchLocal(method: string, pathname: string) {
    for (const route of opts.localRoutes) {
      if (route.method !== method) continue;
      const hit = matchPath(route.path, pathname);
      if (hit) return { route, params: hit.params };
    }
    return null;
  }

  const requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  // Node checks request deadlines on this interval (30 s by default, which would double the limit).
  // A request without Host is answered like any other (Node's own answer would be a bare 400): the route is in the path.
  const server = http.createServer({ connectionsCheckingInterval: Math.max(250, Math.floor(requestTimeoutMs / 10)), requireHostHeader: false }, async (req, res) => {
    const requestId = randomUUID();
    try {
      const url = requestUrl(req.url ?? '/');
      const method = (req.method ?? 'GET').toUpperCase();
      if (method === 'OPTIONS') {
        // As API Gateway: a preflight only where a route lives, naming that path's methods.
        const routePath = preflightRoutePath(url.pathname);
        if (!routePath) return sendGatewayResponse(res, 'MISSING_AUTHENTICATION_TOKEN', requestId);
        return send(res, 204, preflightHeaders(routePath), '');
      }
      if (!throttle.take()) {
        req.resume();
        return sendGatewayResponse(res, 'THROTTLED', requestId);
      }
      // A connection closed while its body was arriving (the client went away, or its request was already answered
      // as unreadable or late) leaves nobody to answer, and nothing failed on our side.
      const read = await readBody(req).catch((err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? null : Promise.reject(err)));
      if (!read) return;
      if ('tooLarge' in read) {
        sendGatewayResponse(res, 'REQUEST_TOO_LARGE', requestId);
        if (!read.drained) res.on('finish', () => req.destroy());
        return;
      }
      const local = matchLocal(method, url.pathname);
      if (local) {
        let parsed: unknown;
        const text = read.body.toString('utf8');
        try {
          parsed = text.trim() ? JSON.parse(text) : undefined;
        } catch {
          return sendJson(res, 400, { error: { code: 'INVALID_PARAMETER', message: 'The request body is not valid JSON.', details: { parameter: 'body' } } }, requestId);
        }
        try {
          const result = await local.route.handle(local.params, parsed);
          // API keys and ID tokens: never kept by a cache, as the service's own answers.
          return sendJson(res, result.status, result.body, requestId, { 'Cache-Control': 'no-store' });
        } catch (err) {
          const mapped = toHttpError(err, requestId);
          if (mapped.unexpected) log.error(`local route ${local.route.path} failed (request ${requestId})`, err);
          return sendJson(res, mapped.status, mapped.body, requestId);
        }
      }
      const match = matchRoute(method, url.pathname);
      if (!match) return sendGatewayResponse(res, 'MISSING_AUTHENTICATION_TOKEN', requestId);
      await handleApiRoute(req, res, url, match.route, match.params, read.body, requestId);
    } catch (err) {
      log.error(`gateway failure (request ${requestId})`, err);
      sendGatewayResponse(res, 'DEFAULT_5XX', requestId);
    }
  });
  // Node would wait 300 s for a slow body (every connection holding up to 6 MB meanwhile); it answers 408 and closes.
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = Math.min(requestTimeoutMs, 15_000);
  server.on('clientError', answerUnreadableRequest);
  // An expectation other than 100-continue (Node would answer a bare 417): the request is simply answered.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  // CONNECT asks for a tunnel, which no route offers: the envelope's 404 instead of a silently closed socket.
  server.on('connect', (_req: http.IncomingMessage, socket: import('node:stream').Duplex) => {
    const { code, message } = gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
    endWithEnvelope(socket, gatewayResponseStatus('MISSING_AUTHENTICATION_TOKEN'), 'Not Found', { code, message, details: {} });
  });
  return server;
}
