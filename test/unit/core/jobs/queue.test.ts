import { readRenderJobMessage } from '../../../../functions/core/jobs/queue';

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
