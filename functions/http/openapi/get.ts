import { json } from '../responses';
import { publicRoute } from '../route';
import { openApiDocument } from './document';

let document: ReturnType<typeof openApiDocument> | undefined;

/** GET /openapi.json (no credential): this API as an OpenAPI 3.1 document, built once per process. */
export const handler = publicRoute('openapi.get', async () => json(200, (document ??= openApiDocument())));
