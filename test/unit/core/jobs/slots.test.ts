import { newJob } from '../../../../functions/core/jobs/job';
import { UNRECORDED_SLOT_GRACE_MS, acquireSlot } from '../../../../functions/core/jobs/slots';
import { MemoryJobs, MemorySlots } from '../../../support/memory';

describe('acquireSlot', () => {
  const now = new Date('2026-11-22T10:00:00Z');
  const input = (jobId: string) => ({ accountId: 'acct1', kind: 'bulk', jobId, max: 2, now, leaseSeconds: 7_800 });

  it("frees the slot of a finished job whose release failed, but not one of a running job or of a job still being written", async () => {
    const jobs = new MemoryJobs();
    const slots = new MemorySlots();
    const deps = { jobs, slots };
    // job_done finished, but its slot was never given back (its release failed).
    await jobs.put({ ...newJob({ job_id: 'job_done', account_id: 'acct1', job_type: 'bulk', status: 'completed', now }) });
    expect(await acquireSlot(deps, input('job_done'))).toBe(true);
    // job_new holds the other slot: its submission has not written the job yet.
    expect(await acquireSlot(deps, input('job_new'))).toBe(true);
    expect(await acquireSlot(deps, input('job_third'))).toBe(true);
    expect([...slots.held.values()].sort()).toEqual(['job_new', 'job_third']);
    // Now both holders are unfinished (one running, one not written): nothing is freed.
    await jobs.put({ ...newJob({ job_id: 'job_third', account_id: 'acct1', job_type: 'bulk', status: 'processing', now }) });
    expect(await acquireSlot(deps, input('job_fourth'))).toBe(false);
    expect([...slots.held.values()].sort()).toEqual(['job_new', 'job_third']);
  });

  it('frees the slot of a job that ended any way (failed, timed out, cancelled, partial), not only completed', async () => {
    for (const status of ['failed', 'timeout', 'cancelled', 'partial_failed'] as const) {
      const jobs = new MemoryJobs();
      const slots = new MemorySlots();
      const deps = { jobs, slots };
      expect(await acquireSlot(deps, input('job_a'))).toBe(true);
      expect(await acquireSlot(deps, input('job_b'))).toBe(true);
      await jobs.put({ ...newJob({ job_id: 'job_a', account_id: 'acct1', job_type: 'bulk', status, now }) });
      await jobs.put({ ...newJob({ job_id: 'job_b', account_id: 'acct1', job_type: 'bulk', status: 'processing', now }) });
      expect(await acquireSlot(deps, input('job_c'))).toBe(true);
      expect([...slots.held.values()].sort()).toEqual(['job_b', 'job_c']);
    }
  });

  it('frees the slot of a job never written once it was taken longer ago than any submission runs (UNRECORDED_SLOT_GRACE_MS)', async () => {
    const jobs = new MemoryJobs();
    const slots = new MemorySlots();
    const deps = { jobs, slots };
    const earlier = new Date(now.getTime() - UNRECORDED_SLOT_GRACE_MS - 1000);
    // Its submission stopped between taking the slot and writing the job.
    expect(await acquireSlot(deps, { ...input('job_lost'), now: earlier })).toBe(true);
    expect(await acquireSlot(deps, input('job_new'))).toBe(true);
    expect(await acquireSlot(deps, input('job_third'))).toBe(true);
    expect([...slots.held.values()].sort()).toEqual(['job_new', 'job_third']);
  });
});
