import { deferralDelaySeconds, readRenderJobMessage } from '../../../../functions/core/jobs/queue';

describe('readRenderJobMessage', () => {
  it('reads the job and how often it was deferred (0 when absent or not a count)', () => {
    expect(readRenderJobMessage('{"job_id":"job_1"}')).toEqual({ job_id: 'job_1', deferrals: 0 });
    expect(readRenderJobMessage('{"job_id":"job_1","deferrals":3}')).toEqual({ job_id: 'job_1', deferrals: 3 });
    expect(readRenderJobMessage('{"job_id":"job_1","deferrals":"x"}')).toEqual({ job_id: 'job_1', deferrals: 0 });
    expect(readRenderJobMessage('{"job_id":"job_1","deferrals":-2}')).toEqual({ job_id: 'job_1', deferrals: 0 });
  });

  it('is null for a body that names no job', () => {
    for (const body of ['', 'not json', 'null', '[]', '{}', '{"job_id":""}', '{"job_id":7}']) expect(readRenderJobMessage(body)).toBeNull();
  });
});

describe('deferralDelaySeconds', () => {
  it('waits 2, 4, 8, 16 s between tries, then the most the deployment allows, and at least 1 s', () => {
    expect([1, 2, 3, 4, 5, 6, 50].map((n) => deferralDelaySeconds(n, 30))).toEqual([2, 4, 8, 16, 30, 30, 30]);
    expect(deferralDelaySeconds(3, 5)).toBe(5);
    expect(deferralDelaySeconds(1, 1)).toBe(1);
    expect(deferralDelaySeconds(1, 0.2)).toBe(1);
  });
});
