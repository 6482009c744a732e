/**
 * How the gateway itself answers (before or instead of a Lambda): the same envelope as the handlers.
 * The CDK app turns these into API Gateway "gateway responses"; the local gateway renders them directly.
 * `$authorizer.<key>` is filled from the authorizer's Deny context ($context.authorizer.<key> in AWS).
 */
export type GatewayResponseType =
  | 'ACCESS_DENIED'
  | 'UNAUTHORIZED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'RESOURCE_NOT_FOUND'
  | 'REQUEST_TOO_LARGE'
  | 'THROTTLED'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'INTEGRATION_TIMEOUT'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseDef {
  type: GatewayResponseType;
  /** Overrides the default status API Gateway would use. */
  status?: number;
  code: string;
  message: string;
  /** `details` keys and their (template) values; none means `details: {}`. */
  details?: Record<string, string>;
  /** Fixed response headers beside Content-Type and CORS. */
  headers?: Record<string, string>;
}

/**
 * A 401 names the scheme that would work (RFC 9110 §11.6.1): a bearer credential, a `pk_…` key or an ID token.
 * Without an error code, as RFC 6750 asks when the request may have carried no credential at all.
 */
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="api"' } as const;

export const GATEWAY_RESPONSES: GatewayResponseDef[] = [
  // The authorizer denies with a reason in its context; a refused credential is a 401, as the spec says.
  { type: 'ACCESS_DENIED', status: 401, code: '$authorizer.error_code', message: '$authorizer.error_message', details: { reason: '$authorizer.error_reason' }, headers: CHALLENGE },
  { type: 'UNAUTHORIZED', status: 401, code: 'UNAUTHORIZED', message: 'Missing or invalid credential.', headers: CHALLENGE },
  { type: 'MISSING_AUTHENTICATION_TOKEN', status: 404, code: 'NOT_FOUND', message: 'No such route. Check the method and path against the API reference.' },
  { type: 'RESOURCE_NOT_FOUND', status: 404, code: 'NOT_FOUND', message: 'No such route. Check the method and path against the API reference.' },
  { type: 'REQUEST_TOO_LARGE', status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request is over 6 MB. Send large inputs through an upload URL instead.' },
  { type: 'THROTTLED', status: 429, code: 'THROTTLED', message: 'Too many requests across the platform. Retry with exponential backoff and jitter.' },
  { type: 'AUTHORIZER_FAILURE', status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'The credential could not be checked. Retry with backoff.' },
  { type: 'AUTHORIZER_CONFIGURATION_ERROR', status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'The credential could not be checked. Retry with backoff.' },
  { type: 'INTEGRATION_TIMEOUT', status: 504, code: 'INTERNAL_SERVER_ERROR', message: 'The request took too long. Retry, or use an asynchronous route.' },
  { type: 'DEFAULT_4XX', code: 'INVALID_PARAMETER', message: 'The request was not accepted. Check its method, path, headers and body against /openapi.json.' },
  { type: 'DEFAULT_5XX', code: 'INTERNAL_SERVER_ERROR', message: 'Something went wrong on our side. Retry with backoff.' },
];

export function gatewayResponse(type: GatewayResponseType): GatewayResponseDef {
  return GATEWAY_RESPONSES.find((g) => g.type === type)!;
}

/** Authorizer context keys the ACCESS_DENIED template reads. */
export const DENY_CONTEXT_KEYS = ['error_code', 'error_message', 'error_reason'] as const;
