import { ServiceError } from '../../core/errors';
import { json } from '../responses';
import { authedRoute } from '../route';

/** DELETE /accounts/me/api-keys/{api_key_id}: the key stops working with the next request. */
export const handler = authedRoute('apiKeys.revoke', async (req) => {
  const id = req.params.api_key_id;
  const outcome = await req.services.apiKeys.delete(req.account.account_id, id);
  if (outcome === 'other_account') {
    throw new ServiceError('ACCESS_DENIED', `API key ${id} belongs to another account; an account can revoke only its own keys.`, { api_key_id: id });
  }
  if (outcome === 'not_found') {
    throw new ServiceError('API_KEY_NOT_FOUND', `No API key ${id} on this account. GET /accounts/me/api-keys lists them.`, { api_key_id: id });
  }
  return json(200, { api_key_id: id, revoked: true });
});
