import { presentJob } from '../../../../functions/core/jobs/access';
import { newJob } from '../../../../functions/core/jobs/job';
import { MemoryBlobs, MemoryJobs } from '../../../support/memory';

const now = new Date('2026-11-21T12:00:00Z');
const deps = { jobs: new MemoryJobs(), blobs: new MemoryBlobs(), clock: { now: () => now } };

describe('presentJob (GET /jobs/{job_id})', () => {
  it("gives a bulk job's page count as pages, like pages_total (0 until its PDFs are counted)", async () => {
    const base = { ...newJob({ job_id: 'job_b', account_id: 'acc', job_type: 'bulk', status: 'processing', now }), bundle_type: 'html' };
    expect(await presentJob(deps, base)).toMatchObject({ pages: 0, pages_total: 0 });
    const done = { ...base, status: 'completed' as const, file_count: 3, success_count: 3, failure_count: 0, pages_total: 7 };
    expect(await presentJob(deps, done)).toMatchObject({ pages: 7, pages_total: 7 });
  });

  it('keeps the pages of other job types as stored', async () => {
    const quick = { ...newJob({ job_id: 'job_q', account_id: 'acc', job_type: 'quick', status: 'completed', mode: 'html', now }), pages: 2 };
    const body = await presentJob(deps, quick);
    expect(body.pages).toBe(2);
    expect(body).not.toHaveProperty('pages_total');
  });
});
