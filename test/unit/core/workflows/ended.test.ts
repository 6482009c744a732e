import { failureTaskInput, isTimeoutError, strandedJobFailure } from '../../../../functions/core/workflows/ended';

const ended = (detail: Record<string, unknown>) => ({ detail: { status: 'FAILED', ...detail } });

describe('failureTaskInput', () => {
  it('passes a Catch input through as it is', () => {
    const caught = { job_id: 'job_1', account_id: 'a1', error: { Error: 'TransientTaskError', Cause: 'x' } };
    expect(failureTaskInput(caught)).toBe(caught);
  });

  it("makes an ended execution's event into the recorder's input: its job, and the ending as the error", () => {
    const input = JSON.stringify({ job_id: 'job_1', account_id: 'a1', extra: true });
    expect(failureTaskInput(ended({ status: 'TIMED_OUT', input }))).toEqual({ job_id: 'job_1', account_id: 'a1', error: { Error: 'States.Timeout' } });
    expect(failureTaskInput(ended({ status: 'ABORTED', input }))).toEqual({ job_id: 'job_1', account_id: 'a1', error: { Error: 'States.ABORTED' } });
    expect(failureTaskInput(ended({ input, error: 'States.Runtime', cause: 'bad path' }))).toEqual({ job_id: 'job_1', account_id: 'a1', error: { Error: 'States.Runtime', Cause: 'bad path' } });
  });

  it('answers null for an event that names no job', () => {
    expect(failureTaskInput(ended({ input: '{' }))).toBeNull();
    expect(failureTaskInput(ended({ input: null }))).toBeNull();
    expect(failureTaskInput(ended({ input: JSON.stringify({ job_id: 7 }) }))).toBeNull();
    expect(failureTaskInput(ended({ input: JSON.stringify(['job_1']) }))).toBeNull();
  });
});

describe('isTimeoutError', () => {
  it("counts the state's timeout and the function's own as running out of time, and nothing else", () => {
    expect(isTimeoutError({ Error: 'States.Timeout' })).toBe(true);
    expect(isTimeoutError({ Error: 'Sandbox.Timedout', Cause: '{}' })).toBe(true);
    expect(isTimeoutError({ Error: 'Lambda.Unknown', Cause: 'RequestId: 1 Error: Task timed out after 900.03 seconds' })).toBe(true);
    expect(isTimeoutError({ Error: 'TransientTaskError', Cause: 'storage' })).toBe(false);
    expect(isTimeoutError({ Error: 'States.TaskFailed' })).toBe(false);
    expect(isTimeoutError(undefined)).toBe(false);
  });
});

describe('strandedJobFailure', () => {
  const job = { job_id: 'job_1', account_id: 'a1' };
  const cause = 'The workflow execution ended without recording the outcome of its job.';

  it("ends a job as its execution ended: a timed-out one as a timeout, any other ending as that ending", () => {
    expect(strandedJobFailure(job, 'TIMED_OUT')).toEqual({ job_id: 'job_1', account_id: 'a1', error: { Error: 'States.Timeout', Cause: cause } });
    expect(strandedJobFailure(job, 'ABORTED')).toEqual({ job_id: 'job_1', account_id: 'a1', error: { Error: 'States.ABORTED', Cause: cause } });
    expect(isTimeoutError(strandedJobFailure(job, 'TIMED_OUT').error)).toBe(true);
  });

  it('ends a job whose execution is not found as failed, not as a timeout', () => {
    expect(strandedJobFailure(job, null)).toEqual({ job_id: 'job_1', account_id: 'a1', error: { Error: 'States.FAILED', Cause: cause } });
    expect(isTimeoutError(strandedJobFailure(job, null).error)).toBe(false);
  });
});
