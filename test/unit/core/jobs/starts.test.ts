import { newJob } from '../../../../functions/core/jobs/job';
import { sendUnsentStarts } from '../../../../functions/core/jobs/starts';
import type { RenderJobMessage } from '../../../../functions/core/jobs/queue';
import { MemoryJobs, RecordingWorkflows } from '../../../support/memory';

const written = new Date('2026-11-22T10:00:00Z');

function world(minutesLater: number) {
  const jobs = new MemoryJobs();
  const sent: RenderJobMessage[] = [];
  const workflows = new RecordingWorkflows();
  const log = jest.fn();
  const deps = { jobs, renderQueue: { send: async (m: RenderJobMessage) => void sent.push(m) }, workflows, clock: { now: () => new Date(written.getTime() + minutesLater * 60_000) }, log };
  const store = (id: string, status: 'queued' | 'processing' | 'failed', start: Parameters<MemoryJobs['put']>[2], type: 'long' | 'bulk' = 'long') =>
    jobs.put(newJob({ job_id: id, account_id: 'acct1', job_type: type, status, now: written }), [], start);
  return { jobs, sent, workflows, log, deps, store };
}

describe('sendUnsentStarts (the start sweeper)', () => {
  it('starts again a job still queued two minutes after its start was recorded and never confirmed, and drops the record', async () => {
    const w = world(2.5);
    await w.store('job_long', 'queued', { via: 'render-queue' });
    await w.store('job_bulk', 'queued', { via: 'workflow', workflow: 'bulk' }, 'bulk');
    expect(await sendUnsentStarts(w.deps)).toEqual({ sent: 2, cleared: 0, ended: 0, failed: 0 });
    expect(w.sent).toEqual([{ job_id: 'job_long' }]);
    // The execution is named after the job: a start that did go out after all is not run twice.
    expect(w.workflows.started).toEqual([{ workflow: 'bulk', input: { job_id: 'job_bulk', account_id: 'acct1' } }]);
    expect(w.workflows.names).toEqual(['job_bulk']);
    expect(w.jobs.starts.size).toBe(0);
    expect(w.log).toHaveBeenCalledWith(expect.stringContaining('job_long'));
  });

  it('leaves younger records alone: their writer may still be sending', async () => {
    const w = world(1.5);
    await w.store('job_long', 'queued', { via: 'render-queue' });
    expect(await sendUnsentStarts(w.deps)).toEqual({ sent: 0, cleared: 0, ended: 0, failed: 0 });
    expect(w.sent).toEqual([]);
    expect(w.jobs.starts.size).toBe(1);
  });

  it('only drops the record of a job that went on (its start did go out) or ended', async () => {
    const w = world(5);
    await w.store('job_running', 'processing', { via: 'render-queue' });
    await w.store('job_failed', 'failed', { via: 'workflow', workflow: 'pdfop' });
    await w.jobs.put(newJob({ job_id: 'job_gone', account_id: 'acct1', job_type: 'long', status: 'queued', now: written }), [], { via: 'render-queue' });
    w.jobs.jobs.delete('job_gone');
    expect(await sendUnsentStarts(w.deps)).toEqual({ sent: 0, cleared: 3, ended: 0, failed: 0 });
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
    expect(await sendUnsentStarts({ ...w.deps, endAbandoned })).toEqual({ sent: 0, cleared: 0, ended: 1, failed: 0 });
    expect(endAbandoned).toHaveBeenCalledTimes(1);
    expect(endAbandoned).toHaveBeenCalledWith(expect.objectContaining({ job_id: 'job_dead' }));
    expect([...w.jobs.starts.keys()]).toEqual(['job_held']);
    expect(w.sent).toEqual([]);
  });

  it('keeps the record when the start fails again, for the next run, and goes on with the others', async () => {
    const w = world(5);
    await w.store('job_bulk', 'queued', { via: 'workflow', workflow: 'bulk' }, 'bulk');
    await w.store('job_long', 'queued', { via: 'render-queue' });
    w.workflows.fail = new Error('throttled');
    expect(await sendUnsentStarts(w.deps)).toEqual({ sent: 1, cleared: 0, ended: 0, failed: 1 });
    expect([...w.jobs.starts.keys()]).toEqual(['job_bulk']);
    expect(w.log).toHaveBeenCalledWith(expect.stringContaining('job_bulk'), w.workflows.fail);
    w.workflows.fail = null;
    expect(await sendUnsentStarts(w.deps)).toEqual({ sent: 1, cleared: 0, ended: 0, failed: 0 });
    expect(w.jobs.starts.size).toBe(0);
  });
});
