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

describe('error envelopes show back a bounded amount of what was sent', () => {
  it('cuts long strings, long lists, wide objects and deep values, and the message', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    const err = new ServiceError('INVALID_EVENTS', `Unknown event names: ${'"x", '.repeat(1_000_000)}`, { invalid: Array.from({ length: 1_000_000 }, () => 'x'.repeat(10)), value: 'y'.repeat(5_000_000), deep, wide });
    const { status, body } = toHttpError(err, 'req-1');
    expect(status).toBe(400);
    const size = JSON.stringify(body).length;
    expect(size).toBeLessThan(20_000);
    expect(body.error.message.length).toBeLessThanOrEqual(4097);
    expect(body.error.details.invalid).toHaveLength(50);
    expect(body.error.details.value).toBe(`${'y'.repeat(2048)}…`);
    expect(Object.keys(body.error.details.wide as object)).toHaveLength(50);
    expect(JSON.stringify(body.error.details.deep)).toBe('[[[[[\"[…]\"]]]]]');
  });

  it('shows back a "__proto__" key that was sent, rather than making it the prototype of what is shown', () => {
    // JSON.parse makes "__proto__" an own key; copied by assignment it set the shown object's prototype and vanished.
    const sent = JSON.parse('{"__proto__": {"a": 1}, "b": 2}');
    const { body } = toHttpError(new ServiceError('INVALID_INPUT_TYPE', 'x', { input_type: sent }), 'r');
    expect(JSON.stringify(body.error.details)).toBe('{"input_type":{"__proto__":{"a":1},"b":2}}');
    expect(Object.getPrototypeOf(body.error.details.input_type)).toBe(Object.prototype);
  });

  it('shows a string of exactly the limit whole, and cuts one character longer', () => {
    const shown = (value: string) => toHttpError(new ServiceError('INVALID_PARAMETER', 'x', { value }), 'r').body.error.details.value;
    expect(shown('y'.repeat(2048))).toBe('y'.repeat(2048));
    expect(shown('y'.repeat(2049))).toBe(`${'y'.repeat(2048)}…`);
    const message = (text: string) => toHttpError(new ServiceError('INVALID_PARAMETER', text), 'r').body.error.message;
    expect(message('m'.repeat(4096))).toBe('m'.repeat(4096));
  });

  it('leaves ordinary details as they are', () => {
    const details = { parameter: 'options.scale', allowed: ['a', 'b'], problems: [{ index: 0, filename: 'a.png', code: 'IMAGE_TOO_LARGE' }] };
    expect(toHttpError(new ServiceError('INVALID_PARAMETER', 'x', details), 'r').body.error.details).toEqual(details);
  });
});
