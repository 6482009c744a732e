/**
 * Which events real jobs fire and the exact field set each delivered payload carries (document 2, Events; document 1,
 * the job-state table), per job type: quick (none), long, background merge/split, bulk. Also history filters combined
 * with paging, on the webhook and the job routes.
 */
import type http from 'node:http';
import { EVENT_TYPES, jobEvent } from '../../functions/core/events/events';
import { type Job, newJob } from '../../functions/core/jobs/job';
import { objectKey } from '../../functions/core/jobs/storage-layout';
import { parsePdfOptions } from '../../functions/core/render/options';
import { planCatalogue } from '../../functions/core/billing/plans';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestServer, httpsServer, makeTestCa } from '../support/servers';
import { type TestAccount, type TestStack, jobEventNames, startTestStack } from '../support/stack';
import { rawZip } from '../support/zips';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  payload: Record<string, unknown>;
}

let receiver: TestServer;
let stack: TestStack;
const received: Received[] = [];

beforeAll(async () => {
  const ca = makeTestCa();
  receiver = await httpsServer(ca, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, payload: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(path.startsWith('/refuse') ? 401 : 200).end();
    });
  });
  stack = await startTestStack({
    ALLOW_PRIVATE_TARGETS: `localhost:${receiver.port}`,
    NODE_EXTRA_CA_CERTS: ca.caFile,
    LOCAL_SFN_RETRY_MS: '0',
    QUICKJOB_TIMEOUT_SECONDS: '3',
    LONGJOB_TIMEOUT_SECONDS: '3',
    LONGJOB_DEFER_SECONDS: '1',
    LOCAL_QUEUE_RETRY_MS: '100',
  });
  const standard = planCatalogue().find((p) => p.plan_id === 'standard')!;
  await stack.services.plans.put([{ ...standard, plan_id: 'tiny', name: 'Tiny budget', max_bulk_pages_per_job: 5 }]);
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const hookUrl = (path: string) => `https://localhost:${receiver.port}${path}`;
const settle = async () => {
  await stack.queues.get('render')!.drained();
  await stack.workflows.idle();
  await stack.queues.get('webhooks')!.drained();
};
const api = (user: TestAccount, method: string, route: string, json?: unknown) => stack.request(method, route, { token: user.id_token, json });

/** A webhook of `user` subscribed to every event, delivering to `path`. */
async function hookAll(user: TestAccount, path: string) {
  const res = await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl(path), events: [...EVENT_TYPES] });
  expect(res.status).toBe(201);
  return (await res.json()).webhook as Record<string, any>;
}

const deliveriesOf = (path: string, jobId: string) => received.filter((r) => r.path === path && r.payload.job_id === jobId);
/** `event → sorted keys` of every payload delivered for the job, in delivery order. */
const shapes = (path: string, jobId: string) => deliveriesOf(path, jobId).map((r) => [r.payload.event, Object.keys(r.payload).sort()]);

const COMMON = ['event', 'event_id', 'job_id', 'status', 'job_type', 'mode', 'created_at', 'timestamp'];
const sorted = (...fields: string[][]) => [...new Set(fields.flat())].sort();
const BULK = sorted(COMMON, ['bundle_type', 'file_count', 'success_count', 'failure_count', 'pages_total', 'processed_count', 'error_code', 'error_message', 'completed_at', 'files_url', 's3_url', 's3_url_expires_at']);

describe('quick jobs', () => {
  it('fire no event: not when they complete, fail or time out (job.timeout is never delivered)', async () => {
    const user = await stack.account({ credits_usd: 5 });
    await hookAll(user, '/quick');
    const done = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>quick</p>' } });
    expect(done.status).toBe(200);
    const doneId = done.headers.get('x-job-id')!;
    // 26 pages: over the quick limit, recorded as a failed job.
    const longDoc = Array.from({ length: 26 }, (_, i) => `<p style="${i ? 'page-break-before:always' : ''}">${i + 1}</p>`).join('');
    const tooLong = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: longDoc } });
    expect(tooLong.status).toBe(400);
    const failedId = (await tooLong.json()).error.details.job_id;
    const slow = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>spin</p><script>for(;;){}</script>' } });
    expect(slow.status).toBe(408);
    const slowId = (await slow.json()).error.details.job_id;
    await settle();
    expect((await stack.services.jobs.get(slowId))!.status).toBe('timeout');
    expect((await stack.services.jobs.get(failedId))!.status).toBe('failed');
    expect(await jobEventNames(stack, doneId)).toEqual([]);
    expect(await jobEventNames(stack, failedId)).toEqual([]);
    expect(await jobEventNames(stack, slowId)).toEqual([]);
    expect(received.filter((r) => r.path === '/quick')).toEqual([]);
  });
});

describe('long jobs', () => {
  it('deliver job.queued, job.processing and job.completed once each, with exactly their documented fields', async () => {
    const user = await stack.account({ credits_usd: 5 });
    await hookAll(user, '/long');
    const res = await stack.request('POST', '/longjob', { key: user.api_key, json: { input_type: 'html', html: '<p>long</p>' } });
    expect(res.status).toBe(202);
    const { job_id } = await res.json();
    await settle();
    expect(shapes('/long', job_id).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['job.completed', sorted(COMMON, ['pages', 'truncated', 'completed_at', 's3_url', 's3_url_expires_at'])],
      ['job.processing', sorted(COMMON, ['started_at'])],
      ['job.queued', sorted(COMMON)],
    ]);
    for (const { payload } of deliveriesOf('/long', job_id)) expect(Object.values(payload)).not.toContain(null);
  });

  it('deliver a timeout as job.failed (status timeout) with the failure fields, never as job.timeout', async () => {
    const user = await stack.account({ credits_usd: 5 });
    await hookAll(user, '/long-timeout');
    const job = newJob({ job_id: `job_spin_${Date.now()}`, account_id: user.account_id, job_type: 'long', status: 'queued', mode: 'html', now: new Date() });
    const input_key = objectKey('jobInputs', user.account_id, job.job_id, 'document.json');
    await stack.services.blobs.put(input_key, Buffer.from(JSON.stringify({ html: '<p>spin</p><script>for(;;){}</script>', options: parsePdfOptions({}) })), 'application/json');
    await stack.services.jobs.put({ ...job, input_key });
    await stack.queues.get('render')!.send({ job_id: job.job_id });
    await settle();
    expect(shapes('/long-timeout', job.job_id)).toEqual([
      ['job.processing', sorted(COMMON, ['started_at'])],
      ['job.failed', sorted(COMMON, ['error_code', 'error_message', 'failed_at'])],
    ]);
    expect(deliveriesOf('/long-timeout', job.job_id)[1].payload).toMatchObject({ status: 'timeout', error_code: 'RENDER_TIMEOUT', error_message: expect.any(String) });
  });
});

describe('background merge/split jobs', () => {
  it('deliver only job.completed or job.failed, with the merge/split fields on completion', async () => {
    const user = await stack.account({ credits_usd: 5 });
    await hookAll(user, '/pdfop');
    const upload = async (bytes: Uint8Array) => {
      const up = await (await stack.request('POST', '/pdf/upload-url', { key: user.api_key, json: { content_length_bytes: bytes.length } })).json();
      expect((await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(bytes) })).status).toBe(200);
      return up.s3_key as string;
    };
    const merge = await stack.request('POST', '/pdf/jobs', { key: user.api_key, json: { operation: 'merge', inputs: [{ s3_key: await upload(await simplePdf(1)), filename: 'a.pdf' }, { s3_key: await upload(await simplePdf(2)), filename: 'b.pdf' }] } });
    expect(merge.status).toBe(202);
    const mergeId = (await merge.json()).job_id;
    const split = await stack.request('POST', '/pdf/jobs', { key: user.api_key, json: { operation: 'split', inputs: [{ s3_key: await upload(await simplePdf(2)), filename: 'c.pdf' }], split: { mode: 'extract', pages: '9' } } });
    expect(split.status).toBe(202);
    const splitId = (await split.json()).job_id;
    await settle();
    expect(shapes('/pdfop', mergeId)).toEqual([
      ['job.completed', sorted(COMMON, ['pages', 'truncated', 'completed_at', 's3_url', 's3_url_expires_at', 'operation', 'input_pages', 'output_count', 'warnings', 'files_url'])],
    ]);
    expect(shapes('/pdfop', splitId)).toEqual([['job.failed', sorted(COMMON, ['error_code', 'error_message', 'failed_at', 'operation'])]]);
    expect(await jobEventNames(stack, mergeId)).toEqual(['job.completed']);
    expect(await jobEventNames(stack, splitId)).toEqual(['job.failed']);
  });
});

describe('bulk jobs', () => {
  const zipB64 = (entries: { name: string; data: string }[]) => rawZip(entries).toString('base64');
  const pages = (n: number) => Array.from({ length: n }, (_, i) => `<p style="${i ? 'page-break-before:always' : ''}">page ${i + 1}</p>`).join('');
  async function submit(user: TestAccount, body: Record<string, unknown>) {
    const res = await stack.request('POST', '/bulkjob', { key: user.api_key, json: body });
    expect(res.status).toBe(202);
    return (await res.json()).job_id as string;
  }

  it('deliver one bulk.job.* event per job, each with the same field set whichever way the job ended', async () => {
    const user = await stack.account({ credits_usd: 5 });
    const tiny = await stack.account({ plan_id: 'tiny', credits_usd: 1 });
    await hookAll(user, '/bulk');
    await hookAll(tiny, '/bulk');
    const completed = await submit(user, { zip_base64: zipB64([{ name: 'a.html', data: '<p>a</p>' }]) });
    // Rejected before any file is converted (job-level failure).
    const rejected = await submit(user, { zip_base64: Buffer.from('not a zip archive').toString('base64') });
    // The plan's page budget skips the later files: partial_failed.
    const partial = await submit(tiny, { zip_base64: zipB64([0, 1, 2, 3].map((i) => ({ name: `f${i}.html`, data: pages(2) }))) });
    // Converted no file (the first is over the page budget): failed when the job finishes.
    const none = await submit(tiny, { zip_base64: zipB64([{ name: 'big.html', data: pages(6) }]) });
    // Cancelled while queued.
    const queued = { ...newJob({ job_id: `job_bulkq_${Date.now()}`, account_id: user.account_id, job_type: 'bulk', status: 'queued', now: new Date() }), bundle_type: 'html', file_count: null } as Job;
    await stack.services.jobs.put(queued);
    expect((await stack.request('POST', `/jobs/${queued.job_id}/cancel`, { key: user.api_key })).status).toBe(200);
    await settle();

    const expected: [string, string][] = [
      [completed, 'bulk.job.completed'],
      [rejected, 'bulk.job.failed'],
      [partial, 'bulk.job.partial'],
      [none, 'bulk.job.failed'],
      [queued.job_id, 'bulk.job.cancelled'],
    ];
    for (const [jobId, event] of expected) {
      expect([jobId, await jobEventNames(stack, jobId)]).toEqual([jobId, [event]]);
      expect([jobId, shapes('/bulk', jobId)]).toEqual([jobId, [[event, BULK]]]);
      expect(deliveriesOf('/bulk', jobId)[0].payload.files_url).toBe(`/jobs/${jobId}/files`);
    }
  });
});

describe('history', () => {
  /** Writes a finished long job with its event, as a worker would, and waits for its deliveries. */
  async function emit(user: TestAccount, type: 'job.completed' | 'job.failed'): Promise<string> {
    const now = new Date();
    const base = newJob({ job_id: `job_h${Math.random().toString(36).slice(2, 12)}`, account_id: user.account_id, job_type: 'long', status: 'queued', mode: 'html', now });
    const job: Job =
      type === 'job.completed'
        ? { ...base, status: 'completed', completed_at: now.toISOString() }
        : { ...base, status: 'failed', error_code: 'PDF_GENERATION_FAILED', error_message: 'x', completed_at: now.toISOString() };
    await stack.services.jobs.put(job, [jobEvent(type, job, now)]);
    await stack.queues.get('webhooks')!.drained();
    return job.job_id;
  }
  /** Every page of a history route with `query`, following next_token: the job ids of each page. */
  async function pagesOf(user: TestAccount, route: string, query: string, key: 'job_id' | 'webhook_id' = 'job_id') {
    const out: string[][] = [];
    let token: string | null = null;
    do {
      const res = await api(user, 'GET', `${route}?${query}${token ? `&next_token=${encodeURIComponent(token)}` : ''}`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.count).toBe(body.history.length);
      out.push(body.history.map((h: any) => h[key]));
      token = body.next_token;
    } while (token && out.length < 20);
    return out;
  }

  it('pages through status and event_type filters together, newest first, on the webhook route', async () => {
    const user = await stack.account();
    const hook = (await (await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/hist'), events: ['job.completed', 'job.failed'] })).json()).webhook;
    const order: [string, string][] = [];
    for (const type of ['job.completed', 'job.failed', 'job.completed', 'job.completed', 'job.failed', 'job.completed', 'job.failed', 'job.completed'] as const) {
      order.push([type, await emit(user, type)]);
    }
    const newest = (type: string) => order.filter(([t]) => t === type).map(([, id]) => id).reverse();
    const route = `/accounts/me/webhooks/${hook.webhook_id}/history`;
    expect(await pagesOf(user, route, 'limit=2&event_type=job.completed')).toEqual([newest('job.completed').slice(0, 2), newest('job.completed').slice(2, 4), newest('job.completed').slice(4)]);
    expect((await pagesOf(user, route, 'limit=2&event_type=job.failed&status=success')).flat()).toEqual(newest('job.failed'));
    expect(await pagesOf(user, route, 'limit=2&event_type=job.failed&status=failed')).toEqual([[]]);
    expect((await pagesOf(user, route, 'limit=3&status=success')).flat()).toEqual(order.map(([, id]) => id).reverse());
  });

  it('pages through a status filter on the job route, across webhooks', async () => {
    const user = await stack.account();
    const ok = [];
    for (const path of ['/hist-a', '/hist-b', '/hist-c']) ok.push((await (await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl(path), events: ['job.failed'] })).json()).webhook.webhook_id);
    const refused = (await (await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/refuse'), events: ['job.failed'] })).json()).webhook.webhook_id;
    const jobId = await emit(user, 'job.failed');
    const route = `/jobs/${jobId}/webhooks/history`;
    const succeeded = await pagesOf(user, route, 'limit=1&status=success', 'webhook_id');
    expect(succeeded.flat().sort()).toEqual([...ok].sort());
    expect(succeeded.every((p) => p.length === 1)).toBe(true);
    expect(await pagesOf(user, route, 'limit=1&status=failed&event_type=job.failed', 'webhook_id')).toEqual([[refused]]);
    expect(await pagesOf(user, route, 'limit=1&event_type=job.completed', 'webhook_id')).toEqual([[]]);
  });
});

describe('webhooks per user', () => {
  it("follows the plan's max_webhooks, 5 where the plan leaves it unset, and says when a plan allows more", async () => {
    const standard = planCatalogue().find((p) => p.plan_id === 'standard')!;
    const { max_webhooks: _unset, ...unset } = { ...standard, plan_id: 'hooks-unset', name: 'Hooks unset' };
    await stack.services.plans.put([
      { ...standard, plan_id: 'hooks2', name: 'Two hooks', max_webhooks: 2 },
      unset as typeof standard,
    ]);
    const create = (user: TestAccount, i: number) => api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl(`/limit/${i}`) });
    const two = await stack.account({ plan_id: 'hooks2', credits_usd: 1 });
    for (const i of [1, 2]) expect((await create(two, i)).status).toBe(201);
    const refused = await create(two, 3);
    expect(refused.status).toBe(403);
    // The catalogue's plans allow 5: an upgrade would help.
    expect((await refused.json()).error).toMatchObject({
      code: 'WEBHOOK_LIMIT_EXCEEDED',
      details: { plan_id: 'hooks2', plan_type: 'pay_as_you_go', current_count: 2, max_allowed: 2, upgrade_required: true },
    });

    const five = await stack.account({ plan_id: 'hooks-unset', credits_usd: 1 });
    for (const i of [1, 2, 3, 4, 5]) expect((await create(five, i)).status).toBe(201);
    const sixth = await create(five, 6);
    expect(sixth.status).toBe(403);
    expect((await sixth.json()).error.details).toEqual({ plan_id: 'hooks-unset', plan_type: 'pay_as_you_go', current_count: 5, max_allowed: 5, upgrade_required: false });
  });
});
