import { type Services, setServices } from '../../../../functions/composition';
import { newJob } from '../../../../functions/core/jobs/job';
import { STRANDED_JOB_RECORDERS, handler } from '../../../../functions/workers/jobs/start-sweep';
import { WORKFLOWS } from '../../../../functions/workflows';
import { MemoryJobs } from '../../../support/memory';

afterEach(() => setServices(null));

describe('the start sweeper', () => {
  it('can end a stranded job of every workflow: each has its failure recorder', () => {
    expect(Object.keys(STRANDED_JOB_RECORDERS).sort()).toEqual(WORKFLOWS.map((w) => w.name).sort());
  });

  it("goes by the services' clock and the configured long-job limit", async () => {
    // Years behind the real clock: by that one, every record below would be long due.
    const now = new Date('2020-03-01T12:00:00.000Z');
    const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
    const jobs = new MemoryJobs();
    const long = { account_id: 'acct1', job_type: 'long' as const, mode: 'html' };
    // Stored 3 minutes ago and never started: due. Stored a minute ago: its submitter may still send it.
    await jobs.put(newJob({ ...long, job_id: 'job_lost', status: 'queued', now: ago(3) }), [], { via: 'render-queue' });
    await jobs.put(newJob({ ...long, job_id: 'job_recent', status: 'queued', now: ago(1) }), [], { via: 'render-queue' });
    // Its worker's lease ran out 3 minutes ago: the worker died.
    await jobs.put({ ...newJob({ ...long, job_id: 'job_dead', status: 'processing', now: ago(40) }), lease_until: ago(3).toISOString() }, [], { via: 'render-queue' });
    const renderQueue = { send: jest.fn(async () => undefined) };
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    setServices({
      jobs,
      renderQueue,
      workflows: {},
      accounts: { get: async () => null },
      mailer: {},
      clock: { now: () => now },
      config: { longjobTimeoutSeconds: 30 },
      log,
    } as unknown as Services);

    expect(await handler()).toEqual({ sent: 1, watched: 0, cleared: 0, ended: 1, failed: 0 });
    expect(renderQueue.send.mock.calls).toEqual([[{ job_id: 'job_lost' }]]);
    expect(await jobs.get('job_dead')).toMatchObject({
      status: 'timeout',
      completed_at: now.toISOString(),
      error_code: 'RENDER_TIMEOUT',
      // The limit the job was given (LONGJOB_TIMEOUT_SECONDS overridden), not the 15-minute default.
      error_message: expect.stringMatching(/^Rendering did not finish within 30 seconds /),
    });
  });
});
