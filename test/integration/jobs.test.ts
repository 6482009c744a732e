import { newJob } from '../../functions/core/jobs/job';
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
