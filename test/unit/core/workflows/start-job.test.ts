import { ServiceError } from '../../../../functions/core/errors';
import { startJobWorkflow } from '../../../../functions/core/workflows/start-job';
import { newJob } from '../../../../functions/core/jobs/job';
import { MemoryJobs, RecordingWorkflows } from '../../../support/memory';

const job = { job_id: 'job_1', account_id: 'acct1' };

/** The job as the submitter stores it: queued, with its start recorded. */
async function storedJobs() {
  const jobs = new MemoryJobs();
  await jobs.put(newJob({ ...job, job_type: 'bulk', status: 'queued', now: new Date('2026-11-22T10:00:00Z') }), [], { via: 'workflow', workflow: 'bulk' });
  return jobs;
}

describe('startJobWorkflow', () => {
  it('starts the workflow with the job, named after it, confirms the start and records no failure', async () => {
    const workflows = new RecordingWorkflows();
    const jobs = await storedJobs();
    const recordFailure = jest.fn(async () => undefined);
    await startJobWorkflow({ workflows, jobs }, 'bulk', job, recordFailure);
    expect(workflows.started).toEqual([{ workflow: 'bulk', input: { job_id: 'job_1', account_id: 'acct1' } }]);
    expect(workflows.names).toEqual(['job_1']);
    expect(recordFailure).not.toHaveBeenCalled();
    expect(jobs.starts.size).toBe(0);
  });

  it('a start that cannot be confirmed is only logged: the workflow runs, the sweeper drops the record later', async () => {
    const workflows = new RecordingWorkflows();
    const jobs = await storedJobs();
    jobs.startSent = async () => {
      throw new Error('throttled');
    };
    const log = jest.fn();
    await startJobWorkflow({ workflows, jobs, log }, 'bulk', job, async () => undefined);
    expect(workflows.names).toEqual(['job_1']);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('job_1'), expect.any(Error));
  });

  it('records the failure, logs the cause and answers SERVICE_UNAVAILABLE (500) with the job id when it cannot start', async () => {
    const workflows = new RecordingWorkflows();
    workflows.fail = new Error('throttled');
    const recordFailure = jest.fn(async () => undefined);
    const log = jest.fn();
    const err = await startJobWorkflow({ workflows, jobs: await storedJobs(), log }, 'pdfop', job, recordFailure).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { job_id: 'job_1' } });
    expect(recordFailure).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('job_1'), workflows.fail);
  });
});
