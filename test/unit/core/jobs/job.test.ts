import { completed, failed, newJob, timedOut } from '../../../../functions/core/jobs/job';

const created = new Date('2026-11-21T12:00:00Z');
const at = new Date('2026-11-21T12:05:00Z');

describe('job end states', () => {
  // The end states spread the stored job: whatever error it carried, a completed job shows none.
  const retried = { ...newJob({ job_id: 'job_1', account_id: 'acc', job_type: 'long', status: 'processing', now: created }), error_code: 'RENDER_FAILED', error_message: 'first attempt' };

  it('completed clears an earlier error and records when it ended', () => {
    expect(completed(retried, at, { pages: 3 })).toMatchObject({ status: 'completed', completed_at: at.toISOString(), error_code: null, error_message: null, pages: 3, timeout_occurred: false });
  });

  it('failed and timedOut record the error; only a timeout sets timeout_occurred', () => {
    expect(failed(retried, at, 'BAD_INPUT', 'no')).toMatchObject({ status: 'failed', completed_at: at.toISOString(), error_code: 'BAD_INPUT', error_message: 'no', timeout_occurred: false });
    expect(timedOut(retried, at, 'TIMEOUT', 'slow')).toMatchObject({ status: 'timeout', completed_at: at.toISOString(), error_code: 'TIMEOUT', error_message: 'slow', timeout_occurred: true });
  });
});
