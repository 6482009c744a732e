import { ServiceError } from '../../../../functions/core/errors';
import { errorMapper } from '../../../../functions/http/middleware/error-mapper';
import type { HttpRequest } from '../../../../functions/http/pipeline';
import { routeById } from '../../../../functions/routes';

function request() {
  const logged: unknown[][] = [];
  const req = { requestId: 'req-7', route: routeById('me.get'), services: { log: { error: (...args: unknown[]) => logged.push(args) } } } as unknown as HttpRequest;
  return { req, logged };
}

describe('errorMapper', () => {
  it('answers a refusal with its status and envelope, and logs nothing (a 4xx is no failure of ours: the error alarm counts error lines)', async () => {
    const { req, logged } = request();
    const res = await errorMapper.onError!(req, new ServiceError('JOB_NOT_FOUND', 'No job.', { job_id: 'j' }));
    expect(res).toMatchObject({ statusCode: 404, headers: { 'Content-Type': 'application/json' } });
    expect(JSON.parse(String(res!.body))).toEqual({ error: { code: 'JOB_NOT_FOUND', message: 'No job.', details: { job_id: 'j' } } });
    expect(logged).toEqual([]);
  });

  it('answers an unexpected error with the bare 500 and logs it under the request id the answer gives', async () => {
    const { req, logged } = request();
    const err = new Error('connect ECONNREFUSED 10.0.0.7 password=hunter2');
    const res = await errorMapper.onError!(req, err);
    expect(res!.statusCode).toBe(500);
    expect(String(res!.body)).not.toMatch(/ECONNREFUSED|hunter2/);
    expect(JSON.parse(String(res!.body)).error.details).toEqual({ request_id: 'req-7' });
    expect(logged).toEqual([[expect.stringContaining('req-7'), err]]);
  });

  it('logs a ServiceError whose code has no status (a programming error answered as 500)', async () => {
    const { req, logged } = request();
    const res = await errorMapper.onError!(req, new ServiceError('SOMETHING_NEW', 'x'));
    expect(res!.statusCode).toBe(500);
    expect(logged).toHaveLength(1);
  });
});
