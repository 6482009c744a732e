import { type Job, newJob } from '../../../../functions/core/jobs/job';
import type { ExecutionStatus } from '../../../../functions/core/workflows/ports';
import { sweepStartRecords } from '../../../../functions/core/jobs/starts';
import type { RenderJobMessage } from '../../../../functions/core/jobs/queue';
import { MemoryJobs, RecordingWorkflows } from '../../../support/memory';

const written = new Date('2026-11-22T10:00:00Z');

function world(minutesLater: number) {
  const jobs = new MemoryJobs();
  const sent: RenderJobMessage[] = [];
  const workflows = new RecordingWorkflows();
  const log = jest.fn();
  const endStranded = jest.fn(async (_job: Job, _workflow: string, _status: ExecutionStatus | null) => undefined);
  const now = new Date(written.getTime() + minutesLater * 60_000);
  const deps = { jobs, renderQueue: { send: async (m: RenderJobMessage) => void sent.push(m) }, workflows, clock: { now: () => now }, endStranded, log };
  const store = (id: string, status: 'queued' | 'processing' | 'failed', start: Parameters<MemoryJobs['put']>[2], type: 'long' | 'bulk' = 'long') =>
    jobs.put(newJob({ job_id: id, account_id: 'acct1', job_type: type, status, now: written }), [], start);
  /** The time `minutes` from the sweeper's now. */
  const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000).toISOString();
  return { jobs, sent, workflows, log, endStranded, deps, store, at };
}

describe('sweepStartRecords (the start sweeper)', () => {
  it('starts again a job still queued two minutes after its start was recorded and never confirmed: drops a long job\'s record, watches a workflow', async () => {
    const w = world(2.5);
    await w.store('job_long', 'queued', { via: 'render-queue' });
    await w.store('job_bulk', 'queued', { via: 'workflow', workflow: 'bulk' }, 'bulk');
    expect(await sweepStartRecords(w.deps)).toEqual({ sent: 2, watched: 0, cleared: 0, ended: 0, failed: 0 });
    expect(w.sent).toEqual([{ job_id: 'job_long' }]);
    // The execution is named after the job: a start that did go out after all is not run twice.
    expect(w.workflows.started).toEqual([{ workflow: 'bulk', input: { job_id: 'job_bulk', account_id: 'acct1' } }]);
    expect(w.workflows.names).toEqual(['job_bulk']);
    expect([...w.jobs.starts.values()]).toEqual([expect.objectContaining({ job_id: 'job_bulk', due_at: w.at(10) })]);
    expect(w.endStranded).not.toHaveBeenCalled();
    expect(w.log).toHaveBeenCalledWith(expect.stringContaining('job_long'));
  });

  it('leaves younger records alone: their writer may still be sending', async () => {
    const w = world(1.5);
    await w.store('job_long', 'queued', { via: 'render-queue' });
    expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 0, failed: 0 });
    expect(w.sent).toEqual([]);
    expect(w.jobs.starts.size).toBe(1);
  });

  it('only drops the record of a job that went on (its start did go out) or ended', async () => {
    const w = world(5);
    await w.store('job_running', 'processing', { via: 'render-queue' });
    await w.store('job_failed', 'failed', { via: 'workflow', workflow: 'pdfop' });
    await w.jobs.put(newJob({ job_id: 'job_gone', account_id: 'acct1', job_type: 'long', status: 'queued', now: written }), [], { via: 'render-queue' });
    w.jobs.jobs.delete('job_gone');
    expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 3, ended: 0, failed: 0 });
    expect([w.sent, w.workflows.started, w.jobs.starts.size]).toEqual([[], [], 0]);
  });

  it('ends a job still processing under an expired lease through endAbandoned, and keeps the watch of one a worker holds', async () => {
    const w = world(20);
    const endAbandoned = jest.fn(async () => true);
    const now = new Date(written.getTime() + 20 * 60_000);
    const lease = (minutes: number) => new Date(now.getTime() + minutes * 60_000).toISOString();
    // Both watches are due (written with leases that have run out); job_held has been claimed again since.
    await w.jobs.put({ ...newJob({ job_id: 'job_dead', account_id: 'acct1', job_type: 'long', status: 'processing', now: written }), lease_until: lease(-5) }, [], { via: 'render-queue' });
    await w.jobs.put({ ...newJob({ job_id: 'job_held', account_id: 'acct1', job_type: 'long', status: 'processing', now: written }), lease_until: lease(-5) }, [], { via: 'render-queue' });
    w.jobs.jobs.set('job_held', { ...w.jobs.jobs.get('job_held')!, lease_until: lease(10) });
    expect(await sweepStartRecords({ ...w.deps, endAbandoned })).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 1, failed: 0 });
    expect(endAbandoned).toHaveBeenCalledTimes(1);
    expect(endAbandoned).toHaveBeenCalledWith(expect.objectContaining({ job_id: 'job_dead' }));
    expect([...w.jobs.starts.keys()]).toEqual(['job_held']);
    expect(w.sent).toEqual([]);
  });

  it("keeps the watch a worker's claim wrote while the start was being sent again: only the record as read is dropped", async () => {
    const w = world(5);
    await w.store('job_long', 'queued', { via: 'render-queue' });
    const leaseUntil = w.at(15);
    // The resent message is taken at once: the claim re-arms the record as its watch, due at the lease's end.
    w.deps.renderQueue.send = async (m: RenderJobMessage) => {
      w.sent.push(m);
      const queued = (await w.jobs.get(m.job_id))!;
      expect(await w.jobs.putIf({ ...queued, status: 'processing', lease_until: leaseUntil }, ['queued'], [], undefined, { via: 'render-queue' })).toBe(true);
    };
    expect(await sweepStartRecords(w.deps)).toEqual({ sent: 1, watched: 0, cleared: 0, ended: 0, failed: 0 });
    expect(w.jobs.starts.get('job_long')).toMatchObject({ due_at: leaseUntil });
  });

  it('keeps the watch of a job whose lease ends at this very instant (a claim may take it over only after)', async () => {
    const w = world(20);
    const endAbandoned = jest.fn(async () => true);
    await w.jobs.put({ ...newJob({ job_id: 'job_edge', account_id: 'acct1', job_type: 'long', status: 'processing', now: written }), lease_until: w.at(-5) }, [], { via: 'render-queue' });
    w.jobs.jobs.set('job_edge', { ...w.jobs.jobs.get('job_edge')!, lease_until: w.at(0) });
    expect(await sweepStartRecords({ ...w.deps, endAbandoned })).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 0, failed: 0 });
    expect(endAbandoned).not.toHaveBeenCalled();
    expect([...w.jobs.starts.keys()]).toEqual(['job_edge']);
  });

  it('keeps the record when the start fails again, for the next run, and goes on with the others', async () => {
    const w = world(5);
    await w.store('job_bulk', 'queued', { via: 'workflow', workflow: 'bulk' }, 'bulk');
    await w.store('job_long', 'queued', { via: 'render-queue' });
    w.workflows.fail = new Error('throttled');
    expect(await sweepStartRecords(w.deps)).toEqual({ sent: 1, watched: 0, cleared: 0, ended: 0, failed: 1 });
    expect([...w.jobs.starts.values()]).toEqual([expect.objectContaining({ job_id: 'job_bulk', due_at: written.toISOString() })]);
    expect(w.log).toHaveBeenCalledWith(expect.stringContaining('job_bulk'), w.workflows.fail);
    w.workflows.fail = null;
    expect(await sweepStartRecords(w.deps)).toEqual({ sent: 1, watched: 0, cleared: 0, ended: 0, failed: 0 });
    expect([...w.jobs.starts.values()]).toEqual([expect.objectContaining({ job_id: 'job_bulk', due_at: w.at(10) })]);
  });

  describe('workflow-run jobs (bulk, merge/split)', () => {
    /** A job whose workflow started, its record a watch due `dueMinutes` from the sweeper's now. */
    async function watched(w: ReturnType<typeof world>, id: string, status: 'queued' | 'processing', dueMinutes: number) {
      await w.store(id, status, { via: 'workflow', workflow: 'pdfop' }, 'bulk');
      expect(await w.jobs.watchStart(id, written.toISOString(), w.at(dueMinutes))).toBe(true);
    }

    it('looks again in ten minutes while the execution runs (also one a restart resumed), and leaves watches not due yet', async () => {
      const w = world(30);
      await watched(w, 'job_running', 'processing', -3);
      await watched(w, 'job_young', 'processing', -1);
      w.workflows.statuses.set('job_running', 'RUNNING');
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 1, cleared: 0, ended: 0, failed: 0 });
      expect(w.jobs.starts.get('job_running')).toMatchObject({ due_at: w.at(10) });
      expect(w.jobs.starts.get('job_young')).toMatchObject({ due_at: w.at(-1) });
      expect([w.endStranded.mock.calls, w.workflows.started]).toEqual([[], []]);
    });

    it('ends, through the workflow\'s failure recorder, a job its execution left unfinished, and drops the record', async () => {
      const w = world(30);
      // Failed while the table could not be written: neither its RecordFailure state nor the report of its end got through.
      await watched(w, 'job_failed', 'processing', -3);
      w.workflows.statuses.set('job_failed', 'FAILED');
      // Started (its record is a watch), and no execution is found now: the local runner forgets ended executions.
      await watched(w, 'job_gone', 'queued', -3);
      // Never confirmed as started, but its execution exists and has ended (in AWS a repeated start would not run again).
      await w.store('job_closed', 'queued', { via: 'workflow', workflow: 'bulk' }, 'bulk');
      w.workflows.statuses.set('job_closed', 'TIMED_OUT');
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 3, failed: 0 });
      const calls = w.endStranded.mock.calls.map(([job, workflow, status]) => [job.job_id, workflow, status]);
      expect(calls.sort()).toEqual([
        ['job_closed', 'bulk', 'TIMED_OUT'],
        ['job_failed', 'pdfop', 'FAILED'],
        ['job_gone', 'pdfop', null],
      ]);
      expect(w.workflows.started).toEqual([]);
      expect(w.jobs.starts.size).toBe(0);
      expect(w.log).toHaveBeenCalledWith(expect.stringContaining('job_failed'));
    });

    it('keeps the record when the job cannot be ended now (the table is still down) or the status cannot be read', async () => {
      const w = world(30);
      await watched(w, 'job_failed', 'processing', -3);
      w.workflows.statuses.set('job_failed', 'FAILED');
      w.endStranded.mockRejectedValueOnce(new Error('throttled'));
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 0, failed: 1 });
      expect(w.jobs.starts.get('job_failed')).toMatchObject({ due_at: w.at(-3) });
      w.workflows.status = async () => {
        throw new Error('throttled');
      };
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 0, failed: 1 });
      expect(w.endStranded).toHaveBeenCalledTimes(1);
      expect(w.jobs.starts.size).toBe(1);
    });

    it('calls the failure recorder again for a failed job whose record is still there (its failure path stopped half-way), and keeps the record until that went through', async () => {
      const w = world(30);
      await watched(w, 'job_half', 'processing', -3);
      w.jobs.jobs.set('job_half', { ...w.jobs.jobs.get('job_half')!, status: 'failed' });
      w.workflows.status = jest.fn();
      w.endStranded.mockRejectedValueOnce(new Error('refund throttled'));
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 0, failed: 1 });
      expect(w.jobs.starts.size).toBe(1);
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 1, ended: 0, failed: 0 });
      expect(w.endStranded.mock.calls.map(([job, workflow, status]) => [job.job_id, workflow, status])).toEqual([
        ['job_half', 'pdfop', null],
        ['job_half', 'pdfop', null],
      ]);
      expect(w.jobs.starts.size).toBe(0);
      expect(w.workflows.status).not.toHaveBeenCalled();
    });

    it('sends a lost start at its first look, however many older watches on running jobs are due (each family has its own limit)', async () => {
      const w = world(30);
      for (let i = 0; i < 150; i++) {
        await watched(w, `job_run${i}`, 'processing', -20);
        w.workflows.statuses.set(`job_run${i}`, 'RUNNING');
      }
      const lost = newJob({ job_id: 'job_lost', account_id: 'acct1', job_type: 'long', status: 'queued', now: new Date(written.getTime() + 27 * 60_000) });
      await w.jobs.put(lost, [], { via: 'render-queue' });
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 1, watched: 100, cleared: 0, ended: 0, failed: 0 });
      expect(w.sent).toEqual([{ job_id: 'job_lost' }]);
    });

    it('drops the watch of a job that has finished without asking after its execution', async () => {
      const w = world(30);
      await watched(w, 'job_done', 'processing', -3);
      w.jobs.jobs.set('job_done', { ...w.jobs.jobs.get('job_done')!, status: 'completed' });
      w.workflows.status = jest.fn();
      expect(await sweepStartRecords(w.deps)).toEqual({ sent: 0, watched: 0, cleared: 1, ended: 0, failed: 0 });
      expect([w.jobs.starts.size, w.workflows.status]).toEqual([0, expect.any(Function)]);
      expect(w.workflows.status).not.toHaveBeenCalled();
    });
  });
});
