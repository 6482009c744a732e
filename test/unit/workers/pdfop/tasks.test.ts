import { setServices } from '../../../../functions/composition';
import { markProcessing, processJob, recordFailure } from '../../../../functions/workers/pdfop/tasks';
import { jobTableDown } from '../../../support/services-down';

afterEach(() => setServices(null));

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
    const jobs = jobTableDown();
    await expect(task()).rejects.toThrow('job table unavailable');
    expect(jobs.get).toHaveBeenCalledWith('job_p1');
  });
});
