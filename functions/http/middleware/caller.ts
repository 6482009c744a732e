import type { Principal } from '../../core/auth/authenticate';
import { unauthorized } from '../../core/auth/authenticate';
import { ServiceError } from '../../core/errors';
import type { Middleware } from '../pipeline';

/** The authorizer's verdict as API Gateway hands it to the integration (`requestContext.authorizer`). */
export function principalFromAuthorizer(context: Record<string, unknown> | null | undefined): Principal | null {
  const accountId = context?.account_id;
  const credential = context?.credential;
  if (typeof accountId !== 'string' || !accountId || (credential !== 'api_key' && credential !== 'id_token')) return null;
  const keyId = context?.api_key_id;
  return { account_id: accountId, credential, api_key_id: typeof keyId === 'string' && keyId ? keyId : null };
}

/**
 * Reads the caller established by the authorizer and loads their account. Routes without a credential
 * skip this. A missing authorizer context on a protected route is refused (defence in depth).
 */
export const caller: Middleware = {
  async before(req) {
    if (req.route.access === 'none') return;
    const principal = principalFromAuthorizer(req.event.requestContext?.authorizer as Record<string, unknown> | undefined);
    if (!principal) throw unauthorized('No valid credential reached this route. Send an API key (X-API-Key: pk_…) or a dashboard ID token (Authorization: Bearer <ID token>).');
    req.principal = principal;
    const account = await req.services.accounts.get(principal.account_id);
    if (!account) {
      throw new ServiceError('ACCOUNT_NOT_FOUND', 'The credential is valid but no account exists for it. Finish sign-up in the dashboard first.', {
        account_id: principal.account_id,
      });
    }
    req.account = account;
  },
};
