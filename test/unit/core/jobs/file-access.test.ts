import { jobFileDownloadLink, listJobFiles } from '../../../../functions/core/jobs/file-access';
import { newJob } from '../../../../functions/core/jobs/job';
import { rejection } from '../../../support/errors';
import { memoryWorld } from '../../../support/memory';

describe('jobFileDownloadLink', () => {
  it('hands out outputs of a completed job only, whatever a row of a failed one says', async () => {
    const w = memoryWorld();
    const now = new Date();
    const key = 'pdfop/acct1/job_f/0.pdf';
    await w.blobs.put(key, Buffer.from('%PDF'), 'application/pdf');
    const row = { index: 0, input: 'a.pdf', output: 'a-001.pdf', status: 'success' as const, pages: 1, error_code: null, error_message: null, key, size_bytes: 4, page_range: '1', warnings: [], expires_at: '2099-01-01T00:00:00.000Z' };
    await w.files.putAll('job_f', [row as never]);
    const base = newJob({ job_id: 'job_f', account_id: 'acct1', job_type: 'pdfop', status: 'completed', now });
    expect(await jobFileDownloadLink(w, base, '0')).toMatchObject({ file_index: 0, name: 'a-001.pdf' });
    expect(await rejection(jobFileDownloadLink(w, { ...base, status: 'failed' }, '0'))).toMatchObject({ code: 'FILE_NOT_FOUND' });
  });
});

describe('jobFileDownloadLink codes', () => {
  const key = 'pdfop/acct1/job_g/0.pdf';
  const row = { index: 0, input: 'a.pdf', output: 'a-001.pdf', status: 'success' as const, pages: 1, error_code: null, error_message: null, key, size_bytes: 4, page_range: '1', warnings: [], expires_at: '2026-11-28T12:00:00.000Z' };
  const base = newJob({ job_id: 'job_g', account_id: 'acct1', job_type: 'pdfop', status: 'completed', now: new Date('2026-11-21T12:00:00Z') });
  const at = (w: ReturnType<typeof memoryWorld>, iso: string) => ({ ...w, clock: { now: () => new Date(iso) } });

  it('refuses from the retention end itself, also while the file is still stored (OUTPUT_EXPIRED)', async () => {
    const w = memoryWorld();
    await w.blobs.put(key, Buffer.from('%PDF'), 'application/pdf');
    await w.files.putAll('job_g', [row as never]);
    expect(await jobFileDownloadLink(at(w, '2026-11-28T11:59:59.999Z'), base, '0')).toMatchObject({ file_index: 0 });
    expect(await rejection(jobFileDownloadLink(at(w, row.expires_at), base, '0'))).toMatchObject({ code: 'OUTPUT_EXPIRED', details: { expired_at: row.expires_at } });
  });

  it('answers OUTPUT_NOT_AVAILABLE for an output returned in the response and never stored', async () => {
    const w = memoryWorld();
    await w.files.putAll('job_g', [{ ...row, key: null } as never]);
    expect(await rejection(jobFileDownloadLink(at(w, '2026-11-22T00:00:00Z'), base, '0'))).toMatchObject({ code: 'OUTPUT_NOT_AVAILABLE', details: { job_id: 'job_g', file_index: 0 } });
  });
});

describe('listJobFiles', () => {
  it('shows no rows until the job has finished (spec: files is empty until then)', async () => {
    const w = memoryWorld();
    const row = { index: 0, input: 'a.html', output: 'a.pdf', status: 'success' as const, pages: 1, error_code: null, error_message: null, blocked_requests: 0, render_timeout: false, missing_assets: 0 };
    await w.files.putAll('job_h', [row]);
    const job = newJob({ job_id: 'job_h', account_id: 'acct1', job_type: 'bulk', status: 'processing', now: new Date() });
    expect(await listJobFiles(w, job)).toMatchObject({ status: 'processing', count: 0, files: [] });
    expect(await listJobFiles(w, { ...job, status: 'completed' })).toMatchObject({ count: 1, files: [expect.objectContaining({ input: 'a.html' })] });
  });
});
