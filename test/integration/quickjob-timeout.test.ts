import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;

beforeAll(async () => {
  // The 30 s and 28 s limits, shortened so the test is quick; the details report the limit in force.
  stack = await startTestStack({ QUICKJOB_TIMEOUT_SECONDS: '3', LONGJOB_SUBMISSION_SECONDS: '2' });
  user = await stack.account({ credits_usd: 1 });
});
afterAll(() => stack?.stop());

describe('quick job time limit', () => {
  it('answers 408 QUICKJOB_TIMEOUT, records a timeout job, charges nothing, and keeps serving', async () => {
    const before = (await stack.services.accounts.get(user.account_id))!.credits_micros;
    const started = Date.now();
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>spin</p><script>for(;;){}</script>' } });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(res.status).toBe(408);
    const { error } = await res.json();
    expect(error).toMatchObject({ code: 'QUICKJOB_TIMEOUT', details: { timeout_seconds: 3, suggestion: 'use_longjob_endpoint' } });

    const job = await (await stack.request('GET', `/jobs/${error.details.job_id}`, { key: user.api_key })).json();
    expect(job).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'QUICKJOB_TIMEOUT' });
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBe(before);

    const next = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>after</p>' } });
    expect(next.status).toBe(200);
  });
});

describe('long-job submission time limit', () => {
  it('answers 408 RENDER_TIMEOUT when counting the pages takes too long, and creates no job', async () => {
    const res = await stack.request('POST', '/longjob', { key: user.api_key, json: { input_type: 'html', html: '<p>spin</p><script>for(;;){}</script>' } });
    expect(res.status).toBe(408);
    expect((await res.json()).error).toMatchObject({ code: 'RENDER_TIMEOUT', details: { timeout_seconds: 2 } });
    const jobs = await (await stack.request('GET', '/jobs?job_type=long', { token: user.id_token })).json();
    expect(jobs.count).toBe(0);
  });
});
