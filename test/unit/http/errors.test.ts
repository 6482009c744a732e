import { ServiceError } from '../../../functions/core/errors';
import { statusForCode, toHttpError } from '../../../functions/http/errors';

describe('error mapping', () => {
  it.each([
    ['INVALID_PARAMETER', 400], ['UNAUTHORIZED', 401], ['UPGRADE_REQUIRED', 402], ['INSUFFICIENT_CREDITS', 403], ['RATE_LIMIT_EXCEEDED', 403],
    ['JOB_NOT_FOUND', 404], ['QUICKJOB_TIMEOUT', 408], ['JOB_NOT_READY', 409], ['OUTPUT_EXPIRED', 410], ['BULK_INLINE_TOO_LARGE', 413],
    ['URL_FETCH_HTTP_ERROR', 422], ['THROTTLED', 429], ['PDF_GENERATION_FAILED', 500], ['NOT_IMPLEMENTED', 501],
    // A job that could not be queued is a server-side failure the spec says to retry: 500, not a 503 outside its table.
    ['SERVICE_UNAVAILABLE', 500],
  ])('%s is %d', (code, status) => {
    expect(statusForCode(code)).toBe(status);
  });

  it('wraps service errors in the envelope', () => {
    const mapped = toHttpError(new ServiceError('JOB_NOT_FOUND', 'No job.', { job_id: 'j' }), 'req-1');
    expect(mapped).toEqual({ status: 404, unexpected: false, body: { error: { code: 'JOB_NOT_FOUND', message: 'No job.', details: { job_id: 'j' } } } });
  });

  it('hides the internals of unexpected errors', () => {
    const mapped = toHttpError(new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2'), 'req-1');
    expect(mapped.status).toBe(500);
    expect(mapped.body.error.code).toBe('INTERNAL_SERVER_ERROR');
    expect(JSON.stringify(mapped.body)).not.toMatch(/ECONNREFUSED|hunter2|10\.0\.0\.7/);
  });

  it('treats an unmapped code as a bug (500)', () => {
    expect(toHttpError(new ServiceError('SOMETHING_NEW', 'x'), 'r').status).toBe(500);
  });
});
