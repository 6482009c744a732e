import { jobListQuerySchema } from '../../../functions/core/jobs/list';
import { singleValuedQuery } from '../../../functions/http/query';
import type { HttpRequest } from '../../../functions/http/pipeline';
import { refusal } from '../../support/errors';

/** A request as the pipeline builds it from API Gateway's two query maps (the single one keeps the last value). */
function request(query: string): HttpRequest {
  const multi: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(query)) (multi[k] ??= []).push(v);
  const single = Object.fromEntries(Object.entries(multi).map(([k, v]) => [k, v[v.length - 1]]));
  return { event: { multiValueQueryStringParameters: multi }, query: single } as unknown as HttpRequest;
}

describe('singleValuedQuery', () => {
  it('refuses a parameter of the route given twice (API Gateway would keep only the last)', () => {
    expect(refusal(() => singleValuedQuery(request('limit=500&limit=5'), jobListQuerySchema))).toMatchObject({
      code: 'INVALID_PARAMETER',
      details: { parameter: 'limit', count: 2 },
    });
  });

  it('ignores other parameters however often they come, as it ignores them once', () => {
    expect(singleValuedQuery(request('utm_source=a&utm_source=b&_=1&_=2&limit=5'), jobListQuerySchema)).toEqual({ utm_source: 'b', _: '2', limit: '5' });
  });
});
