import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../../functions/adapters/dynamodb/client';
import { keys } from '../../functions/adapters/dynamodb/schema';
import { readPdf } from '../support/pdf';
import { encryptedPdf, simplePdf, truncated } from '../support/pdf-fixtures';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { expectQuarterHour } from '../support/links';

let stack: TestStack;
let user: TestAccount;
let three: Uint8Array;
let five: Uint8Array;

beforeAll(async () => {
  stack = await startTestStack({ LOCAL_SFN_RETRY_MS: '0' });
  user = await stack.account({ credits_usd: 5 });
  three = await simplePdf(3, { label: 'T' });
  five = await simplePdf(5, { label: 'F' });
});
afterAll(() => stack?.stop());

const post = (route: string, json: unknown, key = user.api_key) => stack.request('POST', route, { key, json });
const get = (route: string, key = user.api_key) => stack.request('GET', route, { key });

async function errorOf(res: Response) {
  const body = await res.json();
  return { status: res.status, code: body.error?.code, details: body.error?.details ?? {} };
}

/** POST /pdf/upload-url, then the PUT a client would make. */
async function upload(bytes: Uint8Array, key = user.api_key): Promise<string> {
  const res = await post('/pdf/upload-url', { content_length_bytes: bytes.length }, key);
  expect(res.status).toBe(200);
  const up = await res.json();
  const put = await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(bytes) });
  expect(put.status).toBe(200);
  return up.s3_key;
}

async function finished(jobId: string, key = user.api_key) {
  await stack.workflows.idle();
  return (await get(`/jobs/${jobId}`, key)).json();
}

async function outbox(jobId: string) {
  const db = createDynamo({ tableName: stack.services.config.tableName, region: 'us-east-1', endpoint: stack.services.config.dynamodbEndpoint });
  const { Items = [] } = await db.doc.send(
    new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)', ExpressionAttributeValues: { ':pk': keys.job(jobId).pk, ':e': 'EVENT#' } }),
  );
  return Items.map((i) => i.payload as Record<string, unknown>);
}

async function credits(accountId = user.account_id) {
  return (await stack.services.accounts.get(accountId))!.credits_micros;
}

describe('POST /pdf/upload-url', () => {
  it('gives a 15-minute presigned PUT for exactly the announced size', async () => {
    const res = await post('/pdf/upload-url', { content_length_bytes: 1234 });
    const body = await res.json();
    expect(body).toEqual({
      upload_url: expect.stringMatching(/^http.*X-Amz-Expires=900/),
      s3_key: expect.stringMatching(new RegExp(`^uploads/${user.account_id}/pdf/[0-9A-Z]{26}\\.pdf$`)),
      expires_at: expect.any(String),
      max_bytes: 157286400,
      required_headers: { 'Content-Type': 'application/pdf' },
    });
    expect(body.upload_url).toContain('content-length%3Bcontent-type');
    expectQuarterHour(res, body);
  });

  it('refuses sizes over 150 MB and missing sizes', async () => {
    expect(await errorOf(await post('/pdf/upload-url', { content_length_bytes: 157286401 }))).toMatchObject({ status: 400, code: 'PDF_INPUT_TOO_LARGE', details: { max_bytes: 157286400 } });
    expect(await errorOf(await post('/pdf/upload-url', {}))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER', details: { parameter: 'content_length_bytes' } });
    expect(await errorOf(await post('/pdf/upload-url', { content_length_bytes: 2.5 }))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER' });
  });
});

describe('POST /pdf/jobs', () => {
  it('merges uploads in the background: queued → completed, files and downloads, job.completed, band charge, uploads deleted', async () => {
    const before = await credits();
    const keysUsed = [await upload(three), await upload(five)];
    const res = await post('/pdf/jobs', {
      operation: 'merge',
      inputs: [
        { s3_key: keysUsed[0], filename: 'three.pdf', pages: '3,1' },
        { s3_key: keysUsed[1], filename: 'five.pdf' },
      ],
      options: { output_filename: 'together', title: 'Together' },
    });
    expect(res.status).toBe(202);
    const accepted = await res.json();
    expect(accepted).toEqual({ job_id: expect.stringMatching(/^job_/), status: 'queued', job_type: 'pdfop', operation: 'merge', message: expect.any(String) });

    const job = await finished(accepted.job_id);
    expect(job).toMatchObject({ status: 'completed', job_type: 'pdfop', operation: 'merge', input_files: 2, input_pages: 8, outputs_produced: 1, pages: 7, error_code: null });
    expect(job.output_count).toBeUndefined(); // only while running

    const files = await (await get(`/jobs/${accepted.job_id}/files`)).json();
    expect(files).toMatchObject({ status: 'completed', count: 1, files: [{ index: 0, output: 'together.pdf', status: 'success', pages: 7, page_range: '1-7', warnings: [] }] });
    const link = await (await get(`/jobs/${accepted.job_id}/files/0/download`)).json();
    const merged = new Uint8Array(await (await fetch(link.download_url)).arrayBuffer());
    expect((await readPdf(merged)).map((p) => p.text)).toEqual(['T page 3', 'T page 1', 'F page 1', 'F page 2', 'F page 3', 'F page 4', 'F page 5']);
    expect((await (await get(`/jobs/${accepted.job_id}/download`)).json()).content_type).toBe('application/pdf');

    expect(await outbox(accepted.job_id)).toEqual([
      expect.objectContaining({
        event: 'job.completed',
        job_id: accepted.job_id,
        status: 'completed',
        job_type: 'pdfop',
        operation: 'merge',
        input_pages: 8,
        output_count: 1,
        warnings: [],
        files_url: `/jobs/${accepted.job_id}/files`,
      }),
    ]);
    expect(await credits()).toBe(before - 2_500);
    for (const key of keysUsed) expect(await stack.services.blobs.head(key)).toBeNull();
  });

  it('splits an upload each_page into a ZIP and one file per page', async () => {
    const key = await upload(five);
    const { job_id } = await (await post('/pdf/jobs', { operation: 'split', inputs: [{ s3_key: key, filename: 'five.pdf' }], split: { mode: 'each_page' } })).json();
    const job = await finished(job_id);
    expect(job).toMatchObject({ status: 'completed', operation: 'split', split_mode: 'each_page', outputs_produced: 5 });
    const files = await (await get(`/jobs/${job_id}/files`)).json();
    expect(files.files.map((f: { output: string }) => f.output)).toEqual(['five-001.pdf', 'five-002.pdf', 'five-003.pdf', 'five-004.pdf', 'five-005.pdf']);
    const fourth = await (await get(`/jobs/${job_id}/files/3/download`)).json();
    expect(fourth).toMatchObject({ file_index: 3, name: 'five-004.pdf' });
    expect((await readPdf(new Uint8Array(await (await fetch(fourth.download_url)).arrayBuffer())))[0].text).toBe('F page 4');
    expect((await (await get(`/jobs/${job_id}/download`)).json()).content_type).toBe('application/zip');
  });

  it('fails as a whole on a bad input: one failed row naming it, job.failed, no charge, uploads deleted, slot freed', async () => {
    const before = await credits();
    const good = await upload(three);
    const bad = await upload(await encryptedPdf({ userPassword: '', ownerPassword: 'owner' }));
    const { job_id } = await (await post('/pdf/jobs', { operation: 'merge', inputs: [{ s3_key: good, filename: 'good.pdf' }, { s3_key: bad, filename: 'locked.pdf' }] })).json();
    const job = await finished(job_id);
    expect(job).toMatchObject({ status: 'failed', error_code: 'PDF_ENCRYPTED', outputs_produced: 0 });
    expect(job.error_message).toContain('locked.pdf');
    const files = await (await get(`/jobs/${job_id}/files`)).json();
    expect(files.files).toEqual([expect.objectContaining({ index: 0, input: 'locked.pdf', output: null, status: 'failed', pages: 0, error_code: 'PDF_ENCRYPTED' })]);
    expect(await errorOf(await get(`/jobs/${job_id}/files/0/download`))).toMatchObject({ status: 404, code: 'FILE_NOT_FOUND' });
    expect((await outbox(job_id)).map((e) => [e.event, e.job_type, e.error_code])).toEqual([['job.failed', 'pdfop', 'PDF_ENCRYPTED']]);
    expect(await credits()).toBe(before);
    expect(await stack.services.blobs.head(good)).toBeNull();
    expect(await stack.services.blobs.head(bad)).toBeNull();

    const damaged = await upload(truncated(three));
    const second = await (await post('/pdf/jobs', { operation: 'split', inputs: [{ s3_key: damaged, filename: 'damaged.pdf' }], split: { mode: 'extract', pages: '1' } })).json();
    expect(await finished(second.job_id)).toMatchObject({ status: 'failed', error_code: 'INVALID_PDF' });
    const pageRange = await upload(three);
    const third = await (await post('/pdf/jobs', { operation: 'split', inputs: [{ s3_key: pageRange, filename: 'short.pdf' }], split: { mode: 'extract', pages: '9' } })).json();
    expect(await finished(third.job_id)).toMatchObject({ status: 'failed', error_code: 'PAGE_OUT_OF_RANGE' });
  });

  it('allows two running jobs per account and answers a third with 409 PDF_JOB_ALREADY_ACTIVE', async () => {
    const acct = await stack.account({ credits_usd: 1 });
    const now = new Date();
    for (const jobId of ['job_busy1', 'job_busy2']) {
      expect(await stack.services.jobSlots.acquire({ accountId: acct.account_id, kind: 'pdfop', jobId, max: 2, now, leaseSeconds: 1800 })).toBe(true);
    }
    const key = await upload(three, acct.api_key);
    const body = { operation: 'split', inputs: [{ s3_key: key }], split: { mode: 'each_page' } };
    expect(await errorOf(await post('/pdf/jobs', body, acct.api_key))).toMatchObject({ status: 409, code: 'PDF_JOB_ALREADY_ACTIVE', details: { max_active_jobs: 2 } });
    await stack.services.jobSlots.release({ accountId: acct.account_id, kind: 'pdfop', jobId: 'job_busy1' });
    const res = await post('/pdf/jobs', body, acct.api_key);
    expect(res.status).toBe(202);
    expect(await finished((await res.json()).job_id, acct.api_key)).toMatchObject({ status: 'completed' });
  });

  it.each([
    ['one input to merge', () => ({ operation: 'merge', inputs: [{ s3_key: 'uploads/x/pdf/a.pdf' }] }), 400, 'MISSING_PDFS'],
    ['101 inputs', () => ({ operation: 'merge', inputs: Array(101).fill({ s3_key: 'uploads/x/pdf/a.pdf' }) }), 400, 'TOO_MANY_FILES'],
    ['two inputs to split', () => ({ operation: 'split', inputs: [{ s3_key: 'a' }, { s3_key: 'b' }], split: { mode: 'each_page' } }), 400, 'TOO_MANY_FILES'],
    ['no input to split', () => ({ operation: 'split', inputs: [], split: { mode: 'each_page' } }), 400, 'MISSING_PDF'],
    ['an unknown operation', () => ({ operation: 'rotate', inputs: [] }), 400, 'INVALID_PARAMETER'],
    ['a bad split mode', () => ({ operation: 'split', inputs: [{ s3_key: 'a' }], split: { mode: 'x' } }), 400, 'INVALID_SPLIT_MODE'],
    ['a bad page range', () => ({ operation: 'merge', inputs: [{ s3_key: 'a', pages: '0' }, { s3_key: 'b' }] }), 400, 'INVALID_PAGE_RANGE'],
    ['an upload that does not exist', () => ({ operation: 'split', inputs: [{ s3_key: `uploads/${user.account_id}/pdf/01J00000000000000000000000.pdf`, filename: 'gone.pdf' }], split: { mode: 'each_page' } }), 404, 'UPLOAD_NOT_FOUND'],
    ["another account's upload", () => ({ operation: 'split', inputs: [{ s3_key: 'uploads/someone-else/pdf/01J00000000000000000000000.pdf', filename: 'theirs.pdf' }], split: { mode: 'each_page' } }), 403, 'FORBIDDEN'],
  ])('refuses %s (%d %s)', async (_name, body, status, code) => {
    expect(await errorOf(await post('/pdf/jobs', body()))).toMatchObject({ status, code });
  });

  it('refuses a bulk ZIP upload as a PDF input with 404 UPLOAD_NOT_FOUND and leaves it in place', async () => {
    const zipKey = `uploads/${user.account_id}/bulk/${(await import('ulid')).ulid()}.zip`;
    await stack.services.blobs.put(zipKey, Buffer.from(three), 'application/zip');
    const body = { operation: 'split', inputs: [{ s3_key: zipKey, filename: 'a.pdf' }], split: { mode: 'each_page' } };
    expect(await errorOf(await post('/pdf/jobs', body))).toMatchObject({ status: 404, code: 'UPLOAD_NOT_FOUND', details: { s3_key: zipKey } });
    expect(await stack.services.blobs.head(zipKey)).not.toBeNull();
  });

  it('takes a job from exactly the top band\'s credits and charges the actual band (document pages of a split), usage by files', async () => {
    const exact = await stack.account({ credits_usd: 0.02 });
    const sixty = await simplePdf(60);
    const key = await upload(sixty, exact.api_key);
    const res = await post('/pdf/jobs', { operation: 'split', inputs: [{ s3_key: key, filename: 'sixty.pdf' }], split: { mode: 'ranges', ranges: ['1', '2-3', '60'] } }, exact.api_key);
    expect(res.status).toBe(202);
    const job = await finished((await res.json()).job_id, exact.api_key);
    expect(job).toMatchObject({ status: 'completed', input_pages: 60, outputs_produced: 3 });
    const acct = (await stack.services.accounts.get(exact.account_id))!;
    // 60 document pages: the second band (×2), though the files hold 4 pages; 3 files of usage.
    expect({ credits: acct.credits_micros, pdfs: acct.total_pdf_count }).toEqual({ credits: 20_000 - 5_000, pdfs: 3 });
  });

  it('needs credits for the top page band at submission', async () => {
    const poor = await stack.account({ credits_usd: 0.015 });
    const key = await upload(three, poor.api_key);
    expect(await errorOf(await post('/pdf/jobs', { operation: 'split', inputs: [{ s3_key: key }], split: { mode: 'each_page' } }, poor.api_key))).toMatchObject({
      status: 403,
      code: 'INSUFFICIENT_CREDITS',
      details: { required_amount: 0.02 },
    });
  });
});
