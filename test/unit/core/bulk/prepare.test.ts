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
});
