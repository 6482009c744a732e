import { invalidParameter } from '../core/errors';
import type { HttpRequest } from './pipeline';

/**
 * The query string of a list route, each parameter once. API Gateway passes on only the last value of a repeated
 * parameter, so `limit=500&limit=5` listed 5 and `status=failed&status=completed` silently dropped a filter: a
 * repeated parameter is 400 INVALID_PARAMETER naming it.
 */
export function singleValuedQuery(req: HttpRequest): Record<string, string> {
  for (const [name, values] of Object.entries(req.event.multiValueQueryStringParameters ?? {})) {
    if (values && values.length > 1) throw invalidParameter(name, `${name} is given ${values.length} times; send it at most once.`, { count: values.length });
  }
  return req.query;
}
