import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authenticate, readCredential } from '../core/auth/authenticate';
import { isServiceError } from '../core/errors';
import { readyServices } from '../composition';
import { routeFor } from '../routes';
import { DENY_CONTEXT_KEYS } from './gateway-responses';

function policy(effect: 'Allow' | 'Deny', principalId: string, resource: string, context: Record<string, string>): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] },
    context,
  };
}

/** A refusal: its context carries what the ACCESS_DENIED gateway response reads (DENY_CONTEXT_KEYS). */
function deny(resource: string, code: string, message: string, reason: string): APIGatewayAuthorizerResult {
  const [codeKey, messageKey, reasonKey] = DENY_CONTEXT_KEYS;
  return policy('Deny', 'anonymous', resource, { [codeKey]: code, [messageKey]: message, [reasonKey]: reason });
}

/** Gateway-response templates embed the message in JSON text; keep it free of characters that would need escaping. */
function templateSafe(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[\r\n]+/g, ' ');
}

/**
 * The REQUEST authorizer in front of every route that needs a credential (caching off, so a revoked key
 * is refused at once). It looks the route up in the route table to know whether API keys are allowed,
 * then checks the key or ID token. A refusal is a Deny whose context carries the error code and message
 * for the ACCESS_DENIED gateway response (401 with the standard envelope).
 */
export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const svc = await readyServices();
  const route = routeFor(event.httpMethod, event.resource);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v;
  if (!route || route.access === 'none') {
    return deny(event.methodArn, 'NOT_FOUND', 'No such route.', 'no_route');
  }
  try {
    const principal = await authenticate(
      { apiKeys: svc.apiKeys, idTokens: svc.idTokens, clock: svc.clock, log: (m, e) => svc.log.warn(m, e) },
      route.access,
      readCredential(headers, event.multiValueHeaders),
    );
    return policy('Allow', principal.account_id, event.methodArn, {
      account_id: principal.account_id,
      credential: principal.credential,
      api_key_id: principal.api_key_id ?? '',
    });
  } catch (err) {
    if (isServiceError(err) && err.code === 'UNAUTHORIZED') {
      const reason = typeof err.details?.reason === 'string' ? err.details.reason : 'invalid_credential';
      return deny(event.methodArn, err.code, templateSafe(err.message), templateSafe(reason));
    }
    svc.log.error(`authorizer failed (request ${event.requestContext?.requestId})`, err);
    throw new Error('authorizer failure');
  }
}
