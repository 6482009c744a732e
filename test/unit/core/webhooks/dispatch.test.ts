import { type EventType, type OutboxEvent, jobEvent } from '../../../../functions/core/events/events';
import { completed, newJob } from '../../../../functions/core/jobs/job';
import { FetchError, type HttpClient, type HttpRequestSpec } from '../../../../functions/core/net/fetch';
import { DISPATCH_SLOT_KIND, type DispatchDeps, buildPayload, dispatchEvent, outboxNoticeOf, readOutboxNotice, sweepOutbox } from '../../../../functions/core/webhooks/dispatch';
import type { ClaimResult, DeliveryStore, Outbox, OutboxNotice, WebhookRepository } from '../../../../functions/core/webhooks/ports';
import { SecretBox } from '../../../../functions/core/webhooks/secret-box';
import { verifyWebhookSignature } from '../../../../functions/core/webhooks/signature';
import type { DeliveryRecord, Webhook } from '../../../../functions/core/webhooks/webhook';
import { MemorySlots } from '../../../support/memory';

const box = new SecretBox('unit-test-deployment-key');
let clockMs = Date.parse('2026-05-01T10:00:00.000Z');
const clock = { now: () => new Date(clockMs) };

function hook(id: string, changes: Partial<Webhook> = {}, secret = `whsec_${id}`): Webhook {
  const at = clock.now().toISOString();
  return {
    webhook_id: id, account_id: 'acc_1', name: id, url: `https://hooks.example.com/${id}`, events: ['job.completed'], is_active: true,
    secret_sealed: box.seal(secret, id), previous_secret_sealed: null, previous_secret_expires_at: null, created_at: at, updated_at: at,
    last_triggered_at: null, last_success_at: null, last_failure_at: null, success_count: 0, failure_count: 0, ...changes,
  };
}

class Memory implements WebhookRepository, DeliveryStore, Outbox {
  hooks: Webhook[] = [];
  claims = new Map<string, { delivery_id: string; state: 'pending' | 'done'; lease_until: string; attempts?: number }>();
  records: DeliveryRecord[] = [];
  events = new Map<string, { event: OutboxEvent; pending: boolean; postponed_at?: string }>();
  readonly shards = 1;
  async get(jobIdOrWebhook: string, eventId?: string): Promise<any> {
    if (eventId === undefined) return this.hooks.find((h) => h.webhook_id === jobIdOrWebhook) ?? null;
    return this.events.get(eventId) ?? null;
  }
  async create(): Promise<any> {
    throw new Error('unused');
  }
  async update(): Promise<Webhook | null> {
    throw new Error('unused');
  }
  async updateSecrets(): Promise<Webhook | null> {
    throw new Error('unused');
  }
  async delete(): Promise<boolean> {
    throw new Error('unused');
  }
  async listForAccount(accountId: string) {
    return this.hooks.filter((h) => h.account_id === accountId);
  }
  triggered: string[] = [];
  async markTriggered(webhookId: string, event: EventType, at: string): Promise<Webhook | null> {
    const hook = this.hooks.find((h) => h.webhook_id === webhookId);
    if (!hook || !hook.is_active || !hook.events.includes(event)) return null;
    hook.last_triggered_at = at;
    this.triggered.push(webhookId);
    return { ...hook };
  }
  async claim(input: { event_id: string; webhook_id: string; delivery_id: string; lease_until: string; now: string }): Promise<ClaimResult> {
    const key = `${input.event_id}#${input.webhook_id}`;
    const current = this.claims.get(key);
    if (current?.state === 'done') return { state: 'done' };
    if (current && current.lease_until >= input.now) return { state: 'busy' };
    const delivery_id = current?.delivery_id ?? input.delivery_id;
    this.claims.set(key, { ...current, delivery_id, state: 'pending', lease_until: input.lease_until });
    return { state: 'claimed', delivery_id, attempts_before: current ? (current.attempts ?? 1) : 0 };
  }
  async noteAttempt(input: { event_id: string; webhook_id: string; delivery_id: string; attempt: number }) {
    const claim = this.claims.get(`${input.event_id}#${input.webhook_id}`);
    if (claim?.state === 'pending' && claim.delivery_id === input.delivery_id) claim.attempts = input.attempt;
  }
  async complete(record: DeliveryRecord) {
    const claim = this.claims.get(`${record.event_id}#${record.webhook_id}`)!;
    if (claim.state === 'done' || claim.delivery_id !== record.delivery_id) return;
    claim.state = 'done';
    this.records.push(record);
  }
  async release(input: { event_id: string; webhook_id: string; delivery_id: string }) {
    const claim = this.claims.get(`${input.event_id}#${input.webhook_id}`)!;
    if (claim.state === 'pending' && claim.delivery_id === input.delivery_id) claim.state = 'done';
  }
  async listForWebhook(): Promise<any> {
    throw new Error('unused');
  }
  async listForJob(): Promise<any> {
    throw new Error('unused');
  }
  async markDispatched(_jobId: string, eventId: string) {
    this.events.get(eventId)!.pending = false;
  }
  async postpone(_jobId: string, eventId: string, at: string) {
    const stored = this.events.get(eventId);
    if (stored?.pending) stored.postponed_at = at;
  }
  async listPending(_shard: number, before: string, limit: number) {
    return [...this.events.values()]
      .filter((e) => e.pending && (e.postponed_at ?? e.event.created_at) < before)
      .slice(0, limit)
      .map((e) => ({ job_id: e.event.job_id, event_id: e.event.event_id, created_at: e.event.created_at }));
  }
}

/** `answer`: a status for every request, or one computed per request (it may change the stored webhook first). */
function setup(answer: number | ((spec: HttpRequestSpec, memory: Memory) => number) = 200) {
  const memory = new Memory();
  const sent: HttpRequestSpec[] = [];
  const http: HttpClient = {
    async request(spec) {
      sent.push(spec);
      const status = typeof answer === 'number' ? answer : answer(spec, memory);
      return { status, headers: {}, body: Buffer.alloc(0), finalUrl: spec.url, redirects: [] };
    },
  };
  const job = completed(newJob({ job_id: 'job_1', account_id: 'acc_1', job_type: 'long', status: 'processing', mode: 'markdown', now: clock.now() }), clock.now(), {
    pages: 3,
    output: { key: 'outputs/acc_1/job_1/job_1.pdf', name: 'report.pdf', content_type: 'application/pdf', size_bytes: 10, expires_at: '2026-06-01T00:00:00.000Z' },
  });
  const stored = new Set(['outputs/acc_1/job_1/job_1.pdf']);
  const blobs = {
    signedGetUrl: jest.fn(async (key: string, opts: { filename?: string }) => `https://bucket.example.com/${key}?name=${opts.filename}`),
    head: async (key: string) => (stored.has(key) ? { size_bytes: 10, content_type: 'application/pdf' } : null),
    stored,
  };
  const queue = { sent: [] as { message: OutboxNotice; delaySeconds?: number }[], send: async (message: OutboxNotice, opts?: { delaySeconds?: number }) => void queue.sent.push({ message, ...opts }) };
  const slots = new MemorySlots();
  const deps: DispatchDeps = {
    outbox: memory, webhooks: memory, deliveries: memory, secrets: box, http, clock, blobs, jobs: { get: async () => job }, slots, queue, sleep: async () => undefined,
  };
  const add = (type: EventType) => {
    const event = jobEvent(type, job, clock.now());
    memory.events.set(event.event_id, { event, pending: true });
    return { job_id: event.job_id, event_id: event.event_id };
  };
  return { memory, sent, deps, add, blobs, job, queue, slots };
}

describe('dispatchEvent', () => {
  it('fans an event out to the active webhooks subscribed to it, each signed with its own secret', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [
      hook('wh_a'),
      hook('wh_b', { events: ['job.completed', 'job.failed'] }),
      hook('wh_off', { is_active: false }),
      hook('wh_other', { events: ['job.failed'] }),
      hook('wh_foreign', { account_id: 'acc_2' }),
    ];
    const notice = add('job.completed');
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent.map((s) => s.headers!['X-Webhook-Id']).sort()).toEqual(['wh_a', 'wh_b']);
    for (const s of sent) {
      const id = s.headers!['X-Webhook-Id'];
      expect(verifyWebhookSignature(Buffer.from(s.body!), s.headers!['Service-Signature'], `whsec_${id}`, 300, clockMs / 1000)).toBe(true);
    }
    expect(memory.records.map((r) => [r.webhook_id, r.status, r.retry_count])).toEqual(expect.arrayContaining([['wh_a', 'success', 0], ['wh_b', 'success', 0]]));
    expect(memory.events.get(notice.event_id)!.pending).toBe(false);
    // A redelivered notice does nothing more.
    expect(await dispatchEvent(deps, notice)).toBe('already_dispatched');
    expect(sent).toHaveLength(2);
  });

  it('builds the payload once per event with a fresh signed link, event_id and timestamp', async () => {
    const { memory, sent, deps, add, blobs, job } = setup();
    memory.hooks = [hook('wh_a'), hook('wh_b')];
    const notice = add('job.completed');
    await dispatchEvent(deps, notice);
    expect(blobs.signedGetUrl).toHaveBeenCalledTimes(1);
    const payload = JSON.parse(Buffer.from(sent[0].body!).toString());
    expect(payload).toEqual({
      event: 'job.completed', job_id: 'job_1', status: 'completed', job_type: 'long', mode: 'markdown', pages: 3, truncated: false,
      created_at: job.created_at, completed_at: job.completed_at, event_id: notice.event_id,
      s3_url: 'https://bucket.example.com/outputs/acc_1/job_1/job_1.pdf?name=report.pdf', s3_url_expires_at: '2026-05-01T11:00:00.000Z',
      timestamp: '2026-05-01T10:00:00.000Z',
    });
    expect(Buffer.from(sent[1].body!).toString()).toBe(Buffer.from(sent[0].body!).toString());
  });

  it('stamps the payload with when the event happened, not when it is delivered', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_a')];
    const happened = clock.now().toISOString();
    const notice = add('job.completed');
    clockMs += 5 * 60_000; // a swept event goes out minutes later
    await dispatchEvent(deps, notice);
    expect(JSON.parse(Buffer.from(sent[0].body!).toString()).timestamp).toBe(happened);
  });

  it("names a linked file that is no longer the job's output after its own key, not the job's current file name", async () => {
    const { deps, job, blobs } = setup();
    blobs.stored.add('outputs/acc_1/job_1/earlier.pdf');
    const event = { ...jobEvent('job.completed', job, clock.now()), output_key: 'outputs/acc_1/job_1/earlier.pdf' };
    expect((await buildPayload(deps, event)).s3_url).toBe('https://bucket.example.com/outputs/acc_1/job_1/earlier.pdf?name=earlier.pdf');
  });

  it('links only a file still stored: a removed one gives s3_url null', async () => {
    const { deps, job, blobs } = setup();
    const event = jobEvent('job.completed', job, clock.now());
    expect((await buildPayload(deps, event)).s3_url).toEqual(expect.stringContaining('job_1.pdf'));
    blobs.stored.clear();
    expect(await buildPayload(deps, event)).toMatchObject({ s3_url: null, s3_url_expires_at: null });
  });

  it('gives mail merge events a report_url and job.failed no link', async () => {
    const { deps, job } = setup();
    const failedEvent = jobEvent('job.failed', { ...job, status: 'failed', error_message: 'x' }, clock.now());
    expect(await buildPayload(deps, failedEvent)).not.toHaveProperty('s3_url');
    const campaign = { ...jobEvent('mailmerge.campaign.completed', job, clock.now()), payload: { event: 'mailmerge.campaign.completed', campaign_id: 'cmp_1', sent_count: 3 } };
    expect(await buildPayload(deps, campaign)).toMatchObject({ campaign_id: 'cmp_1', sent_count: 3, report_url: expect.stringContaining('outputs/acc_1/job_1') });
  });

  it('never delivers job.timeout, and still takes it out of the outbox', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_t', { events: ['job.timeout'] })];
    const notice = add('job.timeout');
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent).toHaveLength(0);
    expect(memory.records).toHaveLength(0);
    expect(memory.events.get(notice.event_id)!.pending).toBe(false);
  });

  it('finishes each (event, webhook) pair once; a crashed worker’s pair is taken over with the same delivery id', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_a'), hook('wh_b')];
    const notice = add('job.completed');
    // Another worker holds wh_b and is still delivering: wh_a is delivered, the event stays pending.
    await memory.claim({ event_id: notice.event_id, webhook_id: 'wh_b', delivery_id: '01DEADWORKER0000000000000A', lease_until: new Date(clockMs + 60_000).toISOString(), now: clock.now().toISOString() });
    expect(await dispatchEvent(deps, notice)).toBe('in_progress');
    expect(sent.map((s) => s.headers!['X-Webhook-Id'])).toEqual(['wh_a']);
    expect(memory.events.get(notice.event_id)!.pending).toBe(true);
    // That worker died; after its lease the pair is taken over, keeping its delivery id; wh_a is not sent again.
    clockMs += 120_000;
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent.map((s) => [s.headers!['X-Webhook-Id'], s.headers!['X-Webhook-Delivery-Id']])).toEqual([
      ['wh_a', expect.any(String)],
      ['wh_b', '01DEADWORKER0000000000000A'],
    ]);
    expect(memory.records).toHaveLength(2);
  });

  it('holds a pair for the whole series: a notice redelivered while it runs starts no second series', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_a')];
    const notice = add('job.completed');
    const redelivered: Promise<string>[] = [];
    deps.http = {
      async request(spec) {
        sent.push(spec);
        if (sent.length === 1) {
          // A series of timeouts lasts ~47 s; the redelivered notice comes 30 s in.
          clockMs += 30_000;
          redelivered.push(dispatchEvent(deps, notice));
          await redelivered[0];
        }
        return { status: 200, headers: {}, body: Buffer.alloc(0), finalUrl: spec.url, redirects: [] };
      },
    };
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(await redelivered[0]).toBe('in_progress');
    expect(sent).toHaveLength(1);
    expect(memory.records).toHaveLength(1);
  });

  it('a takeover makes only the attempts the dead worker left: a series has four in all', async () => {
    const { memory, sent, deps, add } = setup(503);
    memory.hooks = [hook('wh_a')];
    const notice = add('job.completed');
    // The dead worker noted its third attempt before it died.
    await memory.claim({ event_id: notice.event_id, webhook_id: 'wh_a', delivery_id: '01DEADWORKER0000000000000B', lease_until: new Date(clockMs + 60_000).toISOString(), now: clock.now().toISOString() });
    await memory.noteAttempt({ event_id: notice.event_id, webhook_id: 'wh_a', delivery_id: '01DEADWORKER0000000000000B', attempt: 3 });
    clockMs += 120_000;
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent).toHaveLength(1);
    expect(memory.records).toEqual([expect.objectContaining({ delivery_id: '01DEADWORKER0000000000000B', status: 'failed', status_code: 503, retry_count: 3 })]);
  });

  it('returns quietly for an event that does not exist', async () => {
    const { deps } = setup();
    expect(await dispatchEvent(deps, { job_id: 'job_x', event_id: 'nope' })).toBe('missing');
  });

  it('signs with the previous secret too during its grace period only', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_r', { previous_secret_sealed: box.seal('whsec_old', 'wh_r'), previous_secret_expires_at: new Date(clockMs + 1000).toISOString() })];
    await dispatchEvent(deps, add('job.completed'));
    expect(sent[0].headers!['Service-Signature'].split(',v1=')).toHaveLength(3);
    clockMs += 1000;
    await dispatchEvent(deps, add('job.completed'));
    expect(sent[1].headers!['Service-Signature'].split(',v1=')).toHaveLength(2);
    expect(verifyWebhookSignature(Buffer.from(sent[1].body!), sent[1].headers!['Service-Signature'], 'whsec_old', 300, clockMs / 1000)).toBe(false);
  });
});

describe('a series under way sees the webhook as it is at each retry', () => {
  const hookOf = (memory: Memory, id: string) => memory.hooks.find((h) => h.webhook_id === id)!;
  const signs = (spec: HttpRequestSpec, secret: string) => verifyWebhookSignature(Buffer.from(spec.body!), spec.headers!['Service-Signature'], secret, 300, clockMs / 1000);

  it('sets last_triggered_at when the series starts, before the first attempt answers', async () => {
    const seen: (string | null)[] = [];
    const { memory, deps, add } = setup((_spec, m) => {
      seen.push(hookOf(m, 'wh_t').last_triggered_at);
      return 200;
    });
    memory.hooks = [hook('wh_t')];
    await dispatchEvent(deps, add('job.completed'));
    expect(seen).toEqual([clock.now().toISOString()]);
    expect(memory.records[0].started_at).toBe(clock.now().toISOString());
  });

  it('signs each retry with the secrets valid then: a rotation with grace 0 revokes the old secret for the retries', async () => {
    const { memory, sent, deps, add } = setup((_spec, m) => {
      if (sent.length > 1) return 200;
      Object.assign(hookOf(m, 'wh_r'), { secret_sealed: box.seal('whsec_new', 'wh_r'), previous_secret_sealed: null, previous_secret_expires_at: null });
      return 503;
    });
    memory.hooks = [hook('wh_r', {}, 'whsec_old')];
    await dispatchEvent(deps, add('job.completed'));
    expect(sent).toHaveLength(2);
    expect([signs(sent[0], 'whsec_old'), signs(sent[0], 'whsec_new')]).toEqual([true, false]);
    expect([signs(sent[1], 'whsec_old'), signs(sent[1], 'whsec_new')]).toEqual([false, true]);
    expect(memory.records[0]).toMatchObject({ status: 'success', retry_count: 1 });
  });

  it('adds the old secret to the retries when a rotation keeps it for a grace period, and follows a new URL', async () => {
    const { memory, sent, deps, add } = setup((_spec, m) => {
      if (sent.length > 1) return 200;
      Object.assign(hookOf(m, 'wh_g'), {
        url: 'https://moved.example.com/in',
        secret_sealed: box.seal('whsec_new', 'wh_g'),
        previous_secret_sealed: box.seal('whsec_old', 'wh_g'),
        previous_secret_expires_at: new Date(clockMs + 3_600_000).toISOString(),
      });
      return 500;
    });
    memory.hooks = [hook('wh_g', {}, 'whsec_old')];
    await dispatchEvent(deps, add('job.completed'));
    expect(sent.map((s) => s.url)).toEqual(['https://hooks.example.com/wh_g', 'https://moved.example.com/in']);
    expect([signs(sent[1], 'whsec_old'), signs(sent[1], 'whsec_new')]).toEqual([true, true]);
  });

  const changes: [string, (h: Webhook, m: Memory) => void, string][] = [
    ['paused', (h) => (h.is_active = false), 'the webhook was paused (is_active false)'],
    ['unsubscribed', (h) => (h.events = ['job.failed']), 'the webhook no longer subscribes to job.completed'],
    ['deleted', (h, m) => (m.hooks = m.hooks.filter((x) => x !== h)), 'the webhook was deleted'],
  ];
  it.each(changes)('stops retrying a webhook %s during its series and records why', async (_what, change, why) => {
    const { memory, sent, deps, add } = setup((_spec, m) => {
      change(hookOf(m, 'wh_s'), m);
      return 503;
    });
    memory.hooks = [hook('wh_s')];
    const notice = add('job.completed');
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent).toHaveLength(1);
    expect(memory.records).toEqual([
      expect.objectContaining({ webhook_id: 'wh_s', status: 'failed', status_code: 503, retry_count: 0, error_message: `HTTP 503 from the receiver; retries stopped: ${why}` }),
    ]);
    expect(memory.events.get(notice.event_id)!.pending).toBe(false);
  });

  it('keeps the last attempt’s timeout status when a series of timeouts is stopped', async () => {
    const { memory, sent, deps, add } = setup();
    deps.http = {
      async request(spec) {
        sent.push(spec);
        if (sent.length === 2) hookOf(memory, 'wh_to').is_active = false;
        throw new FetchError('timeout', spec.url, 'no complete answer within 10000 ms');
      },
    };
    memory.hooks = [hook('wh_to')];
    await dispatchEvent(deps, add('job.completed'));
    expect(sent).toHaveLength(2);
    expect(memory.records[0]).toMatchObject({ status: 'timeout', retry_count: 1, error_message: expect.stringMatching(/10 seconds; retries stopped: the webhook was paused/) });
  });

  it('does not call a webhook paused after the (lagging) list showed it active: no record, the pair is closed', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_lag', { is_active: false })];
    const stale = [{ ...memory.hooks[0], is_active: true }];
    memory.listForAccount = async () => stale;
    const notice = add('job.completed');
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent).toHaveLength(0);
    expect(memory.records).toHaveLength(0);
    expect(memory.hooks[0].last_triggered_at).toBeNull();
    expect(memory.claims.get(`${notice.event_id}#wh_lag`)!.state).toBe('done');
  });

  it('sends the first attempt where the webhook as read at the start says, signed with its secret, not as the (lagging) list showed it', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_moved', { url: 'https://moved.example.com/in' }, 'whsec_new')];
    const stale = [{ ...memory.hooks[0], url: 'https://hooks.example.com/old', secret_sealed: box.seal('whsec_old', 'wh_moved') }];
    memory.listForAccount = async () => stale;
    await dispatchEvent(deps, add('job.completed'));
    expect(sent.map((s) => s.url)).toEqual(['https://moved.example.com/in']);
    expect([signs(sent[0], 'whsec_old'), signs(sent[0], 'whsec_new')]).toEqual([false, true]);
  });

  it("records as the series' start the moment last_triggered_at was set, though the clock moves on before the first attempt", async () => {
    const { memory, deps, add } = setup();
    memory.hooks = [hook('wh_t')];
    deps.clock = { now: () => new Date((clockMs += 7)) };
    await dispatchEvent(deps, add('job.completed'));
    expect(memory.hooks[0].last_triggered_at).toEqual(expect.any(String));
    expect(memory.records[0].started_at).toBe(memory.hooks[0].last_triggered_at);
  });
});

describe('dispatchEvent when a webhook cannot be served', () => {
  it('records one failed delivery for a secret that cannot be read and still calls the others', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_ok'), { ...hook('wh_broken'), secret_sealed: 'not-a-sealed-secret' }];
    const notice = add('job.completed');
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent.map((s) => s.headers!['X-Webhook-Id'])).toEqual(['wh_ok']);
    expect(memory.records.find((r) => r.webhook_id === 'wh_broken')).toMatchObject({ status: 'failed', retry_count: 0, error_message: expect.stringMatching(/rotate-secret/) });
    // Sending the notice again repeats nothing: both pairs are done.
    expect(await dispatchEvent(deps, notice)).toBe('already_dispatched');
  });

  it('lets every other series finish before a failing one makes the notice come again, and repeats none of them', async () => {
    const { memory, sent, deps, add } = setup();
    memory.hooks = [hook('wh_a'), hook('wh_db'), hook('wh_c')];
    const markTriggered = memory.markTriggered.bind(memory);
    let failures = 1;
    memory.markTriggered = async (id, event, at) => {
      if (id === 'wh_db' && failures-- > 0) throw new Error('table throttled');
      return markTriggered(id, event, at);
    };
    const notice = add('job.completed');
    await expect(dispatchEvent(deps, notice)).rejects.toThrow('table throttled');
    expect(sent.map((s) => s.headers!['X-Webhook-Id']).sort()).toEqual(['wh_a', 'wh_c']);
    expect(memory.records.map((r) => r.webhook_id).sort()).toEqual(['wh_a', 'wh_c']);
    // The redelivered notice, once the pair's lease has run out, finishes only the failed pair.
    clockMs += 91_000;
    expect(await dispatchEvent(deps, notice)).toBe('dispatched');
    expect(sent.map((s) => s.headers!['X-Webhook-Id']).sort()).toEqual(['wh_a', 'wh_c', 'wh_db']);
  });
});

describe('dispatchEvent shares the dispatchers between accounts', () => {
  it('sends an event over its account’s share back to the queue with a delay, and takes it once a slot is free', async () => {
    const { memory, sent, deps, add, queue, slots } = setup();
    memory.hooks = [hook('wh_a')];
    const share = { dispatchesPerAccount: 2 };
    // Two of the account's events are being dispatched (their series still run).
    for (const n of [1, 2]) await slots.acquire({ accountId: 'acc_1', kind: DISPATCH_SLOT_KIND, jobId: `busy_${n}`, max: 2, now: clock.now(), leaseSeconds: 120 });
    const notice = add('job.completed');
    expect(await dispatchEvent({ ...deps, share }, notice)).toBe('deferred');
    expect(sent).toEqual([]);
    expect(memory.records).toEqual([]);
    expect(queue.sent).toEqual([{ message: { ...notice, deferrals: 1 }, delaySeconds: 2 }]);
    expect(memory.events.get(notice.event_id)!.pending).toBe(true);
    // Sent back again, it waits longer.
    expect(await dispatchEvent({ ...deps, share }, queue.sent[0].message)).toBe('deferred');
    expect(queue.sent[1]).toEqual({ message: { ...notice, deferrals: 2 }, delaySeconds: 4 });
    // Another account's event is not held back.
    memory.hooks.push(hook('wh_b', { account_id: 'acc_2' }));
    const other = add('job.completed');
    memory.events.get(other.event_id)!.event.account_id = 'acc_2';
    expect(await dispatchEvent({ ...deps, share }, other)).toBe('dispatched');
    expect(sent.map((s) => s.headers!['X-Webhook-Id'])).toEqual(['wh_b']);
    // A slot given back: the event is dispatched, and gives its own slot back after.
    await slots.release({ accountId: 'acc_1', kind: DISPATCH_SLOT_KIND, jobId: 'busy_1' });
    expect(await dispatchEvent({ ...deps, share }, queue.sent[1].message)).toBe('dispatched');
    expect(sent.map((s) => s.headers!['X-Webhook-Id'])).toEqual(['wh_b', 'wh_a']);
    expect(await slots.holders({ accountId: 'acc_1', kind: DISPATCH_SLOT_KIND, now: clock.now() })).toEqual(['busy_2']);
  });

  it('holds a slot for the whole fan-out and gives it back when a series fails unexpectedly', async () => {
    const { memory, deps, add, slots } = setup();
    memory.hooks = [hook('wh_a')];
    let during: string[] = [];
    deps.http = {
      async request() {
        during = await slots.holders({ accountId: 'acc_1', kind: DISPATCH_SLOT_KIND, now: clock.now() });
        return { status: 200, headers: {}, body: Buffer.alloc(0), finalUrl: '', redirects: [] };
      },
    };
    const notice = add('job.completed');
    memory.complete = async () => {
      throw new Error('table unavailable');
    };
    await expect(dispatchEvent(deps, notice)).rejects.toThrow('table unavailable');
    expect(during).toEqual([`${notice.job_id}/${notice.event_id}`]);
    expect(await slots.holders({ accountId: 'acc_1', kind: DISPATCH_SLOT_KIND, now: clock.now() })).toEqual([]);
  });

  it('waits at most share.deferSeconds between tries, 30 s unless the deployment says otherwise', async () => {
    const { memory, deps, add, queue, slots } = setup();
    memory.hooks = [hook('wh_a')];
    await slots.acquire({ accountId: 'acc_1', kind: DISPATCH_SLOT_KIND, jobId: 'busy', max: 1, now: clock.now(), leaseSeconds: 600 });
    const notice = { ...add('job.completed'), deferrals: 5 };
    expect(await dispatchEvent({ ...deps, share: { dispatchesPerAccount: 1 } }, notice)).toBe('deferred');
    expect(await dispatchEvent({ ...deps, share: { dispatchesPerAccount: 1, deferSeconds: 10 } }, notice)).toBe('deferred');
    expect(queue.sent.map((s) => [s.message.deferrals, s.delaySeconds])).toEqual([[6, 30], [6, 10]]);
  });

  it('takes no slot for an event nobody is to be called for', async () => {
    const { deps, add, slots } = setup();
    const acquire = jest.spyOn(slots, 'acquire');
    expect(await dispatchEvent({ ...deps, share: { dispatchesPerAccount: 1 } }, add('job.completed'))).toBe('dispatched');
    expect(acquire).not.toHaveBeenCalled();
  });

  it('keeps a deferred event from the sweeper until two minutes after it was last sent back', async () => {
    const { memory, deps, add, slots } = setup();
    memory.hooks = [hook('wh_a')];
    await slots.acquire({ accountId: 'acc_1', kind: DISPATCH_SLOT_KIND, jobId: 'busy', max: 1, now: clock.now(), leaseSeconds: 600 });
    const notice = add('job.completed');
    const swept = { sent: [] as OutboxNotice[], send: async (m: OutboxNotice) => void swept.sent.push(m) };
    const later = (ms: number) => ({ now: () => new Date(clockMs + ms) });
    expect(await dispatchEvent({ ...deps, clock: later(100_000), share: { dispatchesPerAccount: 1 } }, notice)).toBe('deferred');
    expect(await sweepOutbox({ outbox: memory, queue: swept, clock: later(121_000) })).toEqual({ sent: 0, abandoned: 0 });
    expect(await sweepOutbox({ outbox: memory, queue: swept, clock: later(221_000) })).toEqual({ sent: 1, abandoned: 0 });
    expect(swept.sent).toEqual([notice]);
  });

  it('reads a message back with its deferrals, and refuses what is not one', () => {
    expect(readOutboxNotice('{"job_id":"j","event_id":"e","deferrals":3}')).toEqual({ job_id: 'j', event_id: 'e', deferrals: 3 });
    expect(readOutboxNotice('{"job_id":"j","event_id":"e","deferrals":"x"}')).toEqual({ job_id: 'j', event_id: 'e' });
    for (const bad of ['', 'null', '{"job_id":"j"}', '{"job_id":1,"event_id":"e"}', '[']) expect(readOutboxNotice(bad)).toBeNull();
    // Already parsed (what the local queue hands its recovery of an unfinished delivery).
    expect(outboxNoticeOf({ job_id: 'j', event_id: 'e', deferrals: 2 })).toEqual({ job_id: 'j', event_id: 'e', deferrals: 2 });
    expect(outboxNoticeOf(null)).toBeNull();
  });
});

describe('sweepOutbox', () => {
  it('re-sends events still pending two minutes after their write', async () => {
    const { memory, add } = setup();
    const notice = add('job.completed');
    const queue = { sent: [] as OutboxNotice[], send: async (m: OutboxNotice) => void queue.sent.push(m) };
    expect(await sweepOutbox({ outbox: memory, queue, clock: { now: () => new Date(clockMs + 119_000) } })).toEqual({ sent: 0, abandoned: 0 });
    expect(await sweepOutbox({ outbox: memory, queue, clock: { now: () => new Date(clockMs + 121_000) } })).toEqual({ sent: 1, abandoned: 0 });
    expect(queue.sent).toEqual([notice]);
  });

  it('re-sends a backlog of hundreds in one run, so events that keep failing do not hold back the rest for long', async () => {
    const { memory, add } = setup();
    for (let i = 0; i < 250; i++) add('job.completed');
    const queue = { sent: [] as OutboxNotice[], send: async (m: OutboxNotice) => void queue.sent.push(m) };
    expect(await sweepOutbox({ outbox: memory, queue, clock: { now: () => new Date(clockMs + 121_000) } })).toEqual({ sent: 250, abandoned: 0 });
    expect(new Set(queue.sent.map((n) => n.event_id)).size).toBe(250);
  });

  it('gives up an event pending for a day: it leaves the pending index and is not sent again', async () => {
    const { memory, add } = setup();
    const notice = add('job.completed');
    const queue = { sent: [] as OutboxNotice[], send: async (m: OutboxNotice) => void queue.sent.push(m) };
    const logged: string[] = [];
    expect(await sweepOutbox({ outbox: memory, queue, clock: { now: () => new Date(clockMs + 86_401_000) }, log: (m) => logged.push(m) })).toEqual({ sent: 0, abandoned: 1 });
    expect(memory.events.get(notice.event_id)!.pending).toBe(false);
    expect(queue.sent).toEqual([]);
    expect(logged).toEqual([expect.stringContaining(notice.event_id)]);
  });

  it('re-sends an event pending exactly one day and gives it up a millisecond later (each run either re-sends or gives up every pending event)', async () => {
    const { memory, add } = setup();
    const notice = add('job.completed');
    const queue = { sent: [] as OutboxNotice[], send: async (m: OutboxNotice) => void queue.sent.push(m) };
    expect(await sweepOutbox({ outbox: memory, queue, clock: { now: () => new Date(clockMs + 86_400_000) } })).toEqual({ sent: 1, abandoned: 0 });
    expect(queue.sent).toEqual([notice]);
    expect(await sweepOutbox({ outbox: memory, queue, clock: { now: () => new Date(clockMs + 86_400_001) } })).toEqual({ sent: 0, abandoned: 1 });
  });

  it('reads each shard once: a day-old event is given up, a newer one re-sent, in the same run', async () => {
    const { memory, add } = setup();
    const old = add('job.completed');
    const recent = add('job.failed');
    memory.events.get(recent.event_id)!.event.created_at = new Date(clockMs + 86_000_000).toISOString();
    const listed = jest.spyOn(memory, 'listPending');
    const queue = { sent: [] as OutboxNotice[], send: async (m: OutboxNotice) => void queue.sent.push(m) };
    expect(await sweepOutbox({ outbox: memory, queue, clock: { now: () => new Date(clockMs + 86_401_000) } })).toEqual({ sent: 1, abandoned: 1 });
    expect(listed).toHaveBeenCalledTimes(memory.shards);
    expect(memory.events.get(old.event_id)!.pending).toBe(false);
    expect(queue.sent).toEqual([recent]);
  });
});
