import { jobDownloadLink, loadOwnJob, presentJob, signedLink } from '../../../../functions/core/jobs/access';
import { rejection } from '../../../support/errors';
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

  it('shows a merge/split job its progress (output_count, processed_count) while queued or processing, not once it ended', async () => {
    const base = { ...newJob({ job_id: 'job_p', account_id: 'acc', job_type: 'pdfop', status: 'queued', now }), operation: 'split' as const, output_count: 4, processed_count: 1 };
    for (const status of ['queued', 'processing'] as const) expect(await presentJob(deps, { ...base, status })).toMatchObject({ output_count: 4, processed_count: 1 });
    const done = await presentJob(deps, { ...base, status: 'completed', processed_count: 4, outputs_produced: 4 });
    expect(done).toMatchObject({ outputs_produced: 4 });
    expect(done).not.toHaveProperty('output_count');
  });

  it('gives pages as a number also when no PDF was made (a failed, queued or timed-out job: 0)', async () => {
    for (const status of ['queued', 'processing', 'failed', 'timeout'] as const) {
      const job = newJob({ job_id: 'job_f', account_id: 'acc', job_type: 'quick', status, mode: 'html', now });
      expect((await presentJob(deps, job)).pages).toBe(0);
    }
  });
});

describe('presentJob s3_url', () => {
  const output = { key: 'outputs/acc/job_s/job_s.pdf', name: 'job_s.pdf', content_type: 'application/pdf', size_bytes: 4, expires_at: '2026-12-21T12:00:00.000Z' };
  const job = { ...newJob({ job_id: 'job_s', account_id: 'acc', job_type: 'quick', status: 'completed', mode: 'html', now }), output };

  it('links the stored output while it is kept', async () => {
    const blobs = new MemoryBlobs();
    await blobs.put(output.key, new Uint8Array([1, 2, 3, 4]), 'application/pdf');
    const body = await presentJob({ ...deps, blobs }, job);
    expect(body.s3_url).toEqual(expect.any(String));
    expect(body.s3_url_expires_at).toBe('2026-11-21T13:00:00.000Z');
  });

  it('offers no link from the retention end itself, though the file may not be deleted yet (the download refuses then too)', async () => {
    const blobs = new MemoryBlobs();
    await blobs.put(output.key, new Uint8Array([1, 2, 3, 4]), 'application/pdf');
    const at = (iso: string) => presentJob({ ...deps, blobs, clock: { now: () => new Date(iso) } }, job);
    expect(await at('2026-12-21T11:59:59.999Z')).toHaveProperty('s3_url');
    expect(await at(output.expires_at)).not.toHaveProperty('s3_url');
  });

  it('offers no link once the stored file is gone, before its retention ends too', async () => {
    const body = await presentJob({ ...deps, blobs: new MemoryBlobs() }, job);
    expect(body).not.toHaveProperty('s3_url');
    expect(body).not.toHaveProperty('s3_url_expires_at');
  });
});

describe('jobDownloadLink without stored output', () => {
  const base = (changes: object) => ({ ...newJob({ job_id: 'job_n', account_id: 'acc', job_type: 'long', status: 'completed', mode: 'html', now }), ...changes });

  it('says why: a failed job, a quick job without store', async () => {
    const failedBulk = await rejection(jobDownloadLink(deps, base({ job_type: 'bulk', status: 'failed', error_code: 'BULK_ALL_FILES_FAILED' })));
    expect(failedBulk).toMatchObject({ code: 'OUTPUT_NOT_AVAILABLE', details: { job_id: 'job_n', status: 'failed' } });
    expect(failedBulk.message).toMatch(/ended failed with BULK_ALL_FILES_FAILED/);
    expect(failedBulk.message).not.toMatch(/Quick jobs/);
    expect((await rejection(jobDownloadLink(deps, base({ status: 'timeout' })))).message).toMatch(/ended timeout/);
    expect((await rejection(jobDownloadLink(deps, base({ job_type: 'quick' })))).message).toMatch(/"store": true/);
  });
});

describe('signedLink', () => {
  it('signs for one hour, under the given download name, and says when the link expires', async () => {
    const calls: unknown[] = [];
    const blobs = {
      signedGetUrl: async (key: string, opts: { expiresInSeconds: number; filename?: string }) => {
        calls.push([key, opts]);
        return `https://signed.example/${key}`;
      },
    };
    expect(await signedLink({ blobs, clock: { now: () => now } }, 'outputs/acc/j/j.pdf', 'Report.pdf')).toEqual({
      url: 'https://signed.example/outputs/acc/j/j.pdf',
      expiresAt: '2026-11-21T13:00:00.000Z',
    });
    expect(calls).toEqual([['outputs/acc/j/j.pdf', { expiresInSeconds: 3600, filename: 'Report.pdf' }]]);
  });

  it('says the second the link stops working, never later: the signature is dated to the whole second', async () => {
    const blobs = { signedGetUrl: async (key: string) => `https://signed.example/${key}` };
    const late = new Date('2026-11-21T12:00:00.987Z');
    expect((await signedLink({ blobs, clock: { now: () => late } }, 'outputs/acc/j/j.pdf', undefined)).expiresAt).toBe('2026-11-21T13:00:00.000Z');
  });
});

describe('jobDownloadLink for a stored output', () => {
  const output = { key: 'outputs/acc/job_d/job_d.pdf', name: 'job_d.pdf', content_type: 'application/pdf', size_bytes: 4, expires_at: '2026-12-21T12:00:00.000Z' };
  const job = { ...newJob({ job_id: 'job_d', account_id: 'acc', job_type: 'quick', status: 'completed', mode: 'html', now }), output };

  it('tells a file removed before its retention ended from one deleted after it', async () => {
    const removed = await rejection(jobDownloadLink({ ...deps, blobs: new MemoryBlobs() }, job));
    expect(removed).toMatchObject({ code: 'OUTPUT_EXPIRED', details: { job_id: 'job_d', expired_at: null, reason: 'removed' } });
    expect(removed.message).toMatch(/before its retention period ended/);
    const late = await rejection(jobDownloadLink({ ...deps, blobs: new MemoryBlobs(), clock: { now: () => new Date('2027-01-01T00:00:00Z') } }, job));
    expect(late).toMatchObject({ code: 'OUTPUT_EXPIRED', details: { expired_at: '2026-12-21T12:00:00.000Z' } });
  });

  it('refuses from the retention end itself, also while the file is still stored (its deletion may lag)', async () => {
    const blobs = new MemoryBlobs();
    await blobs.put(output.key, new Uint8Array([1, 2, 3, 4]), 'application/pdf');
    const at = (iso: string) => jobDownloadLink({ ...deps, blobs, clock: { now: () => new Date(iso) } }, job);
    expect((await at('2026-12-21T11:59:59.999Z')).download_url).toEqual(expect.any(String));
    expect(await rejection(at(output.expires_at))).toMatchObject({ code: 'OUTPUT_EXPIRED', details: { expired_at: output.expires_at } });
  });
});

describe('loadOwnJob', () => {
  it("refuses another account's job as unknown, saying where the caller's own jobs are", async () => {
    const jobs = new MemoryJobs();
    await jobs.put(newJob({ job_id: 'job_o', account_id: 'other', job_type: 'quick', status: 'completed', mode: 'html', now }));
    const err = await rejection(loadOwnJob(jobs, 'acc', 'job_o'));
    expect(err).toMatchObject({ code: 'JOB_NOT_FOUND', details: { job_id: 'job_o' } });
    expect(err.message).toMatch(/GET \/jobs .* lists this account's jobs/);
  });
});

describe('jobDownloadLink: which code answers first', () => {
  const output = { key: 'outputs/acc/job_b/job_b.zip', name: 'job_b.zip', content_type: 'application/zip', size_bytes: 3, expires_at: '2026-12-21T12:00:00.000Z' };
  const bulk = { ...newJob({ job_id: 'job_b', account_id: 'acc', job_type: 'bulk', status: 'processing', now }), output };

  it('answers JOB_NOT_READY for a job still queued or processing, whatever its output says', async () => {
    for (const status of ['queued', 'processing'] as const) {
      expect(await rejection(jobDownloadLink(deps, { ...bulk, status }))).toMatchObject({ code: 'JOB_NOT_READY', details: { job_id: 'job_b', status } });
    }
  });

  it('links the PDFs a bulk job made before it was cancelled (cancelled keeps its output)', async () => {
    const blobs = new MemoryBlobs();
    await blobs.put(output.key, Buffer.from('zip'), 'application/zip');
    const link = await jobDownloadLink({ ...deps, blobs }, { ...bulk, status: 'cancelled' });
    expect(link).toMatchObject({ job_id: 'job_b', content_type: 'application/zip', size_bytes: 3 });
  });
});
