import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../functions/composition';
import { toHttpError } from '../../../functions/http/errors';
import { httpRoute } from '../../../functions/http/pipeline';
import { json } from '../../../functions/http/responses';

const event = { headers: {}, requestContext: { requestId: 'req-1' }, body: null, isBase64Encoded: false } as unknown as APIGatewayProxyEvent;

function useServices(checkResponseContract: boolean) {
  const logged: unknown[] = [];
  setServices({ log: { error: (...args: unknown[]) => logged.push(args) }, config: { checkResponseContract } } as unknown as Services);
  return logged;
}

afterEach(() => setServices(null));

describe('httpRoute 500s', () => {
  const generic = toHttpError(new Error('x'), 'req-1').body;

  it('answers an error no middleware handled with the error mapper’s envelope, and logs it', async () => {
    const logged = useServices(false);
    const handler = httpRoute('me.get', async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.7 password=hunter2');
    }, () => []);
    const res = await handler(event);
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body)).toEqual(generic);
    expect(logged).toHaveLength(1);
  });

  it('answers a response that breaks the OpenAPI document with the same envelope, naming the violation', async () => {
    useServices(true);
    const handler = httpRoute('me.get', async () => json(200, { not: 'an account' }), () => []);
    const res = await handler(event);
    expect(res.statusCode).toBe(500);
    const body = JSON.parse(res.body);
    expect(body.error.code).toBe(generic.error.code);
    expect(body.error.message).toBe(generic.error.message);
    expect(body.error.details).toEqual({ request_id: 'req-1', contract_violation: expect.any(String) });
  });
});
