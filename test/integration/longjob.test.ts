import { newJob } from '../../functions/core/jobs/job';
import { objectKey } from '../../functions/core/jobs/storage-layout';
import { parsePdfOptions } from '../../functions/core/render/options';
import { readPdf } from '../support/pdf';
import { multipart } from '../support/images';
import { type TestServer, httpsServer, makeTestCa } from '../support/servers';
import { type TestAccount, type TestStack, jobEventNames, mailsTo, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;
/** An HTTPS server the stack may reach and trusts: where a job's webhook_url points, to show nothing is sent there. */
let receiver: TestServer;

beforeAll(async () => {
  const ca = makeTestCa();
  receiver = await httpsServer(ca, (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok'));
  stack = await startTestStack({ LONGJOB_TIMEOUT_SECONDS: '3', LONGJOB_DEFER_SECONDS: '1', LOCAL_QUEUE_RETRY_MS: '100', ALLOW_PRIVATE_TARGETS: `localhost:${receiver.port}`, NODE_EXTRA_CA_CERTS: ca.caFile });
  user = await stack.account({ credits_usd: 5, email: 'owner@example.com' });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const queue = () => stack.queues.get('render')!;
/** Sends the job's message to the local render queue and waits until the queue is idle. */
async function deliver(jobId: string) {
  await queue().send({ job_id: jobId });
  await queue().drained();
}
const submit = (body: unknown, key = user.api_key) => stack.request('POST', '/longjob', { key, json: body });
const getJob = async (id: string) => (await stack.request('GET', `/jobs/${id}`, { key: user.api_key })).json();

const eventsOf = (jobId: string) => jobEventNames(stack, jobId);

/** A queued long job written directly, as the worker would find it (for worker-only scenarios). */
async function queuedFixture(html: string, account = user) {
  const job = newJob({ job_id: `job_fixture_${Math.random().toString(36).slice(2)}`, account_id: account.account_id, job_type: 'long', status: 'queued', mode: 'html', now: new Date() });
  const input_key = objectKey('jobInputs', account.account_id, job.job_id, 'document.json');
  await stack.services.blobs.put(input_key, Buffer.from(JSON.stringify({ html, options: parsePdfOptions({}) })), 'application/json');
  await stack.services.jobs.put({ ...job, input_key });
  return job.job_id;
}

describe('POST /longjob', () => {
  it('queues the job, renders it in the worker, charges once, mails the owner and records every event', async () => {
    const before = Date.now();
    const res = await submit({ input_type: 'html', html: '<title>Long</title><h1>Long document</h1>' });
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body).toMatchObject({ status: 'queued' });
    expect(typeof body.message).toBe('string');
    const queued = await stack.services.jobs.get(body.job_id);
    expect(Date.parse(body.estimated_completion) - Date.parse(queued!.created_at)).toBe(180_000);
    expect(Date.parse(queued!.created_at)).toBeGreaterThanOrEqual(before - 1000);

    await queue().drained();
    const job = await getJob(body.job_id);
    expect(job).toMatchObject({ job_type: 'long', mode: 'html', status: 'completed', pages: 1, timeout_occurred: false, error_code: null });
    expect(job.s3_url).toEqual(expect.any(String));
    const pdf = new Uint8Array(await (await fetch(job.s3_url)).arrayBuffer());
    expect((await readPdf(pdf))[0].text).toContain('Long document');

    expect(await eventsOf(body.job_id)).toEqual(['job.queued', 'job.processing', 'job.completed']);
    expect((await stack.services.accounts.get(user.account_id))!.total_pdf_count).toBe(1);
    expect(mailsTo(stack, 'owner@example.com').some((m) => m.includes(`Subject: Your PDF is ready (${body.job_id})`))).toBe(true);
    // The worker removed the queued document.
    expect(await stack.services.blobs.get(queued!.input_key!)).toBeNull();
  });

  it('converts Markdown and honours email_notification: false', async () => {
    const quiet = await stack.account({ credits_usd: 1, email: 'quiet@example.com' });
    const res = await submit({ input_type: 'markdown', markdown: '# Quiet report\n\n- one', email_notification: false }, quiet.api_key);
    expect(res.status).toBe(202);
    await queue().drained();
    const job = await (await stack.request('GET', `/jobs/${(await res.json()).job_id}`, { key: quiet.api_key })).json();
    expect(job).toMatchObject({ status: 'completed', mode: 'markdown' });
    expect(mailsTo(stack, 'quiet@example.com')).toEqual([]);
  });

  it('refuses over 100 pages at submission, creating no job; a longer document is printed only to page 101', async () => {
    const html = Array.from({ length: 3000 }, (_, i) => `<div style="page-break-after:always">P${i}</div>`).join('');
    const res = await submit({ input_type: 'html', html });
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { pages_at_least: 101, max_pages: 100 } });
    expect(error.message).toContain('more than 100 pages');
    // A selection is cut the same way; one that fits is counted exactly.
    const ranged = await submit({ input_type: 'html', html, options: { pageRanges: '5-10000' } });
    expect((await ranged.json()).error).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { pages_at_least: 101, max_pages: 100 } });
    const fits = await submit({ input_type: 'html', html, options: { pageRanges: '1-50, 2000-2050' } });
    expect((await fits.json()).error).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { pages: 101, max_pages: 100 } });
  });

  it.each<[string, unknown, string]>([
    ['url input', { input_type: 'url', url: 'https://example.com' }, 'INVALID_INPUT_TYPE'],
    ['image input', { input_type: 'image' }, 'INVALID_INPUT_TYPE'],
    ['no input_type', { html: '<p>x</p>' }, 'MISSING_INPUT_TYPE'],
    ['no content', { input_type: 'html' }, 'MISSING_CONTENT_FIELD'],
    ['non-boolean email_notification', { input_type: 'html', html: '<p>x</p>', email_notification: 'yes' }, 'INVALID_PARAMETER'],
    ['http webhook_url', { input_type: 'html', html: '<p>x</p>', webhook_url: 'http://hooks.example.com/' }, 'INVALID_WEBHOOK_URL'],
    ['garbage webhook_url', { input_type: 'html', html: '<p>x</p>', webhook_url: 'not a url' }, 'INVALID_WEBHOOK_URL'],
  ])('refuses %s with %s', async (_name, body, code) => {
    const res = await submit(body);
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(code);
  });

  it('accepts an https webhook_url and sends nothing to it: only registered webhooks are notified', async () => {
    const owner = await stack.account({ credits_usd: 1 });
    // Positive control: a webhook registered on the same receiver is notified of the job, so a delivery to the
    // job's webhook_url would arrive too.
    const hook = await stack.request('POST', '/accounts/me/webhooks', { token: owner.id_token, json: { url: `https://localhost:${receiver.port}/registered` } });
    expect(hook.status).toBe(201);
    const res = await submit({ input_type: 'html', html: '<p>hook</p>', webhook_url: `https://localhost:${receiver.port}/per-job` }, owner.api_key);
    expect(res.status).toBe(202);
    const { job_id } = await res.json();
    await queue().drained();
    await stack.queues.get('webhooks')!.drained();
    expect((await stack.services.jobs.get(job_id))!.status).toBe('completed');
    expect(receiver.hits).toEqual(['/registered']);
  });

  it('refuses multipart bodies with INVALID_PARAMETER naming the content type (not as a body that is no JSON)', async () => {
    const { body, contentType } = multipart([{ name: 'input_type', value: 'html' }, { name: 'html', value: '<p>x</p>' }]);
    const res = await stack.request('POST', '/longjob', { key: user.api_key, body, headers: { 'Content-Type': contentType } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'content-type' } });
  });

  it('refuses a pending account and an account without credits', async () => {
    const pending = await stack.account({ plan_id: 'pending' });
    expect((await submit({ input_type: 'html', html: '<p>x</p>' }, pending.api_key)).status).toBe(402);
    const broke = await stack.account({ credits_usd: 0 });
    const res = await submit({ input_type: 'html', html: '<p>x</p>' }, broke.api_key);
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('INSUFFICIENT_CREDITS');
  });
});

describe('render worker', () => {
  it('ends a job that runs past its time limit as timeout, without charge, with job.failed and a failure email', async () => {
    const owner = await stack.account({ credits_usd: 1, email: 'slow@example.com' });
    const jobId = await queuedFixture('<p>spin</p><script>for(;;){}</script>', owner);
    await deliver(jobId);
    const job = await stack.services.jobs.get(jobId);
    // The limit is seconds here (LONGJOB_TIMEOUT_SECONDS): the message says so, not "0 minutes".
    expect(job).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'RENDER_TIMEOUT', error_message: expect.stringMatching(/longer than \d+ seconds; nothing was charged/) });
    const shown = await (await stack.request('GET', `/jobs/${jobId}`, { key: owner.api_key })).json();
    expect(shown).toMatchObject({ status: 'timeout', timeout_occurred: true, completed_at: job!.completed_at, pages: expect.any(Number) });
    expect(shown.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(shown).not.toHaveProperty('s3_url');
    expect(await eventsOf(jobId)).toEqual(['job.processing', 'job.failed']);
    expect((await stack.services.accounts.get(owner.account_id))!.total_pdf_count).toBe(0);
    expect(mailsTo(stack, 'slow@example.com').some((m) => m.includes('Your PDF job failed'))).toBe(true);
  });

  it("keeps one account's spinning jobs to one of the two local workers, so another account's job renders at once", async () => {
    const hog = await stack.account({ credits_usd: 1 });
    const other = await stack.account({ credits_usd: 1 });
    const spinning = [await queuedFixture('<p>spin</p><script>for(;;){}</script>', hog), await queuedFixture('<p>spin</p><script>for(;;){}</script>', hog)];
    const prompt = await queuedFixture('<p>prompt</p>', other);
    for (const id of [...spinning, prompt]) await queue().send({ job_id: id });
    await queue().drained();

    // Two workers take the two spinning jobs at once, so either may win the account's slot: first is the one that did.
    const [first, second] = (await Promise.all(spinning.map((id) => stack.services.jobs.get(id)))).sort((a, b) => a!.started_at!.localeCompare(b!.started_at!));
    const done = (await stack.services.jobs.get(prompt))!;
    expect(done.status).toBe('completed');
    expect([first!.status, second!.status]).toEqual(['timeout', 'timeout']);
    // The other account's job finished while the first spinning job still held its worker; the second began only after it.
    expect(done.completed_at! < first!.completed_at!).toBe(true);
    expect(second!.started_at! >= first!.completed_at!).toBe(true);
  });

  it('renders and charges once when the same message is delivered twice, and ignores later redeliveries', async () => {
    const owner = await stack.account({ credits_usd: 1 });
    const jobId = await queuedFixture('<p>twice</p>', owner);
    await Promise.all([queue().send({ job_id: jobId }), queue().send({ job_id: jobId })]);
    await queue().drained();
    await deliver(jobId);
    expect(await stack.services.jobs.get(jobId)).toMatchObject({ status: 'completed' });
    expect(await eventsOf(jobId)).toEqual(['job.processing', 'job.completed']);
    expect(await stack.services.accounts.get(owner.account_id)).toMatchObject({ total_pdf_count: 1, credits_micros: 990_000 });
  });

  it('takes over a job whose worker died (its lease ran out) within what is left of its 15 minutes', async () => {
    const jobId = await queuedFixture('<p>orphan</p>');
    const job = (await stack.services.jobs.get(jobId))!;
    // The limit is 3 s here (LONGJOB_TIMEOUT_SECONDS): started a second ago, two are left.
    await stack.services.jobs.put({ ...job, status: 'processing', started_at: new Date(Date.now() - 1000).toISOString(), lease_until: new Date(Date.now() - 100).toISOString() });
    await deliver(jobId);
    expect(await stack.services.jobs.get(jobId)).toMatchObject({ status: 'completed' });
  });

  it('ends as a timeout, unrendered and uncharged, a job whose worker died when its message comes back after its 15 minutes', async () => {
    const owner = await stack.account({ credits_usd: 1 });
    const jobId = await queuedFixture('<p>orphan</p>', owner);
    const job = (await stack.services.jobs.get(jobId))!;
    await stack.services.jobs.put({ ...job, status: 'processing', started_at: new Date(Date.now() - 3600_000).toISOString(), lease_until: new Date(Date.now() - 1000).toISOString() });
    await deliver(jobId);
    expect(await stack.services.jobs.get(jobId)).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'RENDER_TIMEOUT', output: null });
    expect(await eventsOf(jobId)).toEqual(['job.failed']);
    expect((await stack.services.accounts.get(owner.account_id))!.credits_micros).toBe(1_000_000);
  });

  it('leaves a job alone while another worker holds its lease', async () => {
    const jobId = await queuedFixture('<p>held</p>');
    const job = (await stack.services.jobs.get(jobId))!;
    await stack.services.jobs.put({ ...job, status: 'processing', lease_until: new Date(Date.now() + 600_000).toISOString() });
    await deliver(jobId);
    expect(await stack.services.jobs.get(jobId)).toMatchObject({ status: 'processing' });
  });

  it('does not fail, on its last delivery, a job another worker took meanwhile and holds under a live lease', async () => {
    const owner = await stack.account({ credits_usd: 1, email: 'taken@example.com' });
    const jobId = await queuedFixture('<p>taken</p>', owner);
    const slots = stack.services.jobSlots;
    const acquire = slots.acquire.bind(slots);
    let tries = 0;
    // Every delivery of this message fails unexpectedly (a table outage); before the last one fails, a duplicate
    // message's worker has claimed the job and is rendering it.
    slots.acquire = async (input) => {
      if (input.jobId !== jobId) return acquire(input);
      if (++tries === 3) {
        const job = (await stack.services.jobs.get(jobId))!;
        await stack.services.jobs.put({ ...job, status: 'processing', started_at: new Date().toISOString(), lease_until: new Date(Date.now() + 600_000).toISOString() });
      }
      throw new Error('table throttled');
    };
    try {
      await deliver(jobId);
    } finally {
      slots.acquire = acquire;
    }
    expect(tries).toBe(3);
    // The other worker finishes it: the job is not ended under it, and its owner is not told it failed.
    expect(await stack.services.jobs.get(jobId)).toMatchObject({ status: 'processing', error_code: null });
    expect(await eventsOf(jobId)).not.toContain('job.failed');
    expect(mailsTo(stack, 'taken@example.com')).toEqual([]);
  });

  it('fails a job whose processing keeps failing unexpectedly, instead of leaving it queued, with the failure email', async () => {
    const owner = await stack.account({ credits_usd: 1, email: 'doomed@example.com' });
    const jobId = await queuedFixture('<p>doomed</p>', owner);
    const blobs = stack.services.blobs;
    const get = blobs.get.bind(blobs);
    blobs.get = async () => {
      throw new Error('storage outage');
    };
    try {
      await deliver(jobId);
    } finally {
      blobs.get = get;
    }
    expect(await stack.services.jobs.get(jobId)).toMatchObject({ status: 'failed', error_code: 'PDF_GENERATION_FAILED' });
    expect((await eventsOf(jobId)).at(-1)).toBe('job.failed');
    // The spec's "long job fails: job.failed event; failure email unless disabled", as for every other failure.
    expect(mailsTo(stack, 'doomed@example.com').filter((m) => m.includes(`Subject: Your PDF job failed (${jobId})`))).toHaveLength(1);
    expect((await stack.services.accounts.get(owner.account_id))!.credits_micros).toBe(1_000_000);
  });
});
