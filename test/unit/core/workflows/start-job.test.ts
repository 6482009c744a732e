import { ServiceError } from '../../../../functions/core/errors';
import { startJobWorkflow, storeQueuedJob } from '../../../../functions/core/workflows/start-job';
import { newJob } from '../../../../functions/core/jobs/job';
import { MemoryAccounts, MemoryBlobs, MemoryCommitments, MemoryJobs, MemorySlots, RecordingWorkflows } from '../../../support/memory';

const written = new Date('2026-11-22T10:00:00Z');
const job = { job_id: 'job_1', account_id: 'acct1', created_at: written.toISOString() };
const clock = { now: () => new Date(written.getTime() + 1000) };

/** The job as the submitter stores it: queued, with its start recorded. */
async function storedJobs() {
  const jobs = new MemoryJobs();
  await jobs.put(newJob({ ...job, job_type: 'bulk', status: 'queued', now: written }), [], { via: 'workflow', workflow: 'bulk' });
  return jobs;
}

describe('startJobWorkflow', () => {
  it('starts the workflow with the job, named after it, makes the start its watch (next look in ten minutes) and records no failure', async () => {
    const workflows = new RecordingWorkflows();
    const jobs = await storedJobs();
    const recordFailure = jest.fn(async () => undefined);
    await startJobWorkflow({ workflows, jobs, clock }, 'bulk', job, recordFailure);
    expect(workflows.started).toEqual([{ workflow: 'bulk', input: { job_id: 'job_1', account_id: 'acct1' } }]);
    expect(workflows.names).toEqual(['job_1']);
    expect(recordFailure).not.toHaveBeenCalled();
    expect([...jobs.starts.values()]).toEqual([expect.objectContaining({ job_id: 'job_1', due_at: new Date(clock.now().getTime() + 600_000).toISOString() })]);
  });

  it('a watch that cannot be written is only logged: the workflow runs, and the sweeper finds the start record as written', async () => {
    const workflows = new RecordingWorkflows();
    const jobs = await storedJobs();
    jobs.watchStart = async () => {
      throw new Error('throttled');
    };
    const log = jest.fn();
    await startJobWorkflow({ workflows, jobs, clock, log }, 'bulk', job, async () => undefined);
    expect(workflows.names).toEqual(['job_1']);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('job_1'), expect.any(Error));
    expect([...jobs.starts.values()]).toEqual([expect.objectContaining({ job_id: 'job_1', due_at: job.created_at })]);
  });

  it('records the failure, logs the cause and answers SERVICE_UNAVAILABLE (500) with the job id when it cannot start', async () => {
    const workflows = new RecordingWorkflows();
    workflows.fail = new Error('throttled');
    const jobs = await storedJobs();
    const recordFailure = jest.fn(async () => void jobs.jobs.set('job_1', { ...jobs.jobs.get('job_1')!, status: 'failed', error_code: 'SERVICE_UNAVAILABLE' }));
    const log = jest.fn();
    const err = await startJobWorkflow({ workflows, jobs, clock, log }, 'pdfop', job, recordFailure).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { job_id: 'job_1' } });
    expect(recordFailure).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('job_1'), workflows.fail);
  });

  it('accepts the job when its failure cannot be recorded either and it is still queued: the start sweeper starts it', async () => {
    const workflows = new RecordingWorkflows();
    workflows.fail = new Error('throttled');
    const jobs = await storedJobs();
    const log = jest.fn();
    await startJobWorkflow({ workflows, jobs, clock, log }, 'bulk', job, async () => Promise.reject(new Error('table unavailable')));
    expect(log).toHaveBeenCalledWith(expect.stringContaining('could not record'), expect.any(Error));
    // Its start record stays as written, for the sweeper.
    expect([...jobs.starts.values()]).toEqual([expect.objectContaining({ job_id: 'job_1', due_at: job.created_at })]);
  });

  it('accepts the job when the start went through with its reply lost and the execution took the job first', async () => {
    for (const status of ['processing', 'completed', 'failed'] as const) {
      const workflows = new RecordingWorkflows();
      workflows.fail = new Error('socket hang up');
      const jobs = await storedJobs();
      // The execution ran (and maybe ended) the job; the recorder leaves a job that is no longer queued as it is.
      jobs.jobs.set('job_1', { ...jobs.jobs.get('job_1')!, status, error_code: status === 'failed' ? 'BULK_NO_CONVERTIBLE_FILES' : null });
      await expect(startJobWorkflow({ workflows, jobs, clock }, 'bulk', job, async () => undefined)).resolves.toBeUndefined();
    }
  });

  it('answers SERVICE_UNAVAILABLE when the failure cannot be recorded and the job cannot be read, or reads as failed by that record', async () => {
    for (const stored of ['unreadable', 'failed'] as const) {
      const workflows = new RecordingWorkflows();
      workflows.fail = new Error('throttled');
      const jobs = await storedJobs();
      // The record's write went through with its reply lost.
      if (stored === 'failed') jobs.jobs.set('job_1', { ...jobs.jobs.get('job_1')!, status: 'failed', error_code: 'SERVICE_UNAVAILABLE' });
      else jobs.get = async () => Promise.reject(new Error('table unavailable'));
      const err = await startJobWorkflow({ workflows, jobs, clock }, 'bulk', job, async () => Promise.reject(new Error('lost reply'))).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    }
  });
});

describe('storeQueuedJob', () => {
  async function held() {
    const accounts = new MemoryAccounts();
    const deps = { jobs: new MemoryJobs(), blobs: new MemoryBlobs(), slots: new MemorySlots(), commitments: new MemoryCommitments(accounts), log: jest.fn() };
    await deps.slots.acquire({ accountId: 'acct1', kind: 'bulk', jobId: 'job_1', max: 2, now: written, leaseSeconds: 60 });
    const release = jest.spyOn(deps.commitments, 'release');
    return { deps, release };
  }
  const queued = newJob({ ...job, job_type: 'bulk', status: 'queued', now: written });
  const files = [
    { key: 'jobs/acct1/job_1/bundle.zip', body: Buffer.from('zip'), contentType: 'application/zip' },
    { key: 'jobs/acct1/job_1/request.json', body: Buffer.from('{}'), contentType: 'application/json' },
  ];

  it('stores the files the workflow reads, then the job with its start record', async () => {
    const { deps } = await held();
    await storeQueuedJob(deps, queued, { workflow: 'bulk', slotKind: 'bulk', files });
    expect([...deps.blobs.objects.keys()]).toEqual(files.map((f) => f.key));
    expect(await deps.jobs.get('job_1')).toMatchObject({ status: 'queued' });
    expect([...deps.jobs.starts.keys()]).toEqual(['job_1']);
  });

  it('leaves nothing behind when a write fails and did not go through: files deleted, slot and commitment given back', async () => {
    const { deps, release } = await held();
    deps.blobs.failPuts.add('request.json');
    await expect(storeQueuedJob(deps, queued, { workflow: 'bulk', slotKind: 'bulk', files })).rejects.toThrow('storage unavailable');
    expect(deps.blobs.objects.size).toBe(0);
    expect(deps.slots.held.size).toBe(0);
    expect(release).toHaveBeenCalledWith('acct1', 'job_1');
    expect(await deps.jobs.get('job_1')).toBeNull();
  });

  it('deletes a file whose put went through with its reply lost when the job is not written', async () => {
    const { deps } = await held();
    const put = deps.blobs.put.bind(deps.blobs);
    deps.blobs.put = async (key, body, contentType) => {
      await put(key, body, contentType);
      if (key.endsWith('request.json')) throw new Error('socket hang up');
    };
    await expect(storeQueuedJob(deps, queued, { workflow: 'bulk', slotKind: 'bulk', files })).rejects.toThrow('socket hang up');
    expect(deps.blobs.objects.size).toBe(0);
  });

  it('goes on when the job write went through with its reply lost', async () => {
    const { deps } = await held();
    const put = deps.jobs.put.bind(deps.jobs);
    deps.jobs.put = async (...args) => {
      await put(...args);
      throw new Error('socket hang up');
    };
    await expect(storeQueuedJob(deps, queued, { workflow: 'bulk', slotKind: 'bulk', files })).resolves.toBeUndefined();
    expect(deps.blobs.objects.size).toBe(2);
    expect(deps.slots.held.size).toBe(1);
    expect(deps.log).toHaveBeenCalledWith('the write of job job_1 went through although it failed; the job goes on', expect.any(Error));
  });
});
