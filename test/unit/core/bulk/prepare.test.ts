import { prepareBulkJob } from '../../../../functions/core/bulk/prepare';
import type { BulkRequest } from '../../../../functions/core/bulk/requests';
import { type BundleIndex, bulkKeys, bundleFileSize, bundleReader } from '../../../../functions/core/bulk/storage';
import { submitBulkJob } from '../../../../functions/core/bulk/submit';
import { parsePdfOptions } from '../../../../functions/core/render/options';
import { bulkWorld } from '../../../support/bulk-memory';
import { rawZip } from '../../../support/zips';

describe('prepareBulkJob', () => {
  it('indexes every file by its path, also names an object has already (__proto__, constructor)', async () => {
    const w = bulkWorld();
    const zip = rawZip([
      { name: 'index.html', data: '<p>i</p>' },
      { name: '__proto__', data: 'proto' },
      { name: 'constructor', data: 'ctor' },
    ]);
    const request: BulkRequest = { bundle_type: 'html', options: parsePdfOptions({}), input: { kind: 'zip', bytes: zip } };
    const { job_id } = await submitBulkJob(w.deps, { account: w.account, plan: w.plan, request });
    expect((await prepareBulkJob(w.deps, { job_id, account_id: w.account.account_id })).status).toBe('processing');
    const stored = await w.blobs.get(bulkKeys.index(w.account.account_id, job_id));
    const index = JSON.parse(stored!.toString('utf8')) as BundleIndex;
    expect(Object.keys(index.entries).sort()).toEqual(['__proto__', 'constructor', 'index.html']);
    expect(bundleFileSize(index, '__proto__')).toBe(5);
    expect((await bundleReader(w.blobs, index)('__proto__'))?.toString()).toBe('proto');
  });
  it("converts at most as many files as the plan's page budget: exactly that many are prepared, one more fails the job", async () => {
    for (const [count, status] of [[3, 'processing'], [4, 'failed']] as const) {
      const w = bulkWorld();
      w.plans.plans.set(w.plan.plan_id, { ...w.plan, max_bulk_pages_per_job: 3 });
      const zip = rawZip(Array.from({ length: count }, (_, i) => ({ name: `f${i}.html`, data: '<p>x</p>' })));
      const request: BulkRequest = { bundle_type: 'html', options: parsePdfOptions({}), input: { kind: 'zip', bytes: zip } };
      const { job_id } = await submitBulkJob(w.deps, { account: w.account, plan: w.plan, request });
      const prepared = await prepareBulkJob(w.deps, { job_id, account_id: w.account.account_id });
      expect(prepared).toMatchObject({ status, items: status === 'processing' ? [0, 1, 2] : [] });
      if (status === 'failed') expect(await w.jobs.get(job_id)).toMatchObject({ error_code: 'BULK_FILE_COUNT_EXCEEDED', file_count: 4 });
    }
  });
});
