import { newJob } from '../../../../functions/core/jobs/job';
import { newUploadKey, uploadClaimKind } from '../../../../functions/core/jobs/uploads';
import { releaseWorkflowJob } from '../../../../functions/core/workflows/release';
import { MemoryAccounts, MemoryBlobs, MemoryCommitments, MemoryJobs, MemorySlots } from '../../../support/memory';

function world() {
  const now = new Date('2026-11-23T12:00:00Z');
  const accounts = new MemoryAccounts();
  const deps = { jobs: new MemoryJobs(), blobs: new MemoryBlobs(), slots: new MemorySlots(), commitments: new MemoryCommitments(accounts), log: jest.fn() };
  const job = newJob({ job_id: 'job_1', account_id: 'acct', job_type: 'bulk', status: 'completed', now });
  const upload = newUploadKey('acct', 'bulk');
  const others = newUploadKey('other', 'bulk');
  return { now, deps, job, upload, others };
}

async function holdAll(w: ReturnType<typeof world>) {
  const { deps, job, upload, now } = w;
  await deps.slots.acquire({ accountId: 'acct', kind: 'bulk', jobId: job.job_id, max: 2, now, leaseSeconds: 60 });
  await deps.slots.acquire({ accountId: 'acct', kind: uploadClaimKind(upload), jobId: job.job_id, max: 1, now, leaseSeconds: 60 });
  for (const key of [upload, w.others, 'jobs/acct/job_1/request.json']) await deps.blobs.put(key, Buffer.from('x'), 'application/octet-stream');
}

describe('releaseWorkflowJob', () => {
  it("gives back the slot and the upload's claim, deletes the staged files and the account's own uploads, and ends the watch", async () => {
    const w = world();
    await holdAll(w);
    const sent = jest.spyOn(w.deps.jobs, 'startSent');
    await releaseWorkflowJob(w.deps, w.job, { slotKind: 'bulk', staged: ['jobs/acct/job_1/request.json'], inputs: [w.upload, w.others] });
    expect(w.deps.slots.held.size).toBe(0);
    // Another account's key is never deleted, whatever a request names.
    expect([...w.deps.blobs.objects.keys()]).toEqual([w.others]);
    expect(sent).toHaveBeenCalledWith('job_1');
  });

  it('keeps the uploads of a job that never started (the caller retries with them) but not their claims, and can keep the watch', async () => {
    const w = world();
    await holdAll(w);
    const sent = jest.spyOn(w.deps.jobs, 'startSent');
    await releaseWorkflowJob(w.deps, w.job, { slotKind: 'bulk', staged: ['jobs/acct/job_1/request.json'], inputs: [w.upload], keepUploads: true, keepWatch: true });
    expect(w.deps.slots.held.size).toBe(0);
    expect([...w.deps.blobs.objects.keys()].sort()).toEqual([w.upload, w.others].sort());
    expect(sent).not.toHaveBeenCalled();
  });

  it('never throws: each failure is logged and the rest still let go', async () => {
    const w = world();
    await holdAll(w);
    w.deps.commitments.release = async () => {
      throw new Error('table throttled');
    };
    w.deps.blobs.delete = async () => {
      throw new Error('storage down');
    };
    await expect(releaseWorkflowJob(w.deps, w.job, { slotKind: 'bulk', staged: ['jobs/acct/job_1/request.json'], inputs: [w.upload] })).resolves.toBeUndefined();
    expect(w.deps.slots.held.size).toBe(0);
    expect(w.deps.log.mock.calls.map((c) => c[0])).toEqual([
      'releasing the commitment of bulk job job_1',
      'deleting jobs/acct/job_1/request.json of bulk job job_1',
      `deleting ${w.upload} of bulk job job_1`,
    ]);
  });

  it('still lets go of the rest when its running slot cannot be given back (the slot goes at its lease)', async () => {
    const w = world();
    await holdAll(w);
    const release = w.deps.slots.release.bind(w.deps.slots);
    w.deps.slots.release = async (i) => {
      if (i.kind === 'bulk') throw new Error('table throttled');
      return release(i);
    };
    const sent = jest.spyOn(w.deps.jobs, 'startSent');
    await expect(releaseWorkflowJob(w.deps, w.job, { slotKind: 'bulk', staged: ['jobs/acct/job_1/request.json'], inputs: [w.upload] })).resolves.toBeUndefined();
    expect(sent).toHaveBeenCalledWith('job_1');
    expect([...w.deps.blobs.objects.keys()]).toEqual([w.others]);
    // Only the running slot stays held; the upload's claim is given back.
    expect([...w.deps.slots.held.keys()]).toEqual(['acct#bulk#0']);
    expect(w.deps.log.mock.calls.map((c) => c[0])).toEqual(['releasing the slot of bulk job job_1']);
  });
});
