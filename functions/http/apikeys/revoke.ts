import { revokeApiKey } from '../../core/auth/manage-keys';
import { json } from '../responses';
import { authedRoute } from '../route';

/** DELETE /accounts/me/api-keys/{api_key_id}: the key stops working with the next request. */
export const handler = authedRoute('apiKeys.revoke', async (req) => json(200, await revokeApiKey(req.services.apiKeys, req.account.account_id, req.params.api_key_id)));
