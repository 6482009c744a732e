/**
 * Webhooks end to end over HTTP against the local stack: management routes, the outbox → dispatcher →
 * signed delivery path to a loopback HTTPS receiver with its own CA, retries, the guard at delivery,
 * rotation, history, and Stripe's own verifier accepting our signatures.
 */
import type http from 'node:http';
import Stripe from 'stripe';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/jobs';
import { createDynamo } from '../../functions/adapters/dynamodb/client';
import { type EventType, jobEvent } from '../../functions/core/events/events';
import { type Job, completed, newJob } from '../../functions/core/jobs/job';
import { sweepOutbox } from '../../functions/core/webhooks/dispatch';
import { verifyWebhookSignature } from '../../functions/core/webhooks/signature';
import { webhookPayloadSchema } from '../../functions/http/openapi/responses';
import type { Webhook } from '../../functions/core/webhooks/webhook';
import { readPdf } from '../support/pdf';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestCa, type TestServer, httpsServer, makeTestCa } from '../support/servers';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { until } from '../support/wait';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

let ca: TestCa;
let receiver: TestServer;
let stack: TestStack;
const received: Received[] = [];
const hangCount = new Map<string, number>();
/** Answers to `/hold` requests kept waiting until the test lets them go (`holding` false answers at once). */
const held: http.ServerResponse[] = [];
let holding = true;
/** Run by the receiver before it answers a request to that path (e.g. to change the webhook mid-series). */
const beforeAnswer = new Map<string, (r: Received) => Promise<void>>();
const stripe = new Stripe('sk_test_unused');

function receive(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const path = req.url ?? '/';
    const got = { path, headers: req.headers, body: Buffer.concat(chunks) };
    received.push(got);
    await beforeAnswer.get(path)?.(got);
    const route = path.split('?')[0];
    if (route.startsWith('/ok')) return res.writeHead(200, { 'Content-Type': 'text/plain' }).end('thanks');
    if (route === '/fail500') return res.writeHead(500).end('broken');
    if (route === '/big-ok') return res.writeHead(200, { 'Content-Type': 'text/plain' }).end(Buffer.alloc(3 * 1024 * 1024, 0x61));
    if (route === '/unauthorized') return res.writeHead(401).end('bad signature');
    if (route === '/redirect') return res.writeHead(302, { Location: '/ok/after-redirect' }).end();
    // Switches protocols unasked, written raw (Node's server would not send a 101 to a request naming no Upgrade).
    if (route === '/switch') return void req.socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    if (route === '/hold') {
      if (holding) return void held.push(res);
      return res.writeHead(204).end();
    }
    if (route === '/hang-once') {
      const n = (hangCount.get(path) ?? 0) + 1;
      hangCount.set(path, n);
      if (n === 1) return; // never answers the first attempt
      return res.writeHead(204).end();
    }
    res.writeHead(404).end();
  });
}

beforeAll(async () => {
  ca = makeTestCa();
  receiver = await httpsServer(ca, receive);
  stack = await startTestStack({
    ALLOW_PRIVATE_TARGETS: `localhost:${receiver.port}`,
    NODE_EXTRA_CA_CERTS: ca.caFile,
    // A public-looking name that resolves to loopback when the delivery connects.
    LOCAL_DNS_OVERRIDES: 'hooks.example.com=127.0.0.1',
    LOCAL_SFN_RETRY_MS: '0',
  });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const hookUrl = (path: string) => `https://localhost:${receiver.port}${path}`;
const dispatcher = () => stack.queues.get('webhooks')!;
const api = (user: TestAccount, method: string, route: string, json?: unknown) => stack.request(method, route, { token: user.id_token, json });

async function createHook(user: TestAccount, body: Record<string, unknown>) {
  const res = await api(user, 'POST', '/accounts/me/webhooks', body);
  expect(res.status).toBe(201);
  return (await res.json()).webhook as Record<string, any>;
}

async function refusal(res: Response, status: number, code: string) {
  const body = await res.json();
  expect(`${res.status} ${body.error?.code}`).toBe(`${status} ${code}`);
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

/** Writes a job change with its event as a worker would (through the outbox), then waits for the dispatcher. */
async function emit(user: TestAccount, type: EventType, changes: Partial<Job> = {}): Promise<Job> {
  const now = new Date();
  const job: Job = { ...newJob({ job_id: `job_wh${Math.random().toString(36).slice(2, 12)}`, account_id: user.account_id, job_type: 'long', status: 'queued', mode: 'html', now }), ...changes };
  await stack.services.jobs.put(job, [jobEvent(type, job, now)]);
  await dispatcher().drained();
  return job;
}

const deliveriesTo = (path: string) => received.filter((r) => r.path === path);
const history = async (user: TestAccount, webhookId: string, query = '') => (await api(user, 'GET', `/accounts/me/webhooks/${webhookId}/history${query}`)).json();
const getHook = async (user: TestAccount, id: string) => (await (await api(user, 'GET', `/accounts/me/webhooks/${id}`)).json()).webhook;

describe('webhook management (ID token only)', () => {
  it('creates a webhook with every resource field, the defaults and a secret shown once', async () => {
    const user = await stack.account();
    const res = await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/ok') });
    expect(res.status).toBe(201);
    const { webhook } = await res.json();
    expect(webhook).toEqual({
      webhook_id: expect.stringMatching(/^wh_[0-9A-HJKMNP-TV-Z]{26}$/),
      name: 'localhost',
      url: hookUrl('/ok'),
      events: ['job.completed'],
      is_active: true,
      signing_enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      created_at: expect.any(String),
      updated_at: webhook.created_at,
      last_triggered_at: null,
      last_success_at: null,
      last_failure_at: null,
      success_count: 0,
      failure_count: 0,
    });
    const fetched = await getHook(user, webhook.webhook_id);
    expect(fetched).not.toHaveProperty('secret');
    // Only while a rotated-out secret still signs.
    expect(webhook).not.toHaveProperty('previous_secret_expires_at');
    const { secret: _secret, ...shown } = webhook;
    expect(fetched).toEqual(shown);
    // The secret is stored sealed, never as given.
    const stored = (await stack.services.webhooks.get(webhook.webhook_id))!;
    expect(JSON.stringify(stored)).not.toContain(webhook.secret);
  });

  it('refuses API keys on every webhook route and the job history route', async () => {
    const user = await stack.account();
    for (const [method, route] of [
      ['POST', '/accounts/me/webhooks'],
      ['GET', '/accounts/me/webhooks'],
      ['GET', '/accounts/me/webhooks/wh_x'],
      ['PUT', '/accounts/me/webhooks/wh_x'],
      ['DELETE', '/accounts/me/webhooks/wh_x'],
      ['POST', '/accounts/me/webhooks/wh_x/rotate-secret'],
      ['GET', '/accounts/me/webhooks/wh_x/history'],
      ['GET', '/jobs/job_x/webhooks/history'],
    ]) {
      const res = await stack.request(method, route, { key: user.api_key, json: method === 'GET' || method === 'DELETE' ? undefined : { url: hookUrl('/ok') } });
      expect(`${method} ${route} ${res.status}`).toBe(`${method} ${route} 401`);
    }
  });

  it('lists with is_active and event filters and sealed page tokens', async () => {
    const user = await stack.account();
    const a = await createHook(user, { url: hookUrl('/ok/a'), events: ['job.failed'] });
    const b = await createHook(user, { url: hookUrl('/ok/b'), events: ['job.completed', 'job.failed'], is_active: false });
    const c = await createHook(user, { url: hookUrl('/ok/c') });
    const list = async (q: string) => {
      const res = await api(user, 'GET', `/accounts/me/webhooks${q}`);
      expect(res.status).toBe(200);
      return res.json();
    };
    const all = await list('');
    expect(all).toMatchObject({ count: 3, next_token: null });
    expect(all.webhooks.map((w: any) => w.webhook_id)).toEqual([c.webhook_id, b.webhook_id, a.webhook_id]);
    expect(all.webhooks.some((w: any) => 'secret' in w)).toBe(false);
    expect((await list('?is_active=false')).webhooks.map((w: any) => w.webhook_id)).toEqual([b.webhook_id]);
    expect((await list('?event=job.failed')).webhooks.map((w: any) => w.webhook_id)).toEqual([b.webhook_id, a.webhook_id]);
    expect((await list('?event=job.failed&is_active=true')).webhooks.map((w: any) => w.webhook_id)).toEqual([a.webhook_id]);

    const first = await list('?limit=2');
    expect(first.count).toBe(2);
    expect(first.next_token).toEqual(expect.any(String));
    const second = await list(`?limit=2&next_token=${encodeURIComponent(first.next_token)}`);
    expect(second).toMatchObject({ count: 1, next_token: null });
    expect(second.webhooks[0].webhook_id).toBe(a.webhook_id);

    // Edited, replayed with other filters, or by another account: refused.
    const tampered = `${first.next_token.slice(0, -2)}${first.next_token.endsWith('AA') ? 'AB' : 'AA'}`;
    await refusal(await api(user, 'GET', `/accounts/me/webhooks?next_token=${encodeURIComponent(tampered)}`), 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'GET', `/accounts/me/webhooks?is_active=true&next_token=${encodeURIComponent(first.next_token)}`), 400, 'INVALID_PARAMETER');
    const other = await stack.account();
    await refusal(await api(other, 'GET', `/accounts/me/webhooks?next_token=${encodeURIComponent(first.next_token)}`), 400, 'INVALID_PARAMETER');
    for (const q of ['?limit=0', '?limit=101', '?limit=x', '?is_active=yes', '?limit=200&limit=2', '?is_active=true&is_active=false']) {
      const err = await refusal(await api(user, 'GET', `/accounts/me/webhooks${q}`), 400, 'INVALID_PARAMETER');
      expect(err.details.parameter).toBe(q.slice(1).split('=')[0]);
    }
    expect((await refusal(await api(user, 'GET', '/accounts/me/webhooks?event=job.unknown'), 400, 'INVALID_EVENTS')).details).toMatchObject({ parameter: 'event', invalid: ['job.unknown'] });
  });

  it('updates name, url, events and is_active, keeping counters and the secret', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/ok/u1'), name: 'orders' });
    await new Promise((r) => setTimeout(r, 5));
    const res = await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { name: 'billing', url: hookUrl('/ok/u2'), events: ['job.failed', 'job.failed', 'bulk.job.partial'], is_active: false });
    expect(res.status).toBe(200);
    const { webhook } = await res.json();
    expect(webhook).toMatchObject({ name: 'billing', url: hookUrl('/ok/u2'), events: ['job.failed', 'bulk.job.partial'], is_active: false, signing_enabled: true, success_count: 0 });
    expect(webhook).not.toHaveProperty('secret');
    expect(webhook.updated_at > hook.updated_at).toBe(true);
    expect(webhook.created_at).toBe(hook.created_at);
    const partial = await (await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { is_active: true })).json();
    expect(partial.webhook).toMatchObject({ name: 'billing', is_active: true, events: ['job.failed', 'bulk.job.partial'] });

    await refusal(await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, {}), 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { is_active: 'no' }), 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { name: '' }), 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { events: [] }), 400, 'INVALID_EVENTS');
    await refusal(await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { url: 'https://10.0.0.1/x' }), 400, 'INVALID_WEBHOOK_URL');
    const bad = await stack.request('PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { token: user.id_token, body: '{"name":', headers: { 'Content-Type': 'application/json' } });
    await refusal(bad, 400, 'INVALID_PARAMETER');
  });

  it("answers 404 WEBHOOK_NOT_FOUND for unknown ids and 403 WEBHOOK_ACCESS_DENIED for another user's webhook", async () => {
    const owner = await stack.account();
    const stranger = await stack.account();
    const hook = await createHook(owner, { url: hookUrl('/ok/own') });
    const base = `/accounts/me/webhooks/${hook.webhook_id}`;
    for (const [method, route, body] of [
      ['GET', base, undefined],
      ['PUT', base, { name: 'mine now' }],
      ['DELETE', base, undefined],
      ['POST', `${base}/rotate-secret`, undefined],
      ['GET', `${base}/history`, undefined],
    ] as const) {
      const err = await refusal(await api(stranger, method, route, body), 403, 'WEBHOOK_ACCESS_DENIED');
      expect(err.details.webhook_id).toBe(hook.webhook_id);
      await refusal(await api(stranger, method, route.replace(hook.webhook_id, 'wh_01J0000000000000000000000'), body), 404, 'WEBHOOK_NOT_FOUND');
    }
    // Nothing changed for the owner.
    expect(await getHook(owner, hook.webhook_id)).toMatchObject({ name: 'localhost', url: hookUrl('/ok/own') });
  });

  it('deletes a webhook: it is gone, and a second delete is 404', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/ok/del') });
    const res = await api(user, 'DELETE', `/accounts/me/webhooks/${hook.webhook_id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ webhook_id: hook.webhook_id, deleted: true });
    await refusal(await api(user, 'GET', `/accounts/me/webhooks/${hook.webhook_id}`), 404, 'WEBHOOK_NOT_FOUND');
    await refusal(await api(user, 'DELETE', `/accounts/me/webhooks/${hook.webhook_id}`), 404, 'WEBHOOK_NOT_FOUND');
  });

  it("enforces the plan's max_webhooks (5) with the spec's details, even for creations at the same moment", async () => {
    const user = await stack.account();
    const results = await Promise.all(Array.from({ length: 7 }, (_, i) => api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl(`/ok/n${i}`) })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 403, 403]);
    const err = await refusal(await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/ok/n8') }), 403, 'WEBHOOK_LIMIT_EXCEEDED');
    expect(err.details).toEqual({ plan_id: 'standard', plan_type: 'pay_as_you_go', current_count: 5, max_allowed: 5, upgrade_required: false });
    const list = await (await api(user, 'GET', '/accounts/me/webhooks')).json();
    expect(list.count).toBe(5);
    // Deleting one frees a place.
    expect((await api(user, 'DELETE', `/accounts/me/webhooks/${list.webhooks[0].webhook_id}`)).status).toBe(200);
    expect((await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/ok/n9') })).status).toBe(201);
  });

  it('refuses bad events and bad bodies', async () => {
    const user = await stack.account();
    for (const events of [[], ['job.nope'], 'job.completed', [1], ['job.completed', 'Job.Failed']]) {
      await refusal(await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/ok'), events }), 400, 'INVALID_EVENTS');
    }
    const err = await refusal(await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/ok'), events: ['job.completed', 'job.nope'] }), 400, 'INVALID_EVENTS');
    expect(err.details.invalid).toEqual(['job.nope']);
    expect(err.details.allowed).toContain('job.timeout');
    // job.timeout is subscribable.
    expect((await createHook(user, { url: hookUrl('/ok'), events: ['job.timeout'] })).events).toEqual(['job.timeout']);
    const broken = await stack.request('POST', '/accounts/me/webhooks', { token: user.id_token, body: '{"url": ', headers: { 'Content-Type': 'application/json' } });
    await refusal(broken, 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'POST', '/accounts/me/webhooks', [hookUrl('/ok')]), 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/ok'), is_active: 'true' }), 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'POST', '/accounts/me/webhooks', { url: hookUrl('/ok'), name: 'x'.repeat(101) }), 400, 'INVALID_PARAMETER');
  });

  it('applies every URL rule, IPv4-mapped and numeric host forms included', async () => {
    const user = await stack.account();
    const refused = [
      undefined,
      '',
      42,
      'http://example.com/hook',
      'ftp://example.com/hook',
      'example.com/hook',
      `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`,
      'https://user:pass@example.com/hook',
      'https://localhost/hook',
      'https://api.localhost/hook',
      'https://printer.local/hook',
      'https://metadata.google.internal/hook',
      'https://127.0.0.1/hook',
      'https://127.8.9.10/hook',
      'https://10.0.0.1/hook',
      'https://172.16.0.1/hook',
      'https://172.31.255.254/hook',
      'https://192.168.1.20/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://[::1]/hook',
      'https://[fc00::1]/hook',
      'https://[fd12:3456::1]/hook',
      'https://[fe80::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://[::ffff:8.8.8.8]/hook',
      'https://0x7f000001/hook',
      'https://2130706433/hook',
      'https://0177.0.0.1/hook',
      'https://127.1/hook',
    ];
    for (const url of refused) {
      const res = await api(user, 'POST', '/accounts/me/webhooks', { url });
      const body = await res.json();
      expect(`${JSON.stringify(url)?.slice(0, 60)} → ${res.status} ${body.error?.code}`).toBe(`${JSON.stringify(url)?.slice(0, 60)} → 400 INVALID_WEBHOOK_URL`);
      expect(body.error.details.reason).toEqual(expect.any(String));
    }
    // The same rules guard PUT.
    const hook = await createHook(user, { url: 'https://example.com/hook' });
    await refusal(await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { url: 'https://[::ffff:192.168.0.1]/' }), 400, 'INVALID_WEBHOOK_URL');
    for (const url of ['https://8.8.8.8/hook', 'https://[2606:4700:4700::1111]:8443/hook', `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`]) {
      expect((await createHook(user, { url })).url).toBe(url);
    }
  });
});

describe('deliveries', () => {
  it('delivers a long job’s events signed, with the spec headers and payload fields, verifiable by our helper and by Stripe', async () => {
    const user = await stack.account({ credits_usd: 5 });
    const hook = await createHook(user, { url: hookUrl('/ok/long'), events: ['job.queued', 'job.processing', 'job.completed', 'job.failed'] });
    const res = await stack.request('POST', '/longjob', { key: user.api_key, json: { input_type: 'html', html: '<title>Hooked</title><h1>Webhook PDF</h1>' } });
    const accepted = await res.json();
    expect({ status: res.status, error: accepted.error }).toEqual({ status: 202, error: undefined });
    const { job_id } = accepted;
    await stack.queues.get('render')!.drained();
    await dispatcher().drained();

    const got = deliveriesTo('/ok/long');
    expect(got.map((r) => r.headers['x-webhook-event']).sort()).toEqual(['job.completed', 'job.processing', 'job.queued']);
    const ids = new Set<string>();
    for (const r of got) {
      const event = r.headers['x-webhook-event'] as string;
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toMatch(/^PdfService-Webhooks\/\d/);
      expect(r.headers['x-webhook-id']).toBe(hook.webhook_id);
      expect(r.headers['x-webhook-delivery-id']).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      ids.add(r.headers['x-webhook-delivery-id'] as string);
      expect(new Date(r.headers['x-webhook-timestamp'] as string).toISOString()).toBe(r.headers['x-webhook-timestamp']);
      const signature = r.headers['service-signature'] as string;
      expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyWebhookSignature(r.body, signature, hook.secret)).toBe(true);
      expect(stripe.webhooks.constructEvent(r.body, signature, hook.secret)).toMatchObject({ event, job_id });
      const payload = JSON.parse(r.body.toString('utf8'));
      expect(payload).toMatchObject({ event, job_id, job_type: 'long', mode: 'html', created_at: expect.any(String), timestamp: expect.any(String) });
      if (event === 'job.queued') expect(payload.status).toBe('queued');
      if (event === 'job.processing') expect(payload).toMatchObject({ status: 'processing', started_at: expect.any(String) });
      if (event === 'job.completed') {
        expect(payload).toMatchObject({ status: 'completed', pages: 1, truncated: false, completed_at: expect.any(String), s3_url_expires_at: expect.any(String) });
        const pdf = new Uint8Array(await (await fetch(payload.s3_url)).arrayBuffer());
        expect((await readPdf(pdf))[0].text).toContain('Webhook PDF');
      }
    }
    expect(ids.size).toBe(3);

    const h = await history(user, hook.webhook_id);
    expect(h).toMatchObject({ webhook_id: hook.webhook_id, count: 3, next_token: null });
    for (const record of h.history) {
      const sent = got.find((r) => r.headers['x-webhook-delivery-id'] === record.delivery_id)!;
      expect(record).toEqual({
        delivery_id: sent.headers['x-webhook-delivery-id'],
        webhook_id: hook.webhook_id,
        job_id,
        event_type: sent.headers['x-webhook-event'],
        status: 'success',
        status_code: 200,
        retry_count: 0,
        delivered_at: expect.any(String),
        duration_ms: expect.any(Number),
        payload_size_bytes: sent.body.byteLength,
      });
    }
    const byJob = await (await api(user, 'GET', `/jobs/${job_id}/webhooks/history`)).json();
    expect(byJob).toMatchObject({ job_id, count: 3, next_token: null });
    expect(byJob.history.map((r: any) => r.delivery_id).sort()).toEqual([...ids].sort());
    const after = await getHook(user, hook.webhook_id);
    expect(after).toMatchObject({ success_count: 3, failure_count: 0, last_failure_at: null, last_success_at: expect.any(String), last_triggered_at: expect.any(String) });
  });

  it('delivers background merge/split events with job_type pdfop and their fields', async () => {
    const user = await stack.account({ credits_usd: 5 });
    await createHook(user, { url: hookUrl('/ok/pdfop'), events: ['job.completed', 'job.failed'] });
    const upload = async (bytes: Uint8Array) => {
      const up = await (await stack.request('POST', '/pdf/upload-url', { key: user.api_key, json: { content_length_bytes: bytes.length } })).json();
      expect((await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(bytes) })).status).toBe(200);
      return up.s3_key as string;
    };
    const a = await upload(await simplePdf(2, { label: 'A' }));
    const b = await upload(await simplePdf(3, { label: 'B' }));
    const merge = await stack.request('POST', '/pdf/jobs', { key: user.api_key, json: { operation: 'merge', inputs: [{ s3_key: a, filename: 'a.pdf' }, { s3_key: b, filename: 'b.pdf' }] } });
    expect(merge.status).toBe(202);
    const mergeId = (await merge.json()).job_id;
    const split = await stack.request('POST', '/pdf/jobs', { key: user.api_key, json: { operation: 'split', inputs: [{ s3_key: await upload(await simplePdf(2)), filename: 'c.pdf' }], split: { mode: 'extract', pages: '9' } } });
    expect(split.status).toBe(202);
    const splitId = (await split.json()).job_id;
    await stack.workflows.idle();
    await dispatcher().drained();

    const payloads = deliveriesTo('/ok/pdfop').map((r) => JSON.parse(r.body.toString()));
    const done = payloads.find((p) => p.job_id === mergeId);
    expect(done).toMatchObject({ event: 'job.completed', status: 'completed', job_type: 'pdfop', operation: 'merge', input_pages: 5, output_count: 1, warnings: [], files_url: `/jobs/${mergeId}/files`, timestamp: expect.any(String) });
    const merged = new Uint8Array(await (await fetch(done.s3_url)).arrayBuffer());
    expect(await readPdf(merged)).toHaveLength(5);
    expect(payloads.find((p) => p.job_id === splitId)).toMatchObject({ event: 'job.failed', status: 'failed', job_type: 'pdfop', operation: 'split', error_code: 'PAGE_OUT_OF_RANGE', failed_at: expect.any(String) });
  });

  it('delivers instant merge/split job.completed events too, with a link when the result is stored', async () => {
    const user = await stack.account({ credits_usd: 5 });
    await createHook(user, { url: hookUrl('/ok/instant'), events: ['job.completed', 'job.failed'] });
    const pdf = (bytes: Uint8Array, filename: string) => ({ pdf_base64: Buffer.from(bytes).toString('base64'), filename });
    const merge = await stack.request('POST', '/pdf/merge', { key: user.api_key, json: { inputs: [pdf(await simplePdf(2), 'a.pdf'), pdf(await simplePdf(1), 'b.pdf')] } });
    expect(merge.status).toBe(200);
    const mergeId = merge.headers.get('x-job-id');
    const split = await stack.request('POST', '/pdf/split', { key: user.api_key, json: { input: pdf(await simplePdf(4), 'c.pdf'), split: { mode: 'every_n', every_n: 2 } } });
    expect(split.status).toBe(200);
    const splitId = (await split.json()).job_id;
    await dispatcher().drained();

    const payloads = deliveriesTo('/ok/instant').map((r) => JSON.parse(r.body.toString()));
    // Answered in the response and not stored: no link, the files route names the result.
    expect(payloads.find((p) => p.job_id === mergeId)).toMatchObject({ event: 'job.completed', status: 'completed', job_type: 'pdfop', operation: 'merge', input_pages: 3, output_count: 1, warnings: [], files_url: `/jobs/${mergeId}/files`, s3_url: null });
    const stored = payloads.find((p) => p.job_id === splitId);
    expect(stored).toMatchObject({ event: 'job.completed', job_type: 'pdfop', operation: 'split', input_pages: 4, output_count: 2, files_url: `/jobs/${splitId}/files` });
    // The split's ZIP, valid for an hour like every event link.
    expect((await fetch(stored.s3_url)).headers.get('content-type')).toBe('application/zip');
  });

  it('delivers bulk.job.* events written through the same outbox, with success_count and s3_url', async () => {
    const user = await stack.account();
    await createHook(user, { url: hookUrl('/ok/bulk'), events: ['bulk.job.cancelled', 'bulk.job.partial'] });
    const output = { key: `outputs/${user.account_id}/bulk/out.zip`, name: 'out.zip', content_type: 'application/zip', size_bytes: 3, expires_at: '2099-01-01T00:00:00.000Z' };
    await stack.services.blobs.put(output.key, Buffer.from('zip'), 'application/zip');
    const bulk = { job_type: 'bulk' as const, bundle_type: 'html', file_count: 5, success_count: 2, failure_count: 1, pages_total: 4, completed_at: new Date().toISOString() };
    const cancelled = await emit(user, 'bulk.job.cancelled', { ...bulk, status: 'cancelled', output });
    const partial = await emit(user, 'bulk.job.partial', { ...bulk, status: 'partial_failed', output: null });
    const payloads = deliveriesTo('/ok/bulk').map((r) => JSON.parse(r.body.toString()));
    const c = payloads.find((p) => p.job_id === cancelled.job_id);
    expect(c).toMatchObject({ event: 'bulk.job.cancelled', job_type: 'bulk', status: 'cancelled', success_count: 2, failure_count: 1, file_count: 5, s3_url_expires_at: expect.any(String) });
    expect(await (await fetch(c.s3_url)).text()).toBe('zip');
    expect(payloads.find((p) => p.job_id === partial.job_id)).toMatchObject({ event: 'bulk.job.partial', success_count: 2, s3_url: null });
  });

  it('announces a real bulk job’s finish at once (not after the outbox sweeper’s two minutes)', async () => {
    const user = await stack.account({ credits_usd: 5 });
    await createHook(user, { url: hookUrl('/ok/bulk-real'), events: ['bulk.job.completed'] });
    const files = [{ path: 'a.html', content_base64: Buffer.from('<h1>Bulk hook</h1>').toString('base64') }];
    const res = await stack.request('POST', '/bulkjob', { key: user.api_key, json: { files } });
    expect(res.status).toBe(202);
    const { job_id } = await res.json();
    await stack.workflows.idle();
    await dispatcher().drained();
    const payloads = deliveriesTo('/ok/bulk-real').map((r) => JSON.parse(r.body.toString()));
    expect(payloads).toEqual([expect.objectContaining({ event: 'bulk.job.completed', job_id, status: 'completed', success_count: 1, s3_url: expect.any(String) })]);
  });

  it('retries a receiver answering 500 three times (1, 2, 4 s), re-signing each attempt, then records one failure', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/fail500'), events: ['job.failed'] });
    const job = await emit(user, 'job.failed', { status: 'failed', error_code: 'PDF_GENERATION_FAILED', error_message: 'boom', completed_at: new Date().toISOString() });
    const got = deliveriesTo('/fail500').filter((r) => JSON.parse(r.body.toString()).job_id === job.job_id);
    expect(got).toHaveLength(4);
    expect(new Set(got.map((r) => r.headers['x-webhook-delivery-id'])).size).toBe(1);
    expect(new Set(got.map((r) => r.body.toString())).size).toBe(1);
    const ts = got.map((r) => Number(/^t=(\d+)/.exec(r.headers['service-signature'] as string)![1]));
    for (let i = 1; i < ts.length; i++) expect(ts[i]).toBeGreaterThan(ts[i - 1]);
    for (const r of got) expect(verifyWebhookSignature(r.body, r.headers['service-signature'] as string, hook.secret)).toBe(true);
    // The waits as the service recorded them: each attempt's X-Webhook-Timestamp is taken as it is sent, so two
    // attempts lie at least the wait between them apart.
    const sentAt = got.map((r) => Date.parse(r.headers['x-webhook-timestamp'] as string));
    const gaps = sentAt.slice(1).map((t, i) => t - sentAt[i]);
    expect(gaps[0]).toBeGreaterThanOrEqual(1000);
    expect(gaps[1]).toBeGreaterThanOrEqual(2000);
    expect(gaps[2]).toBeGreaterThanOrEqual(4000);
    const payload = JSON.parse(got[0].body.toString());
    expect(payload).toMatchObject({ event: 'job.failed', status: 'failed', job_type: 'long', mode: 'html', error_message: 'boom', failed_at: expect.any(String), created_at: job.created_at });

    const h = await history(user, hook.webhook_id);
    expect(h.count).toBe(1);
    expect(h.history[0]).toMatchObject({ status: 'failed', status_code: 500, retry_count: 3, error_message: expect.stringContaining('500'), job_id: job.job_id, event_type: 'job.failed' });
    expect(await getHook(user, hook.webhook_id)).toMatchObject({ success_count: 0, failure_count: 1, last_failure_at: expect.any(String), last_success_at: null });
  });

  it('does not retry a 401, nor a redirect (which is not followed)', async () => {
    const user = await stack.account();
    const denied = await createHook(user, { url: hookUrl('/unauthorized') });
    const moved = await createHook(user, { url: hookUrl('/redirect') });
    const before = deliveriesTo('/ok/after-redirect').length;
    const job = await emit(user, 'job.completed', { status: 'completed', pages: 2, completed_at: new Date().toISOString() });
    expect(deliveriesTo('/unauthorized').filter((r) => r.body.includes(job.job_id))).toHaveLength(1);
    expect(deliveriesTo('/redirect').filter((r) => r.body.includes(job.job_id))).toHaveLength(1);
    expect(deliveriesTo('/ok/after-redirect').length).toBe(before);
    expect((await history(user, denied.webhook_id)).history).toEqual([expect.objectContaining({ status: 'failed', status_code: 401, retry_count: 0 })]);
    const [redirect] = (await history(user, moved.webhook_id)).history;
    expect(redirect).toMatchObject({ status: 'failed', status_code: 302, retry_count: 0 });
    expect(redirect.error_message).toMatch(/^Redirect not followed/);
  });

  it('records a 101 Switching Protocols answer as it is, at once: failed with status_code 101, not retried', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/switch') });
    const job = await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    expect(deliveriesTo('/switch').filter((r) => r.body.includes(job.job_id))).toHaveLength(1);
    const [record] = (await history(user, hook.webhook_id)).history;
    expect(record).toMatchObject({ status: 'failed', status_code: 101, retry_count: 0, error_message: 'HTTP 101 from the receiver (not retried)', job_id: job.job_id });
  });

  it('gives up an attempt after 10 seconds and retries it', async () => {
    const user = await stack.account();
    const path = `/hang-once?${Date.now()}`;
    const hook = await createHook(user, { url: hookUrl(path) });
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const got = deliveriesTo(path);
    expect(got).toHaveLength(2);
    expect(got[1].headers['x-webhook-delivery-id']).toBe(got[0].headers['x-webhook-delivery-id']);
    // 10 s attempt limit, then the 1 s backoff, between the attempts' X-Webhook-Timestamps (taken as each is sent; the
    // limit runs from after that).
    const [first, second] = got.map((r) => Date.parse(r.headers['x-webhook-timestamp'] as string));
    expect(second - first).toBeGreaterThanOrEqual(11_000);
    expect((await history(user, hook.webhook_id)).history).toEqual([expect.objectContaining({ status: 'success', status_code: 204, retry_count: 1 })]);
  }, 40_000);

  it('counts a 2xx with a body over 1 MiB as a success: the answer is decided on its status line', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/big-ok') });
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    expect(deliveriesTo('/big-ok')).toHaveLength(1);
    expect((await history(user, hook.webhook_id)).history).toEqual([expect.objectContaining({ status: 'success', status_code: 200, retry_count: 0 })]);
    expect(await getHook(user, hook.webhook_id)).toMatchObject({ success_count: 1, failure_count: 0 });
  });

  it('sets last_triggered_at as a series starts, and retries use the secret valid then (rotation with grace 0)', async () => {
    const user = await stack.account();
    const path = `/fail500?rotate${Date.now()}`;
    const hook = await createHook(user, { url: hookUrl(path), events: ['job.failed'] });
    let rotated: Record<string, any> | undefined;
    let triggeredDuringFirst: string | null = null;
    beforeAnswer.set(path, async () => {
      if (rotated) return;
      triggeredDuringFirst = (await stack.services.webhooks.get(hook.webhook_id))!.last_triggered_at;
      rotated = (await (await api(user, 'POST', `/accounts/me/webhooks/${hook.webhook_id}/rotate-secret`, { grace_period_seconds: 0 })).json()).webhook;
    });
    const before = new Date().toISOString();
    await emit(user, 'job.failed', { status: 'failed', error_message: 'x', completed_at: new Date().toISOString() });
    const got = deliveriesTo(path);
    expect(got).toHaveLength(4);
    expect(triggeredDuringFirst! >= before).toBe(true);
    const verify = (r: Received, secret: string) => verifyWebhookSignature(r.body, r.headers['service-signature'] as string, secret);
    expect([verify(got[0], hook.secret), verify(got[0], rotated!.secret)]).toEqual([true, false]);
    for (const r of got.slice(1)) {
      expect(r.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect([verify(r, hook.secret), verify(r, rotated!.secret)]).toEqual([false, true]);
    }
    // Completing the series leaves the start alone.
    expect(await getHook(user, hook.webhook_id)).toMatchObject({ last_triggered_at: triggeredDuringFirst, failure_count: 1 });
  });

  it('stops retrying a webhook paused or deleted during its series, and records why', async () => {
    const user = await stack.account();
    const paused = await createHook(user, { url: hookUrl(`/fail500?pause${Date.now()}`), events: ['job.failed'] });
    const deleted = await createHook(user, { url: hookUrl(`/fail500?delete${Date.now()}`), events: ['job.failed'] });
    const pathOf = (h: Record<string, any>) => new URL(h.url).pathname + new URL(h.url).search;
    beforeAnswer.set(pathOf(paused), async () => void (await api(user, 'PUT', `/accounts/me/webhooks/${paused.webhook_id}`, { is_active: false })));
    beforeAnswer.set(pathOf(deleted), async () => void (await api(user, 'DELETE', `/accounts/me/webhooks/${deleted.webhook_id}`)));
    const job = await emit(user, 'job.failed', { status: 'failed', error_message: 'x', completed_at: new Date().toISOString() });
    expect(deliveriesTo(pathOf(paused))).toHaveLength(1);
    expect(deliveriesTo(pathOf(deleted))).toHaveLength(1);
    const [pausedRecord] = (await history(user, paused.webhook_id)).history;
    expect(pausedRecord).toMatchObject({ status: 'failed', status_code: 500, retry_count: 0, error_message: 'HTTP 500 from the receiver; retries stopped: the webhook was paused (is_active false)' });
    // A paused webhook keeps its statistics: the stopped series counts as its failure.
    expect(await getHook(user, paused.webhook_id)).toMatchObject({ is_active: false, failure_count: 1, last_failure_at: expect.any(String) });
    const byJob = await (await api(user, 'GET', `/jobs/${job.job_id}/webhooks/history`)).json();
    expect(byJob.history.find((r: any) => r.webhook_id === deleted.webhook_id)).toMatchObject({
      status: 'failed', status_code: 500, retry_count: 0, error_message: 'HTTP 500 from the receiver; retries stopped: the webhook was deleted',
    });
  });

  it('refuses at registration a name that resolves to a private address, on create and on update', async () => {
    const user = await stack.account();
    const res = await api(user, 'POST', '/accounts/me/webhooks', { url: 'https://hooks.example.com/ok/x' });
    const error = await refusal(res, 400, 'INVALID_WEBHOOK_URL');
    expect(error.details.reason).toContain('resolves to an address in 127.0.0.0/8');
    expect(error.details.reason).not.toContain('127.0.0.1');
    const hook = await createHook(user, { url: hookUrl('/ok/renamed') });
    await refusal(await api(user, 'PUT', `/accounts/me/webhooks/${hook.webhook_id}`, { url: 'https://HOOKS.example.com/ok/x' }), 400, 'INVALID_WEBHOOK_URL');
  });

  it('blocks a name that resolves to a private address at delivery: no connection, no retry, "Delivery blocked:"', async () => {
    const user = await stack.account();
    // A name public when registered whose DNS later answers a private address (rebinding): registered through the
    // API under a name that passes, then pointed at the name that now resolves to loopback.
    const hook = await createHook(user, { url: hookUrl('/ok/private') });
    await stack.services.webhooks.update(hook.webhook_id, { url: 'https://hooks.example.com/ok/private', updated_at: new Date().toISOString() });
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    expect(deliveriesTo('/ok/private')).toHaveLength(0);
    const [record] = (await history(user, hook.webhook_id)).history;
    expect(record).toMatchObject({ status: 'failed', retry_count: 0 });
    expect(record).not.toHaveProperty('status_code');
    expect(record.error_message).toMatch(/^Delivery blocked: /);
    expect(record.error_message).toContain('127.0.0.0/8');
    expect(record.error_message).not.toContain('127.0.0.1');
    expect(await getHook(user, hook.webhook_id)).toMatchObject({ failure_count: 1 });
  });

  it('calls only active webhooks subscribed to the event, and never delivers job.timeout', async () => {
    const user = await stack.account();
    const inactive = await createHook(user, { url: hookUrl('/ok/inactive'), is_active: false, events: ['job.completed', 'job.timeout'] });
    const other = await createHook(user, { url: hookUrl('/ok/other-event'), events: ['job.failed'] });
    const timeouts = await createHook(user, { url: hookUrl('/ok/timeouts'), events: ['job.timeout'] });
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const job = await emit(user, 'job.timeout', { status: 'timeout', timeout_occurred: true });
    for (const path of ['/ok/inactive', '/ok/other-event', '/ok/timeouts']) expect(deliveriesTo(path)).toHaveLength(0);
    for (const hook of [inactive, other, timeouts]) expect((await history(user, hook.webhook_id)).count).toBe(0);
    // The job.timeout event left the pending outbox all the same.
    expect((await stack.services.outbox.get(job.job_id, (await jobEventIds(job.job_id))[0]))!.pending).toBe(false);
    // An inactive webhook keeps its configuration and is called again once active.
    await api(user, 'PUT', `/accounts/me/webhooks/${inactive.webhook_id}`, { is_active: true });
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    expect(deliveriesTo('/ok/inactive')).toHaveLength(1);
  });

  it('signs with both secrets during a rotation grace period and only the new one after it', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/ok/rotate') });
    const rotated = await api(user, 'POST', `/accounts/me/webhooks/${hook.webhook_id}/rotate-secret`, { grace_period_seconds: 3600 });
    expect(rotated.status).toBe(200);
    const { webhook } = await rotated.json();
    expect(webhook.secret).toMatch(/^whsec_/);
    expect(webhook.secret).not.toBe(hook.secret);
    expect(Date.parse(webhook.previous_secret_expires_at) - Date.parse(webhook.updated_at)).toBe(3_600_000);
    expect(webhook).toMatchObject({ signing_enabled: true, webhook_id: hook.webhook_id });
    expect(await getHook(user, hook.webhook_id)).toMatchObject({ previous_secret_expires_at: webhook.previous_secret_expires_at });
    expect(await getHook(user, hook.webhook_id)).not.toHaveProperty('secret');

    const { job_id } = await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const during = deliveriesTo('/ok/rotate')[0];
    const header = during.headers['service-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(during.body, header, webhook.secret)).toBe(true);
    expect(verifyWebhookSignature(during.body, header, hook.secret)).toBe(true);
    expect(stripe.webhooks.constructEvent(during.body, header, hook.secret)).toMatchObject({ event: 'job.completed', job_id });
    expect(stripe.webhooks.constructEvent(during.body, header, webhook.secret)).toMatchObject({ event: 'job.completed', job_id });

    // A short grace period that has run out: the old secret no longer signs.
    const short = await createHook(user, { url: hookUrl('/ok/rotate-short') });
    const { webhook: shortRotated } = await (await api(user, 'POST', `/accounts/me/webhooks/${short.webhook_id}/rotate-secret`, { grace_period_seconds: 1 })).json();
    await new Promise((r) => setTimeout(r, Date.parse(shortRotated.previous_secret_expires_at) - Date.now() + 100));
    expect(await getHook(user, short.webhook_id)).not.toHaveProperty('previous_secret_expires_at');
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const afterGrace = deliveriesTo('/ok/rotate-short')[0];
    const header2 = afterGrace.headers['service-signature'] as string;
    expect(header2).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(afterGrace.body, header2, shortRotated.secret)).toBe(true);
    expect(verifyWebhookSignature(afterGrace.body, header2, short.secret)).toBe(false);
    expect(() => stripe.webhooks.constructEvent(afterGrace.body, header2, short.secret)).toThrow();

    // grace 0 revokes the old secret at once; bad grace values are refused.
    const now0 = await (await api(user, 'POST', `/accounts/me/webhooks/${hook.webhook_id}/rotate-secret`, { grace_period_seconds: 0 })).json();
    expect(now0.webhook).not.toHaveProperty('previous_secret_expires_at');
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const third = deliveriesTo('/ok/rotate')[2];
    expect(third.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(third.body, third.headers['service-signature'] as string, now0.webhook.secret)).toBe(true);
    expect(verifyWebhookSignature(third.body, third.headers['service-signature'] as string, webhook.secret)).toBe(false);
    for (const grace of [-1, 604801, 1.5, '60', true]) {
      const err = await refusal(await api(user, 'POST', `/accounts/me/webhooks/${hook.webhook_id}/rotate-secret`, { grace_period_seconds: grace }), 400, 'INVALID_PARAMETER');
      expect(err.details.parameter).toBe('grace_period_seconds');
    }
    // Default grace: one day; the maximum is accepted.
    const byDefault = await (await api(user, 'POST', `/accounts/me/webhooks/${hook.webhook_id}/rotate-secret`)).json();
    expect(Date.parse(byDefault.webhook.previous_secret_expires_at) - Date.parse(byDefault.webhook.updated_at)).toBe(86_400_000);
    expect((await api(user, 'POST', `/accounts/me/webhooks/${hook.webhook_id}/rotate-secret`, { grace_period_seconds: 604800 })).status).toBe(200);
  });

  it('serialises rotations made at the same moment: every secret answered signs, and grace 0 revokes the old one for good', async () => {
    const user = await stack.account();
    // Two rotations with a grace period: the later one signs now and the earlier one during its grace (none is lost).
    const both = await createHook(user, { url: hookUrl('/ok/rotate-race') });
    const answers = await Promise.all([1, 2].map(() => api(user, 'POST', `/accounts/me/webhooks/${both.webhook_id}/rotate-secret`, { grace_period_seconds: 3600 })));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const secrets = await Promise.all(answers.map(async (a) => (await a.json()).webhook.secret as string));
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const signed = deliveriesTo('/ok/rotate-race')[0];
    for (const secret of secrets) expect(verifyWebhookSignature(signed.body, signed.headers['service-signature'] as string, secret)).toBe(true);
    expect(verifyWebhookSignature(signed.body, signed.headers['service-signature'] as string, both.secret)).toBe(false);

    // grace 0 with a graceful rotation at the same moment: in either order the original secret no longer signs.
    const revoked = await createHook(user, { url: hookUrl('/ok/rotate-race-0') });
    const pair = await Promise.all([
      api(user, 'POST', `/accounts/me/webhooks/${revoked.webhook_id}/rotate-secret`, { grace_period_seconds: 0 }),
      api(user, 'POST', `/accounts/me/webhooks/${revoked.webhook_id}/rotate-secret`, { grace_period_seconds: 3600 }),
    ]);
    expect(pair.map((a) => a.status)).toEqual([200, 200]);
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const after = deliveriesTo('/ok/rotate-race-0')[0];
    expect(verifyWebhookSignature(after.body, after.headers['service-signature'] as string, revoked.secret)).toBe(false);
  });

  it('turns signing on when an old unsigned webhook is rotated', async () => {
    const user = await stack.account();
    const now = new Date().toISOString();
    const legacy: Webhook = {
      webhook_id: `wh_legacy${Date.now()}`,
      account_id: user.account_id,
      name: 'legacy',
      url: hookUrl('/ok/legacy'),
      events: ['job.completed'],
      is_active: true,
      secret_sealed: null,
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      created_at: now,
      updated_at: now,
      last_triggered_at: null,
      last_success_at: null,
      last_failure_at: null,
      success_count: 0,
      failure_count: 0,
    };
    expect(await stack.services.webhooks.create(legacy, 5)).toEqual({ created: true });
    expect(await getHook(user, legacy.webhook_id)).toMatchObject({ signing_enabled: false });
    expect(await getHook(user, legacy.webhook_id)).not.toHaveProperty('previous_secret_expires_at');
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    expect(deliveriesTo('/ok/legacy')[0].headers).not.toHaveProperty('service-signature');

    const { webhook } = await (await api(user, 'POST', `/accounts/me/webhooks/${legacy.webhook_id}/rotate-secret`, { grace_period_seconds: 3600 })).json();
    expect(webhook).toMatchObject({ signing_enabled: true, secret: expect.stringMatching(/^whsec_/) });
    expect(webhook).not.toHaveProperty('previous_secret_expires_at');
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const signed = deliveriesTo('/ok/legacy')[1];
    expect(signed.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(signed.body, signed.headers['service-signature'] as string, webhook.secret)).toBe(true);
  });

  it('fails verification when one byte of a delivered body is flipped', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/ok/flip') });
    await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() });
    const [r] = deliveriesTo('/ok/flip');
    const header = r.headers['service-signature'] as string;
    expect(verifyWebhookSignature(r.body, header, hook.secret)).toBe(true);
    const flipped = Buffer.from(r.body);
    flipped[10] ^= 0x01;
    expect(verifyWebhookSignature(flipped, header, hook.secret)).toBe(false);
    expect(() => stripe.webhooks.constructEvent(flipped, header, hook.secret)).toThrow(/signature/i);
  });

  it('pages history with status and event_type filters; the job route covers deleted webhooks', async () => {
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/ok/paged'), events: ['job.completed', 'job.failed'] });
    const jobs: Job[] = [];
    for (let i = 0; i < 3; i++) jobs.push(await emit(user, 'job.completed', { status: 'completed', completed_at: new Date().toISOString() }));
    const failedJob = await emit(user, 'job.failed', { status: 'failed', error_message: 'x', completed_at: new Date().toISOString() });
    const page1 = await history(user, hook.webhook_id, '?limit=2');
    expect(page1.count).toBe(2);
    expect(page1.history.map((h: any) => h.job_id)).toEqual([failedJob.job_id, jobs[2].job_id]);
    const page2 = await history(user, hook.webhook_id, `?limit=2&next_token=${encodeURIComponent(page1.next_token)}`);
    expect(page2.history.map((h: any) => h.job_id)).toEqual([jobs[1].job_id, jobs[0].job_id]);
    expect((await history(user, hook.webhook_id, '?event_type=job.failed')).history.map((h: any) => h.job_id)).toEqual([failedJob.job_id]);
    expect((await history(user, hook.webhook_id, '?status=failed')).count).toBe(0);
    expect((await history(user, hook.webhook_id, '?status=success')).count).toBe(4);
    for (const q of ['?status=ok', '?limit=0', '?limit=500&limit=2', '?status=failed&status=success', `?status=success&next_token=${encodeURIComponent(page1.next_token)}`]) {
      await refusal(await api(user, 'GET', `/accounts/me/webhooks/${hook.webhook_id}/history${q}`), 400, 'INVALID_PARAMETER');
    }
    // An unknown event name is an invalid event name wherever it is sent.
    await refusal(await api(user, 'GET', `/accounts/me/webhooks/${hook.webhook_id}/history?event_type=job.nope`), 400, 'INVALID_EVENTS');
    await refusal(await api(user, 'GET', '/accounts/me/webhooks?event=job.nope'), 400, 'INVALID_EVENTS');
    // A history token does not open another webhook's or a job's history.
    const second = await createHook(user, { url: hookUrl('/ok/paged2') });
    await refusal(await api(user, 'GET', `/accounts/me/webhooks/${second.webhook_id}/history?limit=2&next_token=${encodeURIComponent(page1.next_token)}`), 400, 'INVALID_PARAMETER');

    await api(user, 'DELETE', `/accounts/me/webhooks/${hook.webhook_id}`);
    const byJob = await (await api(user, 'GET', `/jobs/${failedJob.job_id}/webhooks/history`)).json();
    expect(byJob.history).toEqual([expect.objectContaining({ webhook_id: hook.webhook_id, event_type: 'job.failed', status: 'success' })]);
    await refusal(await api(user, 'GET', `/jobs/${failedJob.job_id}/webhooks/history?limit=2&next_token=${encodeURIComponent(page1.next_token)}`), 400, 'INVALID_PARAMETER');
    await refusal(await api(user, 'GET', `/jobs/${failedJob.job_id}/webhooks/history?event_type=job.failed&event_type=job.completed`), 400, 'INVALID_PARAMETER');
    const stranger = await stack.account();
    await refusal(await api(stranger, 'GET', `/jobs/${failedJob.job_id}/webhooks/history`), 404, 'JOB_NOT_FOUND');
  });

  it('delivers an event whose notice was lost once the sweeper finds it pending', async () => {
    const user = await stack.account();
    await createHook(user, { url: hookUrl('/ok/swept') });
    // Written without a notice to the dispatcher (as if the notice was lost after the commit).
    const { config } = stack.services;
    const plain = new DynamoJobRepository(createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint }));
    const now = new Date();
    const job = completed(newJob({ job_id: `job_swept${Date.now()}`, account_id: user.account_id, job_type: 'long', status: 'processing', mode: 'html', now }), now);
    await plain.put(job, [jobEvent('job.completed', job, now)]);
    await dispatcher().drained();
    expect(deliveriesTo('/ok/swept')).toHaveLength(0);

    const sweep = (aheadMs: number) => sweepOutbox({ outbox: stack.services.outbox, queue: dispatcher(), clock: { now: () => new Date(Date.now() + aheadMs) } });
    // Not yet: the notice path has two minutes before the sweeper steps in.
    await sweep(0);
    await dispatcher().drained();
    expect(deliveriesTo('/ok/swept')).toHaveLength(0);
    expect((await sweep(180_000)).sent).toBeGreaterThanOrEqual(1);
    await dispatcher().drained();
    expect(deliveriesTo('/ok/swept')).toHaveLength(1);
    // Dispatched events leave the index: sweeping again sends nothing for it, and a repeated notice delivers nothing.
    await sweep(180_000);
    await dispatcher().send({ job_id: job.job_id, event_id: (await jobEventIds(job.job_id))[0] });
    await dispatcher().drained();
    expect(deliveriesTo('/ok/swept')).toHaveLength(1);
  });
});

describe('dispatchers shared between accounts', () => {
  /** Polls until `ready` holds; fails after `ms`. */
  /** Writes a job change with its event (the notice goes to the dispatcher), without waiting for the delivery. */
  async function write(user: TestAccount): Promise<Job> {
    const now = new Date();
    const job = completed(newJob({ job_id: `job_share${Math.random().toString(36).slice(2, 12)}`, account_id: user.account_id, job_type: 'long', status: 'processing', mode: 'html', now }), now);
    await stack.services.jobs.put(job, [jobEvent('job.completed', job, now)]);
    return job;
  }

  it("delivers another account's event while one account's receivers keep every series of its share waiting", async () => {
    const slow = await stack.account();
    const other = await stack.account();
    const path = `/hold?${Date.now()}`;
    const slowHook = await createHook(slow, { url: hookUrl(path) });
    await createHook(other, { url: hookUrl('/ok/not-held-back') });
    // As many events as the local dispatchers (4): without a share per account they would take every one of them.
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push(await write(slow));
    try {
      await until('two deliveries waiting at the slow receiver', () => deliveriesTo(path).length >= 2, 8000);
      await write(other);
      await until("the other account's delivery", () => deliveriesTo('/ok/not-held-back').length === 1, 8000);
      // The slow account has its share (2 locally) in flight; its other events wait in the queue.
      expect(deliveriesTo(path)).toHaveLength(2);
      expect(held).toHaveLength(2);
    } finally {
      holding = false;
      for (const res of held.splice(0)) res.writeHead(204).end();
    }
    // Once its series end, the events sent back are delivered too: each once, on its first attempt.
    await dispatcher().drained();
    const eventIds = deliveriesTo(path).map((r) => JSON.parse(r.body.toString()).event_id);
    expect(eventIds).toHaveLength(4);
    expect(new Set(eventIds).size).toBe(4);
    expect(new Set(deliveriesTo(path).map((r) => JSON.parse(r.body.toString()).job_id))).toEqual(new Set(jobs.map((j) => j.job_id)));
    const records = (await history(slow, slowHook.webhook_id)).history;
    expect(records.map((r: { status: string; retry_count: number }) => `${r.status} ${r.retry_count}`)).toEqual(Array(4).fill('success 0'));
    for (const job of jobs) expect((await stack.services.outbox.get(job.job_id, (await jobEventIds(job.job_id))[0]))!.pending).toBe(false);
  }, 60_000);

  it('moves a postponed event in the pending index, so the sweeper sends it only two minutes later', async () => {
    const user = await stack.account();
    const { config } = stack.services;
    // Written without a notice (no webhook would be called either way): it stays pending.
    const plain = new DynamoJobRepository(createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint }));
    const now = new Date();
    const job = completed(newJob({ job_id: `job_postponed${Date.now()}`, account_id: user.account_id, job_type: 'long', status: 'processing', mode: 'html', now }), now);
    await plain.put(job, [jobEvent('job.completed', job, now)]);
    const [eventId] = await jobEventIds(job.job_id);
    const listed = async (before: Date) => {
      const shards = await Promise.all(Array.from({ length: stack.services.outbox.shards }, (_, n) => stack.services.outbox.listPending(n, before.toISOString(), 1000)));
      return shards.flat().filter((e) => e.event_id === eventId);
    };
    expect(await listed(new Date(now.getTime() + 1000))).toEqual([{ job_id: job.job_id, event_id: eventId, created_at: now.toISOString() }]);
    const postponedTo = new Date(now.getTime() + 60_000);
    await stack.services.outbox.postpone(job.job_id, eventId, postponedTo.toISOString());
    expect(await listed(new Date(now.getTime() + 1000))).toEqual([]);
    // Listed again from then, still with the time it was written (the day after which it is given up runs from that).
    expect(await listed(new Date(postponedTo.getTime() + 1))).toEqual([{ job_id: job.job_id, event_id: eventId, created_at: now.toISOString() }]);
    // A dispatched event is not put back into the index.
    await stack.services.outbox.markDispatched(job.job_id, eventId, new Date().toISOString());
    await stack.services.outbox.postpone(job.job_id, eventId, new Date().toISOString());
    expect(await listed(new Date(Date.now() + 3_600_000))).toEqual([]);
    expect((await stack.services.outbox.get(job.job_id, eventId))!.pending).toBe(false);
  });
});

describe('delivery claims and records in the table', () => {
  it('holds each (event, webhook) pair for one series: busy while leased, taken over with its id after, done once', async () => {
    const store = stack.services.webhookDeliveries;
    const user = await stack.account();
    const hook = await createHook(user, { url: hookUrl('/ok/claims') });
    const t0 = Date.now();
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const pair = { job_id: `job_claims${t0}`, event_id: '01HCLAIMEVENT0000000000000', webhook_id: hook.webhook_id };
    expect(await store.claim({ ...pair, delivery_id: '01HDELIVERY000000000000001', lease_until: at(90_000), now: at(0) })).toEqual({ state: 'claimed', delivery_id: '01HDELIVERY000000000000001', attempts_before: 0 });
    expect(await store.claim({ ...pair, delivery_id: '01HDELIVERY000000000000002', lease_until: at(100_000), now: at(10_000) })).toEqual({ state: 'busy' });
    expect(await store.claim({ ...pair, delivery_id: '01HDELIVERY000000000000003', lease_until: at(200_000), now: at(95_000) })).toEqual({ state: 'claimed', delivery_id: '01HDELIVERY000000000000001', attempts_before: 1 });
    const record = {
      ...pair, delivery_id: '01HDELIVERY000000000000001', account_id: user.account_id, event_type: 'job.completed' as const, status: 'success' as const,
      status_code: 200, error_message: null, retry_count: 0, started_at: at(95_000), delivered_at: at(95_100), duration_ms: 100, payload_size_bytes: 10,
    };
    // The series start sets last_triggered_at (only on an active webhook subscribed to the event); completing keeps it.
    expect(await stack.services.webhooks.markTriggered(hook.webhook_id, 'job.failed', at(95_000))).toBeNull();
    expect(await stack.services.webhooks.markTriggered(hook.webhook_id, 'job.completed', at(95_000))).toMatchObject({ webhook_id: hook.webhook_id, last_triggered_at: at(95_000) });
    await store.complete({ ...record, started_at: at(1) });
    await store.complete(record); // a second finish of the same series changes nothing
    expect(await store.claim({ ...pair, delivery_id: '01HDELIVERY000000000000004', lease_until: at(400_000), now: at(300_000) })).toEqual({ state: 'done' });
    expect((await history(user, hook.webhook_id)).history).toEqual([expect.objectContaining({ delivery_id: record.delivery_id, status: 'success' })]);
    expect(await getHook(user, hook.webhook_id)).toMatchObject({ success_count: 1, last_triggered_at: at(95_000), last_success_at: at(95_100) });

    // A webhook deleted during its series: the record is still written (visible per job), without counters.
    const gone = await createHook(user, { url: hookUrl('/ok/gone') });
    const pair2 = { ...pair, webhook_id: gone.webhook_id };
    await store.claim({ ...pair2, delivery_id: '01HDELIVERY000000000000005', lease_until: at(90_000), now: at(0) });
    await api(user, 'DELETE', `/accounts/me/webhooks/${gone.webhook_id}`);
    await store.complete({ ...record, ...pair2, delivery_id: '01HDELIVERY000000000000005', status: 'failed', status_code: 500, retry_count: 3 });
    expect(await stack.services.webhooks.get(gone.webhook_id)).toBeNull();
    const byJob = await store.listForJob(pair.job_id, { limit: 10 });
    expect(byJob.records.map((r) => [r.webhook_id, r.status])).toEqual([
      [gone.webhook_id, 'failed'],
      [hook.webhook_id, 'success'],
    ]);
  });
});

async function jobEventIds(jobId: string): Promise<string[]> {
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const { config } = stack.services;
  const db = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });
  const { Items = [] } = await db.doc.send(
    new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)', ExpressionAttributeValues: { ':pk': `JOB#${jobId}`, ':e': 'EVENT#' } }),
  );
  return Items.map((i) => String(i.event_id));
}

// Last in this file: every delivery the tests above caused (each event kind, retries, rotations) keeps to the payload
// schema that /openapi.json publishes under `webhooks`.
describe('the delivered payloads', () => {
  it('all keep to the documented webhook payload schema', () => {
    const bodies = received.filter((r) => r.headers['content-type'] === 'application/json').map((r) => JSON.parse(r.body.toString('utf8')));
    expect(new Set(bodies.map((b) => b.event)).size).toBeGreaterThanOrEqual(5);
    for (const body of bodies) {
      const parsed = webhookPayloadSchema.safeParse(body);
      expect([body.event, parsed.success ? 'ok' : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')]).toEqual([body.event, 'ok']);
    }
  });
});
