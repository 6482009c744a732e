import type { APIGatewayProxyEvent } from 'aws-lambda';
import { handler } from '../../../functions/http/not-implemented';

describe('routes not built yet', () => {
  it('answer 501 NOT_IMPLEMENTED in the standard envelope, naming the route', async () => {
    const res = await handler({ httpMethod: 'POST', resource: '/templates', path: '/templates', requestContext: { requestId: 'req-1' } } as unknown as APIGatewayProxyEvent);
    expect(res.statusCode).toBe(501);
    expect(res.headers?.['X-Request-Id']).toBe('req-1');
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'NOT_IMPLEMENTED', message: 'POST /templates is part of the API but not available in this release yet.', details: { route: 'POST /templates' } },
    });
  });

  it('names the route as the table has it, not the path that was sent', async () => {
    const res = await handler({ httpMethod: 'GET', resource: '/templates/{template_id}', path: '/templates/t_1', requestContext: { requestId: 'req-2' } } as unknown as APIGatewayProxyEvent);
    expect(JSON.parse(res.body).error.details).toEqual({ route: 'GET /templates/{template_id}' });
  });
});
