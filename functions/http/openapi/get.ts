import { json } from '../responses';
import { publicRoute } from '../route';
import { openApiDocument } from './document';

let document: string | undefined;

/** GET /openapi.json (no credential): this API as an OpenAPI 3.1 document, built once per process. */
export const handler = publicRoute('openapi.get', async () => {
  document ??= JSON.stringify(openApiDocument());
  return { ...json(200, null), body: document };
});
