import { requireCurrentPlan } from '../../../../functions/core/accounts/entitlements';
import { newUlid } from '../../../../functions/core/ids';
import { listJobFiles } from '../../../../functions/core/jobs/file-access';
import { objectKey } from '../../../../functions/core/jobs/storage-layout';
import { JOB_LIMITS } from '../../../../functions/core/pdf/limits';
import {
  type PdfJobDeps,
  markProcessing,
  processPdfJob,
  recordPdfJobFailure,
  submitPdfJob,
} from '../../../../functions/core/pdfops/background';
import { uploadIssuedAt } from '../../../../functions/core/jobs/uploads';
import { parsePdfJobRequest } from '../../../../functions/core/pdfops/requests';
import { TransientTaskError } from '../../../../functions/core/workflows/ports';
import { encryptedPdf, simplePdf } from '../../../support/pdf-fixtures';
import { rejection } from '../../../support/errors';
import { memoryWorld } from '../../../support/memory';

type World = ReturnType<typeof memoryWorld>;
/** The account's merge/split slots (uploads are held by slots of their own). */
const pdfopSlots = (w: World) => [...w.slots.held.keys()].filter((k) => k.includes('#pdfop#')).length;

function deps(w: World, timeoutSeconds?: number): PdfJobDeps {
  return { ...w, files: w.files, timeoutSeconds };
}

async function upload(w: World, bytes: Uint8Array, account = w.account.account_id): Promise<string> {
  const key = objectKey('uploads', account, 'pdf', `${newUlid()}.pdf`);
  await w.blobs.put(key, bytes, 'application/pdf');
  return key;
}

async function submit(w: World, body: unknown) {
  return submitPdfJob(deps(w), { account: w.account, plan: w.plan, request: parsePdfJobRequest(body) });
}

const split = (key: string, pages = '1') => ({ operation: 'split', inputs: [{ s3_key: key, filename: 's.pdf' }], split: { mode: 'extract', pages } });

let three: Uint8Array;
beforeAll(async () => {
  three = await simplePdf(3, { label: 'T' });
});

describe('background merge/split jobs', () => {
  it('queues a job: slot taken, request stored, workflow started with the job id', async () => {
    const w = memoryWorld();
    const keys = [await upload(w, three), await upload(w, three)];
    const res = await submit(w, { operation: 'merge', inputs: keys.map((s3_key, i) => ({ s3_key, filename: `f${i}.pdf`, pages: i ? '2-end' : null })) });
    expect(res).toMatchObject({ status: 'queued', job_type: 'pdfop', operation: 'merge' });
    expect(await w.jobs.get(res.job_id)).toMatchObject({ status: 'queued', input_files: 2, operation: 'merge' });
    expect(w.workflows.started).toEqual([{ workflow: 'pdfop', input: { job_id: res.job_id, account_id: 'acct1' } }]);
    expect(pdfopSlots(w)).toBe(1);
  });

  it('refuses uploads of other accounts, missing or expired uploads, and accounts that cannot pay the top band', async () => {
    const w = memoryWorld();
    const mine = await upload(w, three);
    const theirs = await upload(w, three, 'someone-else');
    expect((await rejection(submit(w, { operation: 'split', inputs: [{ s3_key: theirs, filename: 'x.pdf' }], split: { mode: 'each_page' } })))).toMatchObject({
      code: 'FORBIDDEN',
      details: { filename: 'x.pdf', input_index: 0 },
    });
    const missing = objectKey('uploads', 'acct1', 'pdf', `${newUlid()}.pdf`);
    expect((await rejection(submit(w, { operation: 'merge', inputs: [{ s3_key: mine, filename: 'a.pdf' }, { s3_key: missing, filename: 'b.pdf' }] }))).details).toMatchObject({ input_index: 1 });
    const old = objectKey('uploads', 'acct1', 'pdf', `${'0'.repeat(10)}${newUlid().slice(10)}.pdf`);
    await w.blobs.put(old, three, 'application/pdf');
    expect(uploadIssuedAt(old)!.getTime()).toBe(0);
    expect((await rejection(submit(w, { operation: 'split', inputs: [{ s3_key: old, filename: 'old.pdf' }], split: { mode: 'each_page' } }))).code).toBe('UPLOAD_NOT_FOUND');
    const poor = memoryWorld(0.015); // 0.02 USD needed for the top band
    const key = await upload(poor, three);
    expect((await rejection(submitPdfJob(deps(poor), { account: poor.account, plan: poor.plan, request: parsePdfJobRequest({ operation: 'split', inputs: [{ s3_key: key }], split: { mode: 'each_page' } }) }))).code).toBe(
      'INSUFFICIENT_CREDITS',
    );
    // The inputs are judged before the balance, as on the instant routes.
    const theirsToo = await upload(poor, three, 'someone-else');
    expect((await rejection(submitPdfJob(deps(poor), { account: poor.account, plan: poor.plan, request: parsePdfJobRequest({ operation: 'split', inputs: [{ s3_key: theirsToo }], split: { mode: 'each_page' } }) }))).code).toBe(
      'FORBIDDEN',
    );
    expect(w.jobs.jobs.size + poor.jobs.jobs.size).toBe(0);
  });

  it('names the input that takes the total over 150 MB, as the instant routes do', async () => {
    const w = memoryWorld();
    const keys = [await upload(w, three), await upload(w, three), await upload(w, three), await upload(w, three)];
    // Four uploads of 60 MB each: the third takes the job to 180 MB (the fourth, past it too, is not the one named).
    w.blobs.head = async () => ({ size_bytes: 60 * 1024 * 1024, content_type: 'application/pdf' });
    const err = await rejection(submit(w, { operation: 'merge', inputs: keys.map((s3_key, i) => ({ s3_key, filename: `part${i}.pdf` })) }));
    expect(err).toMatchObject({
      code: 'PDF_INPUT_TOO_LARGE',
      details: { filename: 'part2.pdf', input_index: 2, size_bytes: 240 * 1024 * 1024, max_bytes: 150 * 1024 * 1024, file_count: 4 },
    });
    expect(err.message).toContain('part2.pdf');
    expect(w.jobs.jobs.size).toBe(0);
  });

  it('takes uploads of exactly 150 MB, alone and in total, and refuses one byte more', async () => {
    const MAX = 150 * 1024 * 1024;
    const w = memoryWorld();
    let size = MAX;
    w.blobs.head = async () => ({ size_bytes: size, content_type: 'application/pdf' });
    await expect(submit(w, split(await upload(w, three)))).resolves.toMatchObject({ status: 'queued' });
    size = MAX / 2;
    await expect(submit(w, { operation: 'merge', inputs: [{ s3_key: await upload(w, three) }, { s3_key: await upload(w, three) }] })).resolves.toMatchObject({ status: 'queued' });
    size = MAX + 1;
    expect(await rejection(submit(w, split(await upload(w, three))))).toMatchObject({ code: 'PDF_INPUT_TOO_LARGE', details: { size_bytes: MAX + 1, max_bytes: MAX } });
  });

  it('refuses one upload over 150 MB, saying how to get it through', async () => {
    const w = memoryWorld();
    const key = await upload(w, three);
    w.blobs.head = async () => ({ size_bytes: 151 * 1024 * 1024, content_type: 'application/pdf' });
    const err = await rejection(submit(w, { operation: 'split', inputs: [{ s3_key: key, filename: 'big.pdf' }], split: { mode: 'each_page' } }));
    expect(err).toMatchObject({ code: 'PDF_INPUT_TOO_LARGE', details: { filename: 'big.pdf', input_index: 0, max_bytes: 150 * 1024 * 1024 } });
    expect(err.message).toMatch(/^big\.pdf is larger than 150 MB.*Split it into PDFs under 150 MB/);
  });

  it("checks a job against what the account's other running jobs may charge, and frees that when a job ends", async () => {
    const w = memoryWorld(0.03); // the top band of one job (0.02) fits, not two
    const body = async () => ({ operation: 'split', inputs: [{ s3_key: await upload(w, three), filename: 's.pdf' }], split: { mode: 'each_page' } });
    const first = await submit(w, await body());
    const refused = await rejection(submit(w, await body()));
    expect(refused).toMatchObject({ code: 'INSUFFICIENT_CREDITS', details: { required_amount: 0.02, committed_to_running_jobs: 0.02, running_jobs: [first.job_id] } });
    // The refused submission wrote no job and gave its slot back.
    expect(w.jobs.jobs.size).toBe(1);
    expect(pdfopSlots(w)).toBe(1);
    // Once the first job is done (charged what it used, well under the top band), the next fits.
    await processPdfJob(deps(w), { job_id: first.job_id, account_id: 'acct1' });
    expect((await w.accounts.get('acct1'))!.commitments).toEqual({});
    await submit(w, await body());
  });

  it('allows two running jobs per account, answers the third with 409, and frees the slot when a job ends', async () => {
    const w = memoryWorld();
    const body = async () => ({ operation: 'split', inputs: [{ s3_key: await upload(w, three), filename: 's.pdf' }], split: { mode: 'each_page' } });
    const first = await submit(w, await body());
    await submit(w, await body());
    const third = await rejection(submit(w, await body()));
    expect(third.code).toBe('PDF_JOB_ALREADY_ACTIVE');
    await processPdfJob(deps(w), { job_id: first.job_id });
    await submit(w, await body());
  });

  it('records a job that could not be started as failed and frees its slot', async () => {
    const w = memoryWorld();
    w.workflows.fail = new Error('throttled');
    const key = await upload(w, three);
    const err = await rejection(submit(w, { operation: 'split', inputs: [{ s3_key: key }], split: { mode: 'each_page' } }));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect([...w.jobs.jobs.values()][0]).toMatchObject({ status: 'failed', error_code: 'SERVICE_UNAVAILABLE' });
    expect(pdfopSlots(w)).toBe(0);
    // The upload stays for a retry with the same s3_key; the job's stored request goes.
    expect([...w.blobs.objects.keys()]).toEqual([key]);
  });

  it('answers with the job when its queued write went through but the reply was lost (it runs either way)', async () => {
    const w = memoryWorld();
    const put = w.jobs.put.bind(w.jobs);
    w.jobs.put = async (...args: Parameters<typeof put>) => {
      await put(...args);
      throw new Error('socket hang up');
    };
    const key = await upload(w, three);
    const res = await submit(w, { operation: 'split', inputs: [{ s3_key: key }], split: { mode: 'each_page' } });
    // Answered 500 before, with no job id: the start sweeper then ran the job, charged, outside its slot and commitment.
    expect(res).toMatchObject({ status: 'queued', job_type: 'pdfop' });
    expect(await w.jobs.get(res.job_id)).toMatchObject({ status: 'queued' });
    expect(w.workflows.started).toEqual([{ workflow: 'pdfop', input: { job_id: res.job_id, account_id: 'acct1' } }]);
    expect(pdfopSlots(w)).toBe(1);
    expect(Object.keys((await w.accounts.get('acct1'))!.commitments ?? {})).toEqual([res.job_id]);
  });

  it('undoes a submission whose job was not written: no stored request, slot and commitment freed', async () => {
    const w = memoryWorld();
    w.jobs.put = async () => {
      throw new Error('throttled');
    };
    const key = await upload(w, three);
    await expect(submit(w, { operation: 'split', inputs: [{ s3_key: key }], split: { mode: 'each_page' } })).rejects.toThrow('throttled');
    // Were the job written after all, it would find no request and fail without a charge.
    expect([...w.blobs.objects.keys()]).toEqual([key]);
    expect(pdfopSlots(w)).toBe(0);
    expect((await w.accounts.get('acct1'))!.commitments ?? {}).toEqual({});
    expect(w.workflows.started).toEqual([]);
  });

  it('processes a job: every file stored, rows, job.completed with the spec fields, one charge, uploads deleted, slot freed', async () => {
    const w = memoryWorld();
    const key = await upload(w, three);
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: key, filename: 'three.pdf' }], split: { mode: 'each_page' }, options: { filename_pattern: 'p{index}.pdf' } });
    await markProcessing(deps(w), { job_id });
    expect((await w.jobs.get(job_id))!.status).toBe('processing');
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'completed' });
    const job = (await w.jobs.get(job_id))!;
    expect(job).toMatchObject({ status: 'completed', input_pages: 3, outputs_produced: 3, pages: 3, output: expect.objectContaining({ name: 'three-split.zip', content_type: 'application/zip' }) });
    expect((await w.files.list(job_id)).map((r) => [r.index, r.output, r.status, r.page_range])).toEqual([
      [0, 'p1.pdf', 'success', '1'],
      [1, 'p2.pdf', 'success', '2'],
      [2, 'p3.pdf', 'success', '3'],
    ]);
    expect(w.jobs.events).toEqual([
      expect.objectContaining({
        event: 'job.completed',
        payload: expect.objectContaining({ job_type: 'pdfop', operation: 'split', input_pages: 3, output_count: 3, warnings: [], files_url: `/jobs/${job_id}/files` }),
      }),
    ]);
    expect([...w.chargeStore.ledger.values()]).toEqual([expect.objectContaining({ amount_micros: 2_500, pdf_count: 3 })]);
    expect(await w.blobs.head(key)).toBeNull();
    expect(pdfopSlots(w)).toBe(0);
    // A retried task finds the job finished and does nothing twice.
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'completed' });
    expect(w.chargeStore.ledger.size).toBe(1);
  });

  it('charges a merge at the band of the pages selected, not of the pages given: 5 of 63 cost the single price', async () => {
    const w = memoryWorld();
    const sixty = await upload(w, await simplePdf(60));
    const { job_id } = await submit(w, { operation: 'merge', inputs: [{ s3_key: sixty, filename: 'a.pdf', pages: '1-2' }, { s3_key: await upload(w, three), filename: 'b.pdf' }] });
    await markProcessing(deps(w), { job_id });
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'completed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ input_pages: 63, pages: 5 });
    expect([...w.chargeStore.ledger.values()]).toEqual([expect.objectContaining({ unit: 'pdfop', amount_micros: 2_500, pdf_count: 1 })]);
  });

  it('keeps a job whose completing write committed with its reply lost: outputs, one charge, completed', async () => {
    const w = memoryWorld();
    const key = await upload(w, three);
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: key }], split: { mode: 'each_page' } });
    await markProcessing(deps(w), { job_id });
    const commit = w.chargeStore.commit.bind(w.chargeStore);
    w.chargeStore.commit = async (...args) => {
      await commit(...args);
      throw new Error('socket hang up');
    };
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'completed' });
    const job = (await w.jobs.get(job_id))!;
    expect(job.status).toBe('completed');
    expect(await w.blobs.head(job.output!.key)).not.toBeNull();
    expect(w.chargeStore.ledger.size).toBe(1);
    expect(pdfopSlots(w)).toBe(0);
  });

  it('fails as a whole on a bad input: no outputs, one failed row naming the input, job.failed, nothing charged', async () => {
    const w = memoryWorld();
    const good = await upload(w, three);
    const bad = await upload(w, await encryptedPdf({ userPassword: '', ownerPassword: 'o' }));
    const { job_id } = await submit(w, { operation: 'merge', inputs: [{ s3_key: good, filename: 'good.pdf' }, { s3_key: bad, filename: 'locked.pdf' }] });
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'failed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'PDF_ENCRYPTED' });
    expect(await w.files.list(job_id)).toEqual([expect.objectContaining({ index: 0, status: 'failed', input: 'locked.pdf', error_code: 'PDF_ENCRYPTED', output: null, pages: 0 })]);
    expect(w.jobs.events.map((e) => [e.event, e.payload.job_type])).toEqual([['job.failed', 'pdfop']]);
    expect(w.chargeStore.ledger.size).toBe(0);
    expect([...w.blobs.objects.keys()].filter((k) => k.startsWith('pdfop/') || k.startsWith('uploads/'))).toEqual([]);
    expect(pdfopSlots(w)).toBe(0);
  });

  it('throws a retryable error on storage trouble (removing partial files); the Catch path then ends the job', async () => {
    const w = memoryWorld();
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three) }], split: { mode: 'each_page' } });
    w.blobs.failPuts.add('002.pdf');
    await expect(processPdfJob(deps(w), { job_id })).rejects.toBeInstanceOf(TransientTaskError);
    expect([...w.blobs.objects.keys()].filter((k) => k.includes(job_id) && !k.endsWith('request.json'))).toEqual([]);
    expect((await w.jobs.get(job_id))!.status).toBe('processing');
    expect(pdfopSlots(w)).toBe(1);

    expect(await recordPdfJobFailure(deps(w), { job_id, error: { Error: 'TransientTaskError', Cause: 'storage' } })).toEqual({ job_id, status: 'failed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'INTERNAL_SERVER_ERROR' });
    expect(await w.files.list(job_id)).toEqual([expect.objectContaining({ status: 'failed', input: 'input-1.pdf' })]);
    expect(pdfopSlots(w)).toBe(0);
    expect(w.chargeStore.ledger.size).toBe(0);
    // Recording twice changes nothing.
    await recordPdfJobFailure(deps(w), { job_id, error: { Error: 'States.Timeout' } });
    expect((await w.jobs.get(job_id))!.error_code).toBe('INTERNAL_SERVER_ERROR');
  });

  it('fails the job when the credits ran out between submission and completion, keeping none of its files', async () => {
    const w = memoryWorld(0.05);
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three) }], split: { mode: 'each_page' } });
    w.accounts.accounts.set('acct1', { ...w.accounts.accounts.get('acct1')!, credits_micros: 1_000 });
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'failed' });
    // All three files were made before the charge failed; none is kept, and the job says so.
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'INSUFFICIENT_CREDITS', input_pages: 3, outputs_produced: 0 });
    expect([...w.blobs.objects.keys()].filter((k) => k.startsWith('pdfop/'))).toEqual([]);
    expect(w.chargeStore.ledger.size).toBe(0);
  });

  it('lists the one failed row from the moment the job is failed: job.failed goes out before its files are removed', async () => {
    const w = memoryWorld(0.05);
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three), filename: 'three.pdf' }], split: { mode: 'each_page' } });
    // The three files and their rows are written before the charge fails.
    w.accounts.accounts.set('acct1', { ...w.accounts.accounts.get('acct1')!, credits_micros: 1_000 });
    const listedWhenFailed: unknown[] = [];
    const putIf = w.jobs.putIf.bind(w.jobs);
    w.jobs.putIf = async (job, from, events, lease) => {
      const written = await putIf(job, from, events, lease);
      if (written && job.status === 'failed') listedWhenFailed.push(await listJobFiles(w, job));
      return written;
    };
    await processPdfJob(deps(w), { job_id });
    const failedRow = { index: 0, input: 'three.pdf', output: null, status: 'failed', error_code: 'INSUFFICIENT_CREDITS' };
    expect(listedWhenFailed).toEqual([expect.objectContaining({ status: 'failed', count: 1, files: [expect.objectContaining(failedRow)] })]);
    expect(await listJobFiles(w, (await w.jobs.get(job_id))!)).toEqual(listedWhenFailed[0]);
  });

  it("fails the job with the workers' one UPGRADE_REQUIRED refusal when the account lost its plan after submission", async () => {
    const w = memoryWorld();
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three) }], split: { mode: 'each_page' } });
    w.accounts.accounts.set('acct1', { ...w.accounts.accounts.get('acct1')!, plan_id: null, status: 'pending' });
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'failed' });
    const refusal = await rejection(requireCurrentPlan(w.plans, null));
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'UPGRADE_REQUIRED', error_message: refusal.message });
    expect(w.chargeStore.ledger.size).toBe(0);
  });

  it('shows the pages it was given on a job that a page range refuses', async () => {
    const w = memoryWorld();
    const keys = [await upload(w, three), await upload(w, three)];
    const { job_id } = await submit(w, { operation: 'merge', inputs: [{ s3_key: keys[0], filename: 'a.pdf' }, { s3_key: keys[1], filename: 'b.pdf', pages: '2-9' }] });
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'failed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'PAGE_OUT_OF_RANGE', input_pages: 6, outputs_produced: 0 });
  });

  it('keeps a completed job whole when a late failure record arrives (the workflow gave up on a task that went on)', async () => {
    const w = memoryWorld();
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three) }], split: { mode: 'each_page' } });
    await markProcessing(deps(w), { job_id });
    const running = (await w.jobs.get(job_id))!;
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'completed' });
    const files = [...w.blobs.objects.keys()].filter((k) => k.startsWith('pdfop/')).sort();
    expect(files.length).toBeGreaterThan(0);
    // The failure task read the job while it was still processing; the processing task completed it right after.
    const get = w.jobs.get.bind(w.jobs);
    w.jobs.get = async (id: string) => (id === job_id && running ? running : get(id));
    const late = recordPdfJobFailure(deps(w), { job_id, error: { Error: 'States.Timeout' } });
    w.jobs.get = get;
    expect(await late).toEqual({ job_id, status: 'completed' });
    expect([...w.blobs.objects.keys()].filter((k) => k.startsWith('pdfop/')).sort()).toEqual(files);
    expect((await w.files.list(job_id)).map((r) => r.status)).toEqual(['success', 'success', 'success']);
    expect(w.chargeStore.ledger.size).toBe(1);
  });

  it('charges nothing when the job was ended by another task while it ran', async () => {
    const w = memoryWorld();
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three) }], split: { mode: 'each_page' } });
    // The workflow's failure path ends the job while the processing task is still producing its files.
    const blobs = w.blobs;
    const put = blobs.put.bind(blobs);
    let ended = false;
    blobs.put = async (key, body, type) => {
      if (!ended && key.startsWith('pdfop/')) {
        ended = true;
        await recordPdfJobFailure(deps(w), { job_id, error: { Error: 'States.Timeout' } });
      }
      return put(key, body, type);
    };
    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'failed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'PDFOP_TIMEOUT' });
    expect(w.chargeStore.ledger.size).toBe(0);
    expect(w.jobs.events.map((e) => e.event)).toEqual(['job.failed']);
    // What the late task wrote after the failure was recorded is gone: no files, one failed row, nothing to download.
    expect([...w.blobs.objects.keys()].filter((k) => k.startsWith('pdfop/'))).toEqual([]);
    expect((await w.files.list(job_id)).map((r) => [r.status, r.error_code])).toEqual([['failed', 'PDFOP_TIMEOUT']]);
  });

  it('removes every planned file of a task that died after writing them, before its progress said so', async () => {
    const w = memoryWorld();
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three) }], split: { mode: 'each_page' } });
    await markProcessing(deps(w), { job_id });
    // The function stops for good while storing the ZIP: its three files are stored, its progress (every 2 s) not yet.
    let stuck!: () => void;
    const reached = new Promise<void>((resolve) => (stuck = resolve));
    w.blobs.putParts = () => (stuck(), new Promise<never>(() => {}));
    void processPdfJob(deps(w), { job_id });
    await reached;
    expect(await w.jobs.get(job_id)).toMatchObject({ output_count: 3, outputs_produced: 0 });
    expect([...w.blobs.objects.keys()].filter((k) => k.startsWith('pdfop/') && k.endsWith('.pdf'))).toHaveLength(3);
    expect(await recordPdfJobFailure(deps(w), { job_id, error: { Error: 'States.Timeout' } })).toEqual({ job_id, status: 'failed' });
    expect([...w.blobs.objects.keys()].filter((k) => k.startsWith('pdfop/') && !k.endsWith('request.json'))).toEqual([]);
  });

  it('ends a job that runs out of time as failed with PDFOP_TIMEOUT', async () => {
    const w = memoryWorld();
    const big = await simplePdf(200);
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, big) }], split: { mode: 'each_page' } });
    // The job started its whole time limit ago (a task retried late): the deadline has passed, however fast the machine.
    let now = w.clock.now().getTime();
    const clock = { now: () => new Date(now) };
    await markProcessing({ ...deps(w), clock }, { job_id });
    now += JOB_LIMITS.timeoutSeconds * 1000;
    expect(await processPdfJob({ ...deps(w), clock }, { job_id })).toEqual({ job_id, status: 'failed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'PDFOP_TIMEOUT', timeout_occurred: true });
    expect(w.chargeStore.ledger.size).toBe(0);
  });

  it("ends with PDFOP_TIMEOUT a job whose function hit its own time limit (stuck in synchronous work) before the Task's", async () => {
    const w = memoryWorld();
    const { job_id } = await submit(w, { operation: 'split', inputs: [{ s3_key: await upload(w, three) }], split: { mode: 'each_page' } });
    await markProcessing(deps(w), { job_id });
    const error = { Error: 'Sandbox.Timedout', Cause: '{"errorType":"Sandbox.Timedout","errorMessage":"RequestId: 1 Error: Task timed out after 900.00 seconds"}' };
    expect(await recordPdfJobFailure(deps(w), { job_id, error })).toEqual({ job_id, status: 'failed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'failed', error_code: 'PDFOP_TIMEOUT', timeout_occurred: true });
    expect(w.chargeStore.ledger.size).toBe(0);
  });
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
    await expect(submit(w, split(k))).resolves.toMatchObject({ status: 'queued' });
  });
});
