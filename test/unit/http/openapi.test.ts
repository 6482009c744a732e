import { openApiDocument } from '../../../functions/http/openapi/document';
import { codesByStatus } from '../../../functions/http/errors';
import { PDF_OPTION_KEYS } from '../../../functions/core/render/options';
import { ROUTES } from '../../../functions/routes';

type Json = Record<string, any>;
const doc = openApiDocument() as Json;

/** Every "$ref" string anywhere in a value. */
function refs(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refs);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refs(v)));
  return [];
}

describe('the OpenAPI document', () => {
  it('has one operation per route, with its id, path parameters and credentials', () => {
    const operations = Object.values(doc.paths as Json).flatMap((methods) => Object.values(methods as Json));
    expect(operations).toHaveLength(ROUTES.length);
    for (const route of ROUTES) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op?.operationId).toBe(route.id);
      const schemes = (op.security as Json[]).flatMap((s) => Object.keys(s)).sort();
      expect(schemes).toEqual({ key_or_token: ['ApiKeyBearer', 'ApiKeyHeader', 'IdToken'], token: ['IdToken'], none: [] }[route.access]);
      expect((op.parameters ?? []).map((p: Json) => p.name)).toEqual([...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
    }
  });

  it('gives accepted jobs and created resources their own success status', () => {
    expect(Object.keys(doc.paths['/longjob'].post.responses)).toContain('202');
    expect(Object.keys(doc.paths['/accounts/me/api-keys'].post.responses)).toContain('201');
    expect(Object.keys(doc.paths['/quickjob'].post.responses)).toContain('200');
  });

  it('marks routes not built yet with their 501 answer, and only those', () => {
    for (const route of ROUTES) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      expect([route.id, '501' in op.responses]).toEqual([route.id, route.handler === null]);
      expect([route.id, op['x-implemented']]).toEqual([route.id, route.handler === null ? false : undefined]);
    }
  });

  it('lists every error code under its status, and every reference resolves', () => {
    for (const [status, codes] of Object.entries(codesByStatus())) {
      for (const code of codes) expect(doc.components.responses[`Error${status}`].description).toContain(code);
    }
    for (const ref of refs(doc)) {
      const target = ref.replace(/^#\//, '').split('/').reduce((node: Json | undefined, key) => node?.[key], doc);
      expect([ref, target !== undefined]).toEqual([ref, true]);
    }
  });

  it('describes every PDF option from the schema that validates it', () => {
    expect(Object.keys(doc.components.schemas.PdfOptions.properties).sort()).toEqual([...PDF_OPTION_KEYS].sort());
    expect(doc.components.schemas.PdfOptions.properties.scale).toMatchObject({ minimum: 0.1, maximum: 2 });
  });
});
