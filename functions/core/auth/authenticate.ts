import type { Clock } from '../clock';
import { ServiceError } from '../errors';
import { hashApiKey, hashesEqual, isWellFormedApiKey, lookupPrefix, API_KEY_PREFIX } from './api-keys';
import { type ApiKeyRepository, type IdTokenVerifier, TokenExpiredError } from './ports';

/** Which credentials a route accepts. */
export type RouteAccess = 'key_or_token' | 'token' | 'none';

export type PresentedCredential = { type: 'api_key'; key: string } | { type: 'id_token'; token: string } | { type: 'conflicting' } | { type: 'malformed' } | null;

export interface Principal {
  account_id: string;
  credential: 'api_key' | 'id_token';
  api_key_id: string | null;
}

/**
 * The value of a credential header (names compared without case): its one distinct non-empty value, undefined when
 * it has none, null when it has two different ones. An empty duplicate is no value, so the value comes from the
 * multi-value map: the single-value map holds the last one sent, which may be that empty duplicate.
 */
function headerValue(headers: Record<string, string | undefined>, multiValueHeaders: Record<string, (string | undefined)[] | undefined> | null | undefined, name: string): string | null | undefined {
  const values = new Set<string>();
  for (const [k, list] of Object.entries(multiValueHeaders ?? {})) {
    if (k.toLowerCase() !== name) continue;
    for (const v of list ?? []) if (v?.trim()) values.add(v.trim());
  }
  if (values.size > 1) return null;
  return values.size === 1 ? [...values][0] : headers[name]?.trim();
}

/**
 * Reads the credential of a request. `X-API-Key` wins; `Authorization: Bearer pk_…` is also a key;
 * any other bearer value is an ID token. With both a key and a token, the key is used. Two different
 * values of one credential header are refused rather than one picked: which one a proxy keeps varies.
 */
export function readCredential(headers: Record<string, string | undefined>, multiValueHeaders?: Record<string, (string | undefined)[] | undefined> | null): PresentedCredential {
  const key = headerValue(headers, multiValueHeaders, 'x-api-key');
  const auth = headerValue(headers, multiValueHeaders, 'authorization');
  if (key === null || auth === null) return { type: 'conflicting' };
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  const bearerKey = m?.[1].startsWith(API_KEY_PREFIX) ? m[1] : null;
  // A key wins over an ID token; two different keys are refused like two values of one header (which one was meant?).
  if (key && bearerKey && bearerKey !== key) return { type: 'conflicting' };
  if (key) return { type: 'api_key', key };
  // An Authorization header that is not "Bearer <one value>" (Basic, a bare key, a key with more after it) is a
  // credential sent wrongly, not a missing one: saying so saves the caller guessing.
  if (!m) return auth ? { type: 'malformed' } : null;
  return bearerKey ? { type: 'api_key', key: bearerKey } : { type: 'id_token', token: m[1] };
}

export function unauthorized(message: string, details: Record<string, unknown> = {}): ServiceError {
  return new ServiceError('UNAUTHORIZED', message, details);
}

const LAST_USED_RESOLUTION_MS = 60_000;
/** How long a request waits for its key's `last_used_at` write: awaited (a frozen Lambda would lose it), never for long. */
const TOUCH_WAIT_MS = 250;

/** Cognito subjects are UUIDs and local ones short ids; anything empty, longer than 128 or with control characters is not an account. */
const ACCOUNT_ID_SHAPE = /^[^\u0000-\u001f\u007f]{1,128}$/;

export interface AuthenticateDeps {
  apiKeys: ApiKeyRepository;
  idTokens: IdTokenVerifier;
  clock: Clock;
  log?: (message: string, err: unknown) => void;
}

/** Checks the presented credential against what the route accepts; 401 UNAUTHORIZED otherwise. */
export async function authenticate(deps: AuthenticateDeps, access: Exclude<RouteAccess, 'none'>, credential: PresentedCredential): Promise<Principal> {
  if (!credential) {
    throw unauthorized(
      access === 'token'
        ? 'This route needs a dashboard ID token: Authorization: Bearer <ID token>.'
        : 'Send an API key (X-API-Key: pk_… or Authorization: Bearer pk_…) or a dashboard ID token (Authorization: Bearer <ID token>).',
      { reason: 'missing_credential' },
    );
  }
  if (credential.type === 'conflicting') {
    throw unauthorized('The request carries two different values of X-API-Key or Authorization, or two different API keys (X-API-Key and Authorization: Bearer pk_…). Send exactly one credential.', { reason: 'conflicting_credentials' });
  }
  if (credential.type === 'malformed') {
    throw unauthorized(
      'The Authorization header must be "Bearer " followed by one API key (pk_…) or ID token, with nothing after it. An API key can also be sent as X-API-Key.',
      { reason: 'malformed_authorization' },
    );
  }
  if (credential.type === 'api_key') {
    if (access === 'token') {
      throw unauthorized('This route accepts only a dashboard ID token (Authorization: Bearer <ID token>); API keys are refused here.', {
        reason: 'id_token_required',
      });
    }
    return verifyApiKey(deps, credential.key);
  }
  try {
    const token = await deps.idTokens.verify(credential.token);
    // The subject is the account id: a signed token without a usable one identifies nobody.
    if (typeof token.sub !== 'string' || !ACCOUNT_ID_SHAPE.test(token.sub)) throw new Error('the token has no usable sub claim');
    return { account_id: token.sub, credential: 'id_token', api_key_id: null };
  } catch (err) {
    if (err instanceof TokenExpiredError) throw unauthorized('The ID token has expired. Sign in again to get a new one.', { reason: 'token_expired' });
    throw unauthorized('The ID token is not valid for this service. Sign in to the dashboard again and send its new ID token.', { reason: 'invalid_token' });
  }
}

async function verifyApiKey(deps: AuthenticateDeps, key: string): Promise<Principal> {
  const invalid = () => unauthorized('The API key is not valid or has been revoked.', { reason: 'invalid_api_key' });
  if (!isWellFormedApiKey(key)) throw invalid();
  const hash = hashApiKey(key);
  const record = (await deps.apiKeys.findByPrefix(lookupPrefix(key))).find((r) => hashesEqual(r.hash, hash));
  if (!record) throw invalid();
  const now = deps.clock.now();
  if (!record.last_used_at || now.getTime() - Date.parse(record.last_used_at) > LAST_USED_RESOLUTION_MS) {
    const touched = deps.apiKeys.touch(record, now).catch((err) => deps.log?.('could not record API key use', err));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([touched, new Promise<void>((resolve) => (timer = setTimeout(resolve, TOUCH_WAIT_MS)))]);
    clearTimeout(timer);
  }
  return { account_id: record.account_id, credential: 'api_key', api_key_id: record.api_key_id };
}
