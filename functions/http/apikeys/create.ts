import { createApiKey, parseKeyName, presentApiKey } from '../../core/auth/manage-keys';
import { json } from '../responses';
import { authedRoute } from '../route';

/** POST /accounts/me/api-keys: 201 with the plaintext key, shown this once. */
export const handler = authedRoute('apiKeys.create', async (req) => {
  const name = parseKeyName(req.json());
  const { record, plaintext } = await createApiKey(req.services.apiKeys, req.account.account_id, name, req.services.clock.now());
  return json(201, { ...presentApiKey(record), api_key: plaintext, message: 'Store this key now: it is shown only once.' });
});
