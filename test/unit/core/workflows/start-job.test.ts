import { ServiceError } from '../../../../functions/core/errors';
import { startJobWorkflow } from '../../../../functions/core/workflows/start-job';
import { RecordingWorkflows } from '../../../support/memory';

const job = { job_id: 'job_1', account_id: 'acct1' };

describe('startJobWorkflow', () => {
  it('starts the workflow with the job, named after it, and records no failure', async () => {
    const workflows = new RecordingWorkflows();
    const recordFailure = jest.fn(async () => undefined);
    await startJobWorkflow({ workflows }, 'bulk', job, recordFailure);
    expect(workflows.started).toEqual([{ workflow: 'bulk', input: { job_id: 'job_1', account_id: 'acct1' } }]);
    expect(workflows.names).toEqual(['job_1']);
    expect(recordFailure).not.toHaveBeenCalled();
  });

  it('records the failure, logs the cause and answers SERVICE_UNAVAILABLE (500) with the job id when it cannot start', async () => {
    const workflows = new RecordingWorkflows();
    workflows.fail = new Error('throttled');
    const recordFailure = jest.fn(async () => undefined);
    const log = jest.fn();
    const err = await startJobWorkflow({ workflows, log }, 'pdfop', job, recordFailure).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { job_id: 'job_1' } });
    expect(recordFailure).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('job_1'), workflows.fail);
  });
});
