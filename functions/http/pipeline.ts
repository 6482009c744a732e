import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Account } from '../core/accounts/account';
import type { Principal } from '../core/auth/authenticate';
import { type Clock, systemClock } from '../core/clock';
import { invalidParameter } from '../core/errors';
import { parseJsonText } from '../core/validation';
import { type Services, readyServices } from '../composition';
import { createLogger } from '../logger';
import { type RouteDef, routeById } from '../routes';
import { internalErrorBody, toHttpError } from './errors';
import { type HttpResponse, json, toProxyResult } from './responses';

/** What a handler sees: the parsed request, the caller, and the services. */
export interface HttpRequest {
  readonly event: APIGatewayProxyEvent;
  readonly route: RouteDef;
  readonly requestId: string;
  readonly params: Record<string, string>;
  readonly query: Record<string, string>;
  /** Header names in lower case. */
  readonly headers: Record<string, string>;
  /** The body's bytes; reading a compressed one is 400 INVALID_PARAMETER (see `uncompressedBody`). */
  readonly body: Buffer;
  readonly services: Services;
  principal: Principal | null;
  account: Account | null;
  /** The body as JSON; 400 INVALID_PARAMETER when it is not valid JSON. Empty body → undefined. */
  json(): unknown;
  /**
   * How long ago the API received the request (API Gateway's requestTimeEpoch): the authorizer, a cold start and the
   * route's own reads come out of a synchronous time limit too, since the gateway's clock is the one that runs out.
   */
  sinceReceivedMs(): number;
}

/** middy-style middleware: `before` may answer early, `after` may replace the response, `onError` may answer an error. */
export interface Middleware {
  before?(req: HttpRequest): Promise<HttpResponse | void>;
  after?(req: HttpRequest, res: HttpResponse): Promise<HttpResponse | void>;
  onError?(req: HttpRequest, err: unknown): Promise<HttpResponse | void>;
}

export type RouteHandler = (req: HttpRequest) => Promise<HttpResponse>;

function lowerCaseHeaders(event: APIGatewayProxyEvent): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) out[k.toLowerCase()] = v;
  return out;
}

function decodeBody(event: APIGatewayProxyEvent): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

/**
 * The body, refused when it came compressed: neither API Gateway (without a compression setting) nor the local gateway
 * inflates a request, so a gzip body reached the handlers as its compressed bytes and was refused for what they look
 * like ("not valid UTF-8", "not a PDF"), and a plain body labelled gzip was read as plain.
 */
function uncompressedBody(body: Buffer, headers: Record<string, string>): Buffer {
  const coding = (headers['content-encoding'] ?? '').trim().toLowerCase();
  if (body.length === 0 || coding === '' || coding === 'identity') return body;
  throw invalidParameter('Content-Encoding', `Compressed request bodies are not accepted (Content-Encoding: ${headers['content-encoding'].slice(0, 40)}). Send the body uncompressed, without a Content-Encoding header.`);
}

/** Strict UTF-8 (a byte-order mark is dropped). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** `clock` reads the time `sinceReceivedMs` counts to (tests set it). */
export function buildRequest(event: APIGatewayProxyEvent, route: RouteDef, svc: Services, clock: Clock = systemClock): HttpRequest {
  const raw = decodeBody(event);
  const headers = lowerCaseHeaders(event);
  let parsed: { value: unknown } | null = null;
  const epoch = event.requestContext?.requestTimeEpoch;
  const receivedAt = typeof epoch === 'number' && Number.isFinite(epoch) ? epoch : clock.now().getTime();
  return {
    event,
    route,
    requestId: event.requestContext?.requestId ?? randomUUID(),
    params: Object.fromEntries(Object.entries(event.pathParameters ?? {}).map(([k, v]) => [k, v ?? ''])),
    query: Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).map(([k, v]) => [k, v ?? ''])),
    headers,
    get body() {
      return uncompressedBody(raw, headers);
    },
    services: svc,
    principal: null,
    account: null,
    json() {
      if (!parsed) {
        const body = uncompressedBody(raw, headers);
        let text: string;
        try {
          text = UTF8.decode(body);
        } catch {
          // JSON is UTF-8 (RFC 8259); decoding leniently would print U+FFFD where the client meant something else.
          throw invalidParameter('body', 'The request body is not valid UTF-8. Send JSON encoded as UTF-8 (escape other characters as \\uXXXX).');
        }
        if (text.trim() === '') parsed = { value: undefined };
        else {
          try {
            parsed = { value: parseJsonText(text) };
          } catch (err) {
            throw invalidParameter('body', `The request body is not valid JSON (${(err as Error).message}). Send a JSON object with Content-Type: application/json.`);
          }
        }
      }
      return parsed.value;
    },
    sinceReceivedMs: () => Math.max(0, clock.now().getTime() - receivedAt),
  };
}

async function run(req: HttpRequest, handler: RouteHandler, middlewares: Middleware[]): Promise<HttpResponse> {
  let response: HttpResponse | undefined;
  let entered = 0;
  try {
    for (const mw of middlewares) {
      entered++;
      const early = await mw.before?.(req);
      if (early) {
        response = early;
        break;
      }
    }
    if (!response) response = await handler(req);
    for (let i = entered - 1; i >= 0; i--) response = (await middlewares[i].after?.(req, response)) ?? response;
    return response;
  } catch (err) {
    for (let i = middlewares.length - 1; i >= 0; i--) {
      const handled = await middlewares[i].onError?.(req, err);
      if (handled) return handled;
    }
    throw err;
  }
}

/**
 * Wraps a route handler as an API Gateway Lambda handler. The route id ties it to its row in the
 * route table, so the credential rules the middleware applies are the table's.
 */
export function httpRoute(routeId: string, handler: RouteHandler, middlewares: () => Middleware[]) {
  const route = routeById(routeId);
  return async (event: APIGatewayProxyEvent, _context?: Context): Promise<APIGatewayProxyResult> => {
    let svc: Services;
    try {
      svc = await readyServices();
    } catch (err) {
      // Without its settings the function can do nothing; the caller still gets the envelope, and a later request retries.
      // Logged as the services log (one JSON line at error level, which the error alarm counts; console.error is neither).
      const requestId = event.requestContext?.requestId ?? randomUUID();
      createLogger().error(`${route.id}: could not load the deployment's secrets (request ${requestId})`, err);
      return toProxyResult(json(500, internalErrorBody(requestId)), requestId);
    }
    const req = buildRequest(event, route, svc);
    let response: HttpResponse;
    try {
      response = await run(req, handler, middlewares());
    } catch (err) {
      svc.log.error(`unhandled error in ${route.id} (request ${req.requestId})`, err);
      const mapped = toHttpError(err, req.requestId);
      response = json(mapped.status, mapped.body);
    }
    // Loaded only when on (the test stack): the response schemas cost a Lambda ~20 ms of cold start to build.
    const violation = svc.config.checkResponseContract ? (await import('./openapi/contract')).contractViolation(route, response) : null;
    if (violation) {
      svc.log.error(`${violation} (request ${req.requestId})`);
      response = json(500, internalErrorBody(req.requestId, { contract_violation: violation }));
    }
    return toProxyResult(response, req.requestId);
  };
}
