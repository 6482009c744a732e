import { type Services, setServices } from '../../../../functions/composition';
import { markProcessing, processJob, recordFailure } from '../../../../functions/workers/pdfop/tasks';

afterEach(() => setServices(null));

/** Services whose job table is down: every task's logic fails on its first read of the job. */
function tableDown() {
  const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
  const jobs = { get: jest.fn(async () => Promise.reject(new Error('job table unavailable'))) };
  setServices({ jobs, clock: { now: () => new Date('2026-11-24T12:00:00Z') }, config: {}, log } as unknown as Services);
  return jobs;
}

describe('pdfop workflow task handlers', () => {
  // Step Functions runs the ASL's Retry and Catch only for a task that throws: one that answered would let the
  // workflow go on as if the step had worked (statemachines/pdfop.asl.json).
  const input = { job_id: 'job_p1', account_id: 'acct1' };
  it.each([
    ['MarkProcessing', () => markProcessing(input)],
    ['Process', () => processJob(input)],
    ['RecordFailure (from the Catch)', () => recordFailure({ ...input, error: { Error: 'Error', Cause: 'boom' } })],
    ['RecordFailure (from an ended execution)', () => recordFailure({ detail: { status: 'FAILED', input: JSON.stringify(input) } })],
  ])('%s rejects when its logic does', async (_state, task) => {
    const jobs = tableDown();
    await expect(task()).rejects.toThrow('job table unavailable');
    expect(jobs.get).toHaveBeenCalledWith('job_p1');
  });
});
