import { failJob } from '../../../../functions/core/bulk/lifecycle';
import { bulkKeys } from '../../../../functions/core/bulk/storage';
import { completed, newJob } from '../../../../functions/core/jobs/job';
import { bulkWorld } from '../../../support/bulk-memory';

describe('failJob (bulk)', () => {
  it('leaves a job another task finished as it is: output, rows and status kept', async () => {
    const w = bulkWorld();
    const now = new Date();
    const outputKey = bulkKeys.output(w.account.account_id, 'job_done');
    const running = { ...newJob({ job_id: 'job_done', account_id: w.account.account_id, job_type: 'bulk', status: 'processing', now }), bundle_type: 'html' };
    const done = completed(running, now, { output: { key: outputKey, name: 'out.zip', content_type: 'application/zip', size_bytes: 3, expires_at: '2099-01-01T00:00:00.000Z' } });
    await w.jobs.put(done);
    await w.blobs.put(outputKey, Buffer.from('zip'), 'application/zip');
    await w.files.putAll('job_done', [{ index: 0, input: 'a.html', output: 'a.pdf', status: 'success', pages: 1, error_code: null, error_message: null, blocked_requests: 0, render_timeout: false, missing_assets: 0 }]);

    // A late failure of a task the workflow had given up on, holding the job as it read it (processing).
    const after = await failJob(w.deps, running, 'INTERNAL_SERVER_ERROR', 'Processing failed.');
    expect(after).toMatchObject({ status: 'completed' });
    expect(await w.blobs.head(outputKey)).not.toBeNull();
    expect(await w.files.list('job_done')).toHaveLength(1);
    expect(w.jobs.events.map((e) => e.event)).not.toContain('bulk.job.failed');
  });

  it('fails a running job: no output, no rows, bulk.job.failed', async () => {
    const w = bulkWorld();
    const running = { ...newJob({ job_id: 'job_run', account_id: w.account.account_id, job_type: 'bulk', status: 'processing', now: new Date() }), bundle_type: 'html', file_count: 2 };
    await w.jobs.put(running);
    await w.blobs.put(bulkKeys.output(w.account.account_id, 'job_run'), Buffer.from('partial'), 'application/zip');
    await w.files.putAll('job_run', [{ index: 0, input: 'a.html', output: 'a.pdf', status: 'success', pages: 1, error_code: null, error_message: null, blocked_requests: 0, render_timeout: false, missing_assets: 0 }]);
    const after = await failJob(w.deps, running, 'BULK_ZIP_INVALID', 'The archive could not be read.');
    expect(after).toMatchObject({ status: 'failed', error_code: 'BULK_ZIP_INVALID', failure_count: 2, output: null });
    expect(await w.blobs.head(bulkKeys.output(w.account.account_id, 'job_run'))).toBeNull();
    expect(await w.files.list('job_run')).toEqual([]);
    expect(w.jobs.events.map((e) => e.event)).toEqual(['bulk.job.failed']);
  });

  it('fails a running job asked to cancel when the failure is not a refusal before any file (Finish, RecordFailure): failed, the request kept', async () => {
    const w = bulkWorld();
    const running = { ...newJob({ job_id: 'job_cx', account_id: w.account.account_id, job_type: 'bulk', status: 'processing', now: new Date() }), bundle_type: 'html', file_count: 1, cancel_requested: true };
    await w.jobs.put(running);
    const after = await failJob(w.deps, running, 'INTERNAL_SERVER_ERROR', 'The job failed on our side.');
    expect(after).toMatchObject({ status: 'failed', error_code: 'INTERNAL_SERVER_ERROR', cancel_requested: true });
    expect(w.jobs.events.map((e) => e.event)).toEqual(['bulk.job.failed']);
  });

  it("keeps the start sweeper's watch when the refund fails, so the failure recorder is called again until it goes through", async () => {
    const w = bulkWorld();
    const running = { ...newJob({ job_id: 'job_rf', account_id: w.account.account_id, job_type: 'bulk', status: 'processing', now: new Date() }), bundle_type: 'html', file_count: 1 };
    await w.jobs.put(running, [], { via: 'workflow', workflow: 'bulk' });
    jest.spyOn(w.deps.billing, 'refundJob').mockRejectedValueOnce(new Error('ledger unavailable'));
    await expect(failJob(w.deps, running, 'INTERNAL_SERVER_ERROR', 'The job failed on our side.')).rejects.toThrow('ledger unavailable');
    expect(await w.jobs.get('job_rf')).toMatchObject({ status: 'failed' });
    expect(w.jobs.starts.has('job_rf')).toBe(true);
    expect(w.slots.held.size).toBe(0);
  });
});
