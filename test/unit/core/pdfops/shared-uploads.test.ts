import { bulkKeys } from '../../../../functions/core/bulk/storage';
import { submitBulkJob } from '../../../../functions/core/bulk/submit';
import type { BulkRequest } from '../../../../functions/core/bulk/requests';
import { newUlid } from '../../../../functions/core/ids';
import { objectKey } from '../../../../functions/core/jobs/storage-layout';
import { parsePdfOptions } from '../../../../functions/core/render/options';
import { type PdfJobDeps, processPdfJob, submitPdfJob } from '../../../../functions/core/pdfops/background';
import { parsePdfJobRequest } from '../../../../functions/core/pdfops/requests';
import { bulkWorld } from '../../../support/bulk-memory';
import { rejection } from '../../../support/errors';
import { memoryWorld } from '../../../support/memory';
import { simplePdf } from '../../../support/pdf-fixtures';
import { rawZip } from '../../../support/zips';

type World = ReturnType<typeof memoryWorld>;
const deps = (w: World): PdfJobDeps => ({ ...w });
async function upload(w: World, bytes: Uint8Array) {
  const key = objectKey('uploads', w.account.account_id, 'pdf', `${newUlid()}.pdf`);
  await w.blobs.put(key, bytes, 'application/pdf');
  return key;
}
const submit = (w: World, body: unknown) => submitPdfJob(deps(w), { account: w.account, plan: w.plan, request: parsePdfJobRequest(body) });
const split = (key: string, pages = '1') => ({ operation: 'split', inputs: [{ s3_key: key, filename: 's.pdf' }], split: { mode: 'extract', pages } });

let three: Uint8Array;
beforeAll(async () => {
  three = await simplePdf(3, { label: 'T' });
});

describe('one upload given to several jobs', () => {
  it('refuses a second job while the first holds the upload (404 UPLOAD_NOT_FOUND naming that job), and takes nothing for it', async () => {
    const w = memoryWorld();
    const k = await upload(w, three);
    const first = await submit(w, split(k));
    const err = await rejection(submit(w, split(k)));
    expect(err).toMatchObject({ code: 'UPLOAD_NOT_FOUND', details: { s3_key: k, filename: 's.pdf', input_index: 0, reason: 'in_use', job_id: first.job_id } });
    expect(err.message).toContain('POST /pdf/upload-url');
    expect(w.jobs.jobs.size).toBe(1);
    expect(Object.keys((await w.accounts.get('acct1'))!.commitments ?? {})).toEqual([first.job_id]);
    expect(await processPdfJob(deps(w), { job_id: first.job_id })).toMatchObject({ status: 'completed' });
    // Once it has ended the upload is gone, as before.
    expect((await rejection(submit(w, split(k)))).code).toBe('UPLOAD_NOT_FOUND');
  });

  it('a failing job can no longer take down another job that was given the same upload', async () => {
    const w = memoryWorld();
    const k = await upload(w, three);
    const mine = await upload(w, three);
    await submit(w, split(k, '9')); // fails when it runs: PAGE_OUT_OF_RANGE
    expect((await rejection(submit(w, { operation: 'merge', inputs: [{ s3_key: mine, filename: 'mine.pdf' }, { s3_key: k, filename: 's.pdf' }] }))).details).toMatchObject({ reason: 'in_use', input_index: 1 });
    // The refused merge left its other upload and claims alone: it can be used at once.
    expect(await w.blobs.head(mine)).not.toBeNull();
    const ok = await submit(w, { operation: 'merge', inputs: [{ s3_key: mine, filename: 'mine.pdf' }, { s3_key: mine, filename: 'again.pdf' }] });
    expect(await processPdfJob(deps(w), { job_id: ok.job_id })).toMatchObject({ status: 'completed' });
  });

  it('frees the uploads of a job that could not start, for the retry the answer promised', async () => {
    const w = memoryWorld();
    const k = await upload(w, three);
    w.workflows.fail = new Error('throttled');
    expect((await rejection(submit(w, split(k)))).code).toBe('SERVICE_UNAVAILABLE');
    w.workflows.fail = null;
    const retry = await submit(w, split(k));
    expect(await processPdfJob(deps(w), { job_id: retry.job_id })).toMatchObject({ status: 'completed' });
  });

  it('frees the claims of a submission refused after taking them (credits, slots)', async () => {
    const w = memoryWorld();
    const busy = [await submit(w, split(await upload(w, three))), await submit(w, split(await upload(w, three)))];
    const k = await upload(w, three);
    expect((await rejection(submit(w, split(k)))).code).toBe('PDF_JOB_ALREADY_ACTIVE');
    await processPdfJob(deps(w), { job_id: busy[0].job_id });
    await submit(w, split(k));
  });

  it('bulk: a second job with the same uploaded ZIP is refused while the first holds it', async () => {
    const w = bulkWorld();
    const key = bulkKeys.upload(w.account.account_id);
    await w.blobs.put(key, rawZip([{ name: 'a.html', data: '<p>a</p>' }]), 'application/zip');
    const request: BulkRequest = { bundle_type: 'html', options: parsePdfOptions({}), input: { kind: 's3', key } };
    const first = await submitBulkJob(w.deps, { account: w.account, plan: w.plan, request });
    expect(await rejection(submitBulkJob(w.deps, { account: w.account, plan: w.plan, request }))).toMatchObject({ code: 'UPLOAD_NOT_FOUND', details: { reason: 'in_use', job_id: first.job_id } });
    expect(w.jobs.jobs.size).toBe(1);
  });
});
