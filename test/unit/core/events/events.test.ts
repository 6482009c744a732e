import { jobEvent } from '../../../../functions/core/events/events';
import type { Job } from '../../../../functions/core/jobs/job';

/** The payload fields document 2 lists for each job event kind, as the outbox stores them. */
const at = new Date('2026-11-22T12:00:05.000Z');
const job = (over: Partial<Job>): Job =>
  ({
    job_id: 'job_1',
    account_id: 'acc_1',
    job_type: 'quick',
    status: 'processing',
    mode: 'html',
    pages: null,
    truncated: false,
    created_at: '2026-11-22T12:00:00.000Z',
    started_at: '2026-11-22T12:00:01.000Z',
    completed_at: null,
    timeout_occurred: false,
    error_code: null,
    error_message: null,
    output: null,
    ...over,
  }) as Job;

describe('jobEvent', () => {
  it('gives job.processing its started_at', () => {
    expect(jobEvent('job.processing', job({}), at).payload).toMatchObject({ event: 'job.processing', started_at: '2026-11-22T12:00:01.000Z' });
  });

  it('dates job.failed when the job ended, and only without an end time when the event is made', () => {
    const ended = job({ status: 'failed', error_code: 'RENDER_FAILED', error_message: 'x', completed_at: '2026-11-22T12:00:03.000Z' });
    expect(jobEvent('job.failed', ended, at).payload).toMatchObject({ failed_at: '2026-11-22T12:00:03.000Z', error_code: 'RENDER_FAILED' });
    expect(jobEvent('job.failed', job({ status: 'failed' }), at).payload).toMatchObject({ failed_at: at.toISOString() });
  });

  it('counts a bulk job without counters yet as 0 of each, and keeps the output key for the signed link', () => {
    const bulk = job({ job_type: 'bulk', status: 'failed', output: { key: 'out/job_1.zip', name: 'x.zip', content_type: 'application/zip', size_bytes: 1, expires_at: at.toISOString() } });
    const e = jobEvent('bulk.job.failed', bulk, at);
    expect(e.payload).toMatchObject({ success_count: 0, failure_count: 0, pages_total: 0, file_count: null });
    expect(e.output_key).toBe('out/job_1.zip');
  });
});
