import type { z } from 'zod';
import { invalidParameter } from '../core/errors';
import type { HttpRequest } from './pipeline';

/**
 * The query string of a list route, each of its parameters once. API Gateway passes on only the last value of a
 * repeated parameter, so `limit=500&limit=5` listed 5 and `status=failed&status=completed` silently dropped a filter:
 * a repeated parameter of the route's schema is 400 INVALID_PARAMETER naming it. Other parameters are ignored, as
 * once (`_=1&_=2`, a cache buster or tracking parameter sent twice, is no reason to refuse the list).
 */
export function singleValuedQuery(req: HttpRequest, schema: z.ZodObject): Record<string, string> {
  for (const [name, values] of Object.entries(req.event.multiValueQueryStringParameters ?? {})) {
    if (!Object.hasOwn(schema.shape, name)) continue;
    if (values && values.length > 1) throw invalidParameter(name, `${name} is given ${values.length} times; send it at most once.`, { count: values.length });
  }
  return req.query;
}
