import type { z } from 'zod';
import type { RouteDef } from '../../routes';
import type { HttpResponse } from '../responses';
import { PDF_RESPONSE_HEADERS, documentedCodesByStatus, errorStatuses, successStatuses } from './document';
import { errorBodySchema, successSchema } from './responses';

let codesByStatus: Record<number, string[]> | undefined;

/** The schema a response must match: the error envelope for refusals, the route's documented body for JSON success. */
function schemaFor(route: RouteDef, response: HttpResponse): z.ZodType | undefined {
  if (response.statusCode >= 400) return errorBodySchema;
  const json = /^application\/json/i.test(response.headers?.['Content-Type'] ?? '');
  return json && response.statusCode < 300 ? successSchema(route.id, response.statusCode) : undefined;
}

/** A documented success header (PDF_RESPONSE_HEADERS) whose value is off its schema, or null. */
function headerViolation(route: RouteDef, response: HttpResponse): string | null {
  if (response.statusCode >= 300) return null;
  for (const [name, header] of Object.entries(PDF_RESPONSE_HEADERS[route.id] ?? {})) {
    const value = response.headers?.[name];
    if (value !== undefined && !header.schema.safeParse(value).success) return `${route.id} answered header ${name}: ${JSON.stringify(value)}, off its documented schema`;
  }
  return null;
}

/**
 * How a response breaks the OpenAPI document, or null when it keeps to it (or the route has no documented body).
 * Run on every answer by the test stack (RESPONSE_CONTRACT=strict), never in AWS: a presenter that drifts from the
 * document fails the integration tests instead of surprising a client.
 */
export function contractViolation(route: RouteDef, response: HttpResponse): string | null {
  const documented = [...successStatuses(route), ...errorStatuses(route)];
  if (!documented.includes(response.statusCode)) {
    return `${route.id} answered ${response.statusCode}, which its OpenAPI operation does not list (${documented.join(', ')})`;
  }
  const headers = headerViolation(route, response);
  if (headers) return headers;
  const schema = schemaFor(route, response);
  if (!schema) return null;
  let body: unknown;
  try {
    body = JSON.parse(typeof response.body === 'string' ? response.body : Buffer.from(response.body ?? '').toString('utf8'));
  } catch {
    return `${route.id} answered ${response.statusCode} with a body that is not JSON`;
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
    return `${route.id} answered ${response.statusCode} off its documented schema: ${problems.join('; ')}`;
  }
  if (response.statusCode >= 400) {
    // The document lists each status's codes (components.responses.Error<status>): a code answered under another status breaks it.
    const code = (body as { error: { code: string } }).error.code;
    const listed = (codesByStatus ??= documentedCodesByStatus())[response.statusCode] ?? [];
    if (!listed.includes(code)) return `${route.id} answered ${response.statusCode} with code ${code}, which that status does not list (functions/http/errors.ts)`;
  }
  return null;
}
