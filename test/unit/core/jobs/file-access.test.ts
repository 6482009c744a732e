import { jobFileDownloadLink } from '../../../../functions/core/jobs/file-access';
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
