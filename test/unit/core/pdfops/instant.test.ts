import { listJobFiles } from '../../../../functions/core/jobs/file-access';
import { parseFilenamePattern } from '../../../../functions/core/pdf/filenames';
import { parsePageRange } from '../../../../functions/core/pdf/page-ranges';
import { runInstantOp } from '../../../../functions/core/pdfops/instant';
import type { MergeRequest, SplitRequest } from '../../../../functions/core/pdfops/requests';
import { simplePdf } from '../../../support/pdf-fixtures';
import { rejection } from '../../../support/errors';
import { memoryWorld } from '../../../support/memory';

let six: Uint8Array;
let sixty: Uint8Array;
beforeAll(async () => {
  six = await simplePdf(6);
  sixty = await simplePdf(60);
});

const split = (bytes: Uint8Array, store = false): SplitRequest => ({
  input: { bytes, filename: 'doc.pdf', index: 0 },
  split: { mode: 'every_n', every_n: 2 },
  pattern: parseFilenamePattern(undefined),
  store,
});
const merge = (store = false): MergeRequest => ({
  inputs: [
    { bytes: six, filename: 'a.pdf', index: 0, pages: parsePageRange('1-2') },
    { bytes: sixty, filename: 'b.pdf', index: 1, pages: null },
  ],
  store,
});

function deps(w: ReturnType<typeof memoryWorld>, timeoutSeconds?: number) {
  return { jobs: w.jobs, files: w.files, blobs: w.blobs, billing: w.billing, clock: w.clock, timeoutSeconds };
}


describe('instant merge/split', () => {
  it('stores a multi-file split with its ZIP and rows, completes the job and charges once at the page band', async () => {
    const w = memoryWorld();
    const result = await runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'split', request: split(six) });
    expect(result.direct).toBeNull();
    expect(result.stored).toMatchObject({ operation: 'pdf_split', status: 'completed', input_pages: 6, output_count: 3, warnings: [] });
    expect((result.stored!.zip_url as string).endsWith('outputs.zip')).toBe(true);
    expect([...w.blobs.objects.keys()].map((k) => k.split('/').pop())).toEqual(['000.pdf', '001.pdf', '002.pdf', 'outputs.zip']);
    expect(await w.files.list(result.job.job_id)).toHaveLength(3);
    const job = await w.jobs.get(result.job.job_id);
    expect(job).toMatchObject({ status: 'completed', job_type: 'pdfop', operation: 'split', split_mode: 'every_n', input_files: 1, input_pages: 6, outputs_produced: 3 });
    expect([...w.chargeStore.ledger.values()]).toEqual([expect.objectContaining({ unit: 'pdfop', amount_micros: 2_500, pdf_count: 3, operation: 'pdf_operation' })]);
    // Written with the completion, as a background merge/split job's: document 2's merge/split fields.
    expect(w.jobs.events.map((e) => e.payload)).toEqual([
      expect.objectContaining({ event: 'job.completed', job_id: job!.job_id, status: 'completed', job_type: 'pdfop', operation: 'split', input_pages: 6, output_count: 3, warnings: [], files_url: `/jobs/${job!.job_id}/files` }),
    ]);
    expect(w.jobs.events[0].output_key).toBe(job!.output!.key);
  });

  it('charges the band of the pages selected, not of the pages given: 16 of 66 cost the single price', async () => {
    const w = memoryWorld();
    const request: MergeRequest = {
      inputs: [
        { bytes: sixty, filename: 'b.pdf', index: 0, pages: parsePageRange('1-10') },
        { bytes: six, filename: 'a.pdf', index: 1, pages: null },
      ],
      store: false,
    };
    const result = await runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'merge', request });
    expect(result.direct).toMatchObject({ pages: 16 });
    expect([...w.chargeStore.ledger.values()]).toEqual([expect.objectContaining({ unit: 'pdfop', amount_micros: 2_500, pdf_count: 1 })]);
  });

  it('answers a small single result directly without storing it, and charges the band of the selected pages', async () => {
    const w = memoryWorld();
    const result = await runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'merge', request: merge() });
    expect(result.direct).toMatchObject({ name: 'merged.pdf', pages: 62 });
    expect(w.blobs.objects.size).toBe(0);
    expect(await w.files.list(result.job.job_id)).toEqual([expect.objectContaining({ index: 0, status: 'success', key: null, input: 'a.pdf, b.pdf' })]);
    expect([...w.chargeStore.ledger.values()][0]).toMatchObject({ amount_micros: 5_000, pdf_count: 1 }); // 62 pages: ×2
    // Answered in the response, not stored: the event has no link, only the files route.
    expect(w.jobs.events).toEqual([expect.objectContaining({ event: 'job.completed', output_key: null, payload: expect.objectContaining({ operation: 'merge', output_count: 1 }) })]);
  });

  it('stores a single result with store: true and answers JSON without a ZIP (zip_url is for multi-file splits)', async () => {
    const w = memoryWorld();
    const request: SplitRequest = { ...split(six, true), split: { mode: 'extract', pages: parsePageRange('2-3') } };
    const result = await runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'split', request });
    expect(result.direct).toBeNull();
    expect(result.stored).toMatchObject({ operation: 'pdf_split', output_count: 1, zip_url: null, outputs: [expect.objectContaining({ name: 'doc-001.pdf', pages: 2, page_range: '2-3' })] });
    expect([...w.blobs.objects.keys()].map((k) => k.split('/').pop())).toEqual(['000.pdf']);
    expect(await w.jobs.get(result.job.job_id)).toMatchObject({ status: 'completed', output: expect.objectContaining({ name: 'doc-001.pdf', content_type: 'application/pdf' }) });
  });

  it('answers a split whose charge reply was lost but which committed as done, with its files kept', async () => {
    const w = memoryWorld();
    const commit = w.chargeStore.commit.bind(w.chargeStore);
    w.chargeStore.commit = async (...args) => {
      await commit(...args);
      throw new Error('socket hang up');
    };
    const result = await runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'split', request: split(six) });
    expect(result.stored).toMatchObject({ status: 'completed', output_count: 3 });
    expect(w.blobs.objects.size).toBe(4);
    expect(w.chargeStore.ledger.size).toBe(1);
  });

  it('refuses before any work when no balance covers the band, recording nothing', async () => {
    const w = memoryWorld(0.004);
    const err = await rejection(runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'merge', request: merge() }));
    expect(err.code).toBe('INSUFFICIENT_CREDITS');
    expect(w.jobs.jobs.size).toBe(0);
  });

  it('a charge that fails after storing removes the stored files and rows and records a failed job', async () => {
    const w = memoryWorld();
    w.chargeStore.fail = new Error('database unavailable');
    const err = await rejection(runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'split', request: split(six, true) }), Error);
    expect(err.message).toBe('database unavailable');
    expect(w.blobs.objects.size).toBe(0);
    expect(w.files.rows.size).toBe(0);
    const [job] = w.jobs.jobs.values();
    expect(job).toMatchObject({ status: 'failed', error_code: 'INTERNAL_SERVER_ERROR' });
    expect(w.jobs.events.map((e) => e.payload)).toEqual([expect.objectContaining({ event: 'job.failed', job_type: 'pdfop', operation: 'split', error_code: 'INTERNAL_SERVER_ERROR' })]);
    expect((await listJobFiles(w, job)).files).toEqual([expect.objectContaining({ input: 'doc.pdf', status: 'failed', error_code: 'INTERNAL_SERVER_ERROR' })]);
    expect(w.accounts.accounts.get('acct1')!.credits_micros).toBe(5_000_000);
  });

  it('a storage failure is PDF_GENERATION_FAILED with nothing left behind and nothing charged', async () => {
    const w = memoryWorld();
    w.blobs.failPuts.add('002.pdf');
    const err = await rejection(runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'split', request: split(six) }));
    expect(err.code).toBe('PDF_GENERATION_FAILED');
    expect(w.blobs.objects.size).toBe(0);
    expect(w.chargeStore.ledger.size).toBe(0);
  });

  it('times out, keeping and charging nothing, when storing the results takes it past the limit', async () => {
    const w = memoryWorld();
    // 2 s are left when the split starts; writing its file rows takes them all.
    const putAll = w.files.putAll.bind(w.files);
    w.files.putAll = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      return putAll(...args);
    };
    const err = await rejection(runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'split', request: split(six), spentMs: 23_000 }));
    expect(err.code).toBe('PDFOP_TIMEOUT');
    expect(w.chargeStore.ledger.size).toBe(0);
    expect(w.blobs.objects.size).toBe(0);
    expect(w.files.rows.size).toBe(0);
    expect([...w.jobs.jobs.values()]).toEqual([expect.objectContaining({ status: 'timeout', error_code: 'PDFOP_TIMEOUT' })]);
  });

  it('runs out of time as 408 PDFOP_TIMEOUT, recorded as a timed-out job, not charged', async () => {
    const w = memoryWorld();
    // The request took its 25 s before the operation: the deadline has passed, however fast the machine.
    const err = await rejection(runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'merge', request: merge(true), spentMs: 25_000 }));
    expect(err.code).toBe('PDFOP_TIMEOUT');
    expect(err.details).toMatchObject({ timeout_seconds: 25, job_id: expect.any(String) });
    expect(await w.jobs.get(err.details.job_id as string)).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'PDFOP_TIMEOUT' });
    // A merge/split job that fails, timeouts included, is job.failed (job.timeout is never delivered).
    expect(w.jobs.events.map((e) => e.payload)).toEqual([expect.objectContaining({ event: 'job.failed', job_id: err.details.job_id, status: 'timeout', error_code: 'PDFOP_TIMEOUT', failed_at: expect.any(String) })]);
    expect(w.chargeStore.ledger.size + w.blobs.objects.size).toBe(0);
  });

  it('counts the 25 s from the request\'s arrival: a request that took them already before the operation times out', async () => {
    const w = memoryWorld();
    const err = await rejection(runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'merge', request: merge(true), spentMs: 25_000 }));
    expect(err).toMatchObject({ code: 'PDFOP_TIMEOUT', details: { timeout_seconds: 25 } });
    expect(w.chargeStore.ledger.size + w.blobs.objects.size).toBe(0);
    // With most of them left it runs as usual.
    expect((await runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'merge', request: merge(true), spentMs: 2_000 })).job.status).toBe('completed');
  });

  it('runs out of time while reading the inputs as 408 PDFOP_TIMEOUT too, with a timed-out job and no charge', async () => {
    const w = memoryWorld();
    // Enough objects that reading looks at the clock (every 256 lookups); the deadline has passed before it starts.
    const many = await simplePdf(2000);
    const err = await rejection(runInstantOp(deps(w), { account: w.account, plan: w.plan, operation: 'split', request: split(many), spentMs: 25_000 }));
    expect(err).toMatchObject({ code: 'PDFOP_TIMEOUT', details: { timeout_seconds: 25, suggestion: 'use_pdf_jobs_endpoint' } });
    const job = await w.jobs.get(err.details.job_id as string);
    // Stopped before its pages were counted: the plan was never made.
    expect(job).toMatchObject({ status: 'timeout', operation: 'split', split_mode: 'every_n', input_files: 1, error_code: 'PDFOP_TIMEOUT' });
    expect(job?.input_pages).toBeUndefined();
    expect(w.chargeStore.ledger.size + w.blobs.objects.size).toBe(0);
  });

  it('runs out of time while storing the outputs as 408 PDFOP_TIMEOUT, removing what it stored and charging nothing', async () => {
    const w = memoryWorld();
    const put = w.blobs.put.bind(w.blobs);
    // The deadline's clock (Date.now) stands still except in storage, where each file takes 150 ms: the three files
    // take longer than the limit, producing them does not, on any machine.
    let now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    w.blobs.put = async (...args: Parameters<typeof put>) => {
      now += 150;
      return put(...args);
    };
    const err = await rejection(runInstantOp(deps(w, 0.4), { account: w.account, plan: w.plan, operation: 'split', request: split(six) }).finally(() => clock.mockRestore()));
    expect(err).toMatchObject({ code: 'PDFOP_TIMEOUT', details: { timeout_seconds: 0.4, suggestion: 'use_pdf_jobs_endpoint' } });
    expect(await w.jobs.get(err.details.job_id as string)).toMatchObject({ status: 'timeout', error_code: 'PDFOP_TIMEOUT', input_pages: 6, output_count: 3 });
    expect(await w.files.list(err.details.job_id as string)).toEqual([]);
    // What GET /jobs/{job_id}/files answers: the one failed row naming the input.
    const listed = await listJobFiles(w, (await w.jobs.get(err.details.job_id as string))!);
    expect(listed).toMatchObject({ status: 'timeout', count: 1, files: [{ index: 0, input: 'doc.pdf', output: null, status: 'failed', error_code: 'PDFOP_TIMEOUT' }] });
    expect(w.chargeStore.ledger.size + w.blobs.objects.size).toBe(0);
  });
});
