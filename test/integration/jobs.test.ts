import { FINISHED_STATUSES, type Job, newJob } from '../../functions/core/jobs/job';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account();
  other = await stack.account();
});
afterAll(() => stack?.stop());

async function quickJob(store: boolean) {
  const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>job</p>', store } });
  expect(res.status).toBe(200);
  return store ? (await res.json()).job_id : res.headers.get('x-job-id')!;
}

async function errorOf(res: Response) {
  return { status: res.status, code: (await res.json()).error?.code };
}

describe('GET /jobs/{job_id} and /download', () => {
  it("hides another account's job behind 404 JOB_NOT_FOUND", async () => {
    const jobId = await quickJob(true);
    expect(await errorOf(await stack.request('GET', `/jobs/${jobId}`, { key: other.api_key }))).toEqual({ status: 404, code: 'JOB_NOT_FOUND' });
    expect(await errorOf(await stack.request('GET', `/jobs/${jobId}/download`, { key: other.api_key }))).toEqual({ status: 404, code: 'JOB_NOT_FOUND' });
    expect(await errorOf(await stack.request('GET', '/jobs/job_doesnotexist', { key: user.api_key }))).toEqual({ status: 404, code: 'JOB_NOT_FOUND' });
  });

  it('gives a fresh one-hour link for a stored quick job', async () => {
    const jobId = await quickJob(true);
    const res = await stack.request('GET', `/jobs/${jobId}/download`, { token: user.id_token });
    expect(res.status).toBe(200);
    const link = await res.json();
    expect(link).toMatchObject({ job_id: jobId, expires_in_seconds: 3600, content_type: 'application/pdf' });
    expect(link.size_bytes).toBeGreaterThan(500);
    expect(Date.parse(link.expires_at) - Date.now()).toBeGreaterThan(3500_000);
    const file = await fetch(link.download_url);
    expect(file.status).toBe(200);
    expect(Number(file.headers.get('content-length'))).toBe(link.size_bytes);
  });

  it('answers 404 OUTPUT_NOT_AVAILABLE for a quick job without store', async () => {
    const jobId = await quickJob(false);
    expect(await errorOf(await stack.request('GET', `/jobs/${jobId}/download`, { key: user.api_key }))).toEqual({ status: 404, code: 'OUTPUT_NOT_AVAILABLE' });
  });

  it('answers 409 JOB_NOT_READY while a job is still running', async () => {
    const job = newJob({ job_id: 'job_running1', account_id: user.account_id, job_type: 'long', status: 'processing', mode: 'html', now: new Date() });
    await stack.services.jobs.put(job);
    expect(await errorOf(await stack.request('GET', `/jobs/${job.job_id}/download`, { key: user.api_key }))).toEqual({ status: 409, code: 'JOB_NOT_READY' });
    const shown = await (await stack.request('GET', `/jobs/${job.job_id}`, { key: user.api_key })).json();
    expect(shown).toMatchObject({ status: 'processing', completed_at: null });
  });

  it('answers 410 OUTPUT_EXPIRED after retention, and when the object is gone', async () => {
    const jobId = await quickJob(true);
    const job = (await stack.services.jobs.get(jobId))!;
    await stack.services.jobs.put({ ...job, output: { ...job.output!, expires_at: '2020-01-01T00:00:00.000Z' } });
    expect(await errorOf(await stack.request('GET', `/jobs/${jobId}/download`, { key: user.api_key }))).toEqual({ status: 410, code: 'OUTPUT_EXPIRED' });
    const shown = await (await stack.request('GET', `/jobs/${jobId}`, { key: user.api_key })).json();
    expect(shown.s3_url).toBeUndefined();

    const second = await quickJob(true);
    await stack.services.blobs.delete((await stack.services.jobs.get(second))!.output!.key);
    expect(await errorOf(await stack.request('GET', `/jobs/${second}/download`, { key: user.api_key }))).toEqual({ status: 410, code: 'OUTPUT_EXPIRED' });
    // The job no longer offers a link to the gone file.
    const shownSecond = await (await stack.request('GET', `/jobs/${second}`, { key: user.api_key })).json();
    expect(shownSecond.s3_url).toBeUndefined();
    expect(shownSecond.s3_url_expires_at).toBeUndefined();
  });
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COMMON = ['job_id', 'status', 'job_type', 'mode', 'pages', 'truncated', 'created_at', 'completed_at', 'timeout_occurred', 'error_message', 'error_code'];
const BULK = ['bundle_type', 'file_count', 'processed_count', 'success_count', 'failure_count', 'pages_total'];
const PDFOP = ['operation', 'split_mode', 'input_files', 'input_pages', 'outputs_produced'];
const LINK = ['s3_url', 's3_url_expires_at'];

/** A seeded job of the user's (the stored record as the workers leave it), with its output stored when `stored`. */
async function seeded(id: string, job_type: Job['job_type'], status: Job['status'], changes: Partial<Job> = {}, stored?: { expires_at: string }) {
  const created = new Date(Date.now() - 60_000);
  const ended = FINISHED_STATUSES.has(status) ? new Date().toISOString() : null;
  const job: Job = { ...newJob({ job_id: id, account_id: user.account_id, job_type, status, mode: job_type === 'quick' || job_type === 'long' ? 'html' : null, now: created }), completed_at: ended, ...changes };
  if (stored) {
    const key = `outputs/${user.account_id}/${id}/${id}.pdf`;
    await stack.services.blobs.put(key, new TextEncoder().encode('%PDF-1.7 seeded'), 'application/pdf');
    job.output = { key, name: `${id}.pdf`, content_type: 'application/pdf', size_bytes: 15, expires_at: stored.expires_at };
  }
  await stack.services.jobs.put(job);
  return job;
}

const LATER = () => new Date(Date.now() + 86_400_000).toISOString();

describe('GET /jobs/{job_id}: the field set of each job type in each status', () => {
  async function shown(id: string) {
    const res = await stack.request('GET', `/jobs/${id}`, { key: user.api_key });
    expect(res.status).toBe(200);
    return res.json();
  }

  it.each([
    ['quick completed, stored', 'quick', 'completed', { pages: 2 }, true, [...COMMON, ...LINK]],
    ['quick timeout', 'quick', 'timeout', { timeout_occurred: true, error_code: 'QUICKJOB_TIMEOUT', error_message: 'slow' }, false, COMMON],
    ['long queued', 'long', 'queued', { pages: 3 }, false, COMMON],
    ['long processing', 'long', 'processing', { pages: 3, started_at: new Date().toISOString() }, false, COMMON],
    ['long completed', 'long', 'completed', { pages: 3 }, true, [...COMMON, ...LINK]],
    ['long failed', 'long', 'failed', { error_code: 'PDF_GENERATION_FAILED', error_message: 'boom' }, false, COMMON],
    ['long timeout', 'long', 'timeout', { timeout_occurred: true, error_code: 'RENDER_TIMEOUT', error_message: 'slow' }, false, COMMON],
    ['bulk queued', 'bulk', 'queued', { bundle_type: 'html', file_count: null, processed_count: 0, success_count: 0, failure_count: 0, pages_total: 0 }, false, [...COMMON, ...BULK]],
    ['bulk processing, cancel asked', 'bulk', 'processing', { bundle_type: 'html', file_count: 4, processed_count: 1, success_count: 1, failure_count: 0, pages_total: 0, cancel_requested: true }, false, [...COMMON, ...BULK, 'cancel_requested']],
    ['bulk partial_failed', 'bulk', 'partial_failed', { bundle_type: 'markdown', file_count: 4, processed_count: 4, success_count: 3, failure_count: 1, pages_total: 5 }, true, [...COMMON, ...BULK, ...LINK]],
    ['bulk failed', 'bulk', 'failed', { bundle_type: 'html', file_count: 2, processed_count: 2, success_count: 0, failure_count: 2, pages_total: 0, error_code: 'BULK_ALL_FILES_FAILED', error_message: 'none' }, false, [...COMMON, ...BULK]],
    ['pdfop queued', 'pdfop', 'queued', { operation: 'split', split_mode: 'each_page', input_files: 1, output_count: undefined }, false, [...COMMON, ...PDFOP, 'output_count', 'processed_count']],
    ['pdfop processing', 'pdfop', 'processing', { operation: 'merge', input_files: 2, input_pages: 8, output_count: 1, processed_count: 3 }, false, [...COMMON, ...PDFOP, 'output_count', 'processed_count']],
    ['pdfop completed', 'pdfop', 'completed', { operation: 'merge', input_files: 2, input_pages: 8, outputs_produced: 1, output_count: 1, processed_count: 7, pages: 7 }, true, [...COMMON, ...PDFOP, ...LINK]],
    ['pdfop failed by timeout', 'pdfop', 'failed', { operation: 'split', split_mode: 'every_n', input_files: 1, timeout_occurred: true, error_code: 'PDFOP_TIMEOUT', error_message: 'slow', failed_input: 'big.pdf' }, false, [...COMMON, ...PDFOP]],
  ] as const)('%s', async (name, type, status, changes, stored, fields) => {
    const id = `job_shape_${name.replace(/\W+/g, '_')}`;
    const job = await seeded(id, type, status, changes as Partial<Job>, stored ? { expires_at: LATER() } : undefined);
    const body = await shown(id);
    expect(Object.keys(body).sort()).toEqual([...fields].sort());
    // Types as the spec gives them: numbers, booleans, ISO 8601 strings, null rather than absent.
    expect(body.created_at).toMatch(ISO);
    if (FINISHED_STATUSES.has(status)) expect(body.completed_at).toMatch(ISO);
    else expect(body.completed_at).toBeNull();
    expect(typeof body.pages).toBe('number');
    expect(body.truncated).toBe(false);
    expect(body.timeout_occurred).toBe(job.timeout_occurred);
    expect(body.error_code).toBe(job.error_code);
    expect(body.error_message).toBe(job.error_message);
    if (stored) expect(body.s3_url_expires_at).toMatch(ISO);
    if (type === 'bulk') {
      expect(body.file_count).toBe(job.file_count ?? null);
      for (const f of ['processed_count', 'success_count', 'failure_count', 'pages_total']) expect(typeof body[f]).toBe('number');
    }
  });
});

describe('GET /jobs/{job_id}/download in each state', () => {
  const error = async (id: string) => errorOf(await stack.request('GET', `/jobs/${id}/download`, { key: user.api_key }));

  it('answers 409 JOB_NOT_READY before a job ends, whatever its output says (before 410 and 404)', async () => {
    for (const status of ['queued', 'processing'] as const) {
      await seeded(`job_dl_${status}_none`, 'bulk', status, { bundle_type: 'html' });
      expect(await error(`job_dl_${status}_none`)).toEqual({ status: 409, code: 'JOB_NOT_READY' });
      await seeded(`job_dl_${status}_old`, 'long', status, {}, { expires_at: '2020-01-01T00:00:00.000Z' });
      expect(await error(`job_dl_${status}_old`)).toEqual({ status: 409, code: 'JOB_NOT_READY' });
    }
  });

  it('answers 404 OUTPUT_NOT_AVAILABLE for a finished job without stored output, 410 once stored output is past retention', async () => {
    for (const [status, type] of [['failed', 'long'], ['timeout', 'long'], ['completed', 'quick'], ['failed', 'bulk'], ['cancelled', 'bulk']] as const) {
      await seeded(`job_dl_${type}_${status}`, type, status);
      expect(await error(`job_dl_${type}_${status}`)).toEqual({ status: 404, code: 'OUTPUT_NOT_AVAILABLE' });
    }
    for (const status of ['completed', 'partial_failed'] as const) {
      await seeded(`job_dl_expired_${status}`, 'bulk', status, { bundle_type: 'html' }, { expires_at: new Date(Date.now() - 1000).toISOString() });
      expect(await error(`job_dl_expired_${status}`)).toEqual({ status: 410, code: 'OUTPUT_EXPIRED' });
    }
  });

  it('links the output of a completed, partial_failed or cancelled-while-running job', async () => {
    for (const status of ['completed', 'partial_failed', 'cancelled'] as const) {
      await seeded(`job_dl_ok_${status}`, 'bulk', status, { bundle_type: 'html' }, { expires_at: LATER() });
      const res = await stack.request('GET', `/jobs/job_dl_ok_${status}/download`, { token: user.id_token });
      expect(res.status).toBe(200);
      const link = await res.json();
      expect(Object.keys(link).sort()).toEqual(['content_type', 'download_url', 'expires_at', 'expires_in_seconds', 'job_id', 'size_bytes']);
      expect(link).toMatchObject({ job_id: `job_dl_ok_${status}`, expires_in_seconds: 3600, content_type: 'application/pdf', size_bytes: 15 });
      expect(link.expires_at).toMatch(ISO);
    }
  });
});

describe('POST /jobs/{job_id}/cancel on jobs that cannot be cancelled', () => {
  const cancel = async (id: string) => {
    const res = await stack.request('POST', `/jobs/${id}/cancel`, { key: user.api_key });
    return { status: res.status, body: await res.json() };
  };

  it('answers 409 JOB_NOT_CANCELLABLE for a finished bulk job and for every other job type, in any status', async () => {
    for (const status of ['completed', 'partial_failed', 'failed'] as const) {
      await seeded(`job_cx_bulk_${status}`, 'bulk', status, { bundle_type: 'html' });
      const { status: code, body } = await cancel(`job_cx_bulk_${status}`);
      expect([status, code, body.error.code, body.error.details.reason]).toEqual([status, 409, 'JOB_NOT_CANCELLABLE', 'finished']);
      expect((await stack.services.jobs.get(`job_cx_bulk_${status}`))!.status).toBe(status);
    }
    for (const [type, status] of [['long', 'queued'], ['long', 'processing'], ['pdfop', 'queued'], ['pdfop', 'processing'], ['quick', 'completed']] as const) {
      await seeded(`job_cx_${type}_${status}`, type, status, type === 'pdfop' ? { operation: 'merge' } : {});
      const { status: code, body } = await cancel(`job_cx_${type}_${status}`);
      expect([type, status, code, body.error.code, body.error.details.reason]).toEqual([type, status, 409, 'JOB_NOT_CANCELLABLE', 'job_type']);
      expect((await stack.services.jobs.get(`job_cx_${type}_${status}`))!.status).toBe(status);
    }
  });

  it('answers a cancelled job again with 200 cancelled (cancelling twice is harmless)', async () => {
    await seeded('job_cx_cancelled', 'bulk', 'cancelled', { bundle_type: 'html', cancel_requested: true });
    expect(await cancel('job_cx_cancelled')).toEqual({ status: 200, body: { job_id: 'job_cx_cancelled', status: 'cancelled', cancel_requested: true, message: expect.any(String) } });
  });
});
