import { authedRoute, publicRoute } from '../../../functions/http/route';
import { json } from '../../../functions/http/responses';

describe('route handlers', () => {
  const answer = async () => json(200, {});

  it('are refused at load when the route table gives the route another credential rule', () => {
    // Protected: an authedRoute handler relies on principal and account, which public routes never get.
    expect(() => authedRoute('openapi.get', answer)).toThrow('openapi.get is public in the route table; use publicRoute');
    expect(() => publicRoute('jobs.get', answer)).toThrow('jobs.get is protected in the route table; use authedRoute');
  });

  it('are built for routes whose rule matches', () => {
    expect(typeof authedRoute('jobs.get', answer)).toBe('function');
    expect(typeof publicRoute('openapi.get', answer)).toBe('function');
  });
});
