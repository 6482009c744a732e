import { presentApiKey } from '../../core/auth/manage-keys';
import { json } from '../responses';
import { authedRoute } from '../route';

export const handler = authedRoute('apiKeys.list', async (req) => {
  const keys = (await req.services.apiKeys.listForAccount(req.account.account_id)).map(presentApiKey);
  return json(200, { api_keys: keys, count: keys.length });
});
