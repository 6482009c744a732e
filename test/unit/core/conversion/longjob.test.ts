import { z } from 'zod';
import { requireCurrentPlan } from '../../../../functions/core/accounts/entitlements';
import { Billing } from '../../../../functions/core/billing/charging';
import { LONGJOB_RENDER_SLOT_KIND, type LongJobWorkerDeps, abandonDeadLetteredLongJob, endAbandonedLongJob, longjobBodySchema, parseLongJobRequest, processLongJob, releaseDeadWorker, submitLongJob } from '../../../../functions/core/conversion/longjob';
import type { Clock } from '../../../../functions/core/clock';
import { type Job, newJob } from '../../../../functions/core/jobs/job';
import type { Mailer } from '../../../../functions/core/notifications/ports';
import { sweepStartRecords } from '../../../../functions/core/jobs/starts';
import { normalisePdfOptions } from '../../../../functions/core/render/options';
import { RendererStoppedError, RenderTimeoutError, TooManyPagesError } from '../../../../functions/core/render/ports';
import { FakeRenderer, holdRenders } from '../../../support/bulk-memory';
import { memoryWorld } from '../../../support/memory';
import { refusal, rejection } from '../../../support/errors';

const refused = (body: unknown) => refusal(() => parseLongJobRequest(body));

describe('parseLongJobRequest', () => {
  it('reads HTML or Markdown with the options, and email_notification when sent', () => {
    expect(parseLongJobRequest({ input_type: 'markdown', markdown: '# Hi', email_notification: false })).toMatchObject({ input_type: 'markdown', content: '# Hi', email_notification: false });
    const plain = parseLongJobRequest({ input_type: 'html', html: '<p>x</p>', options: { landscape: true }, email_notification: null, webhook_url: null });
    expect(plain.options.landscape).toBe(true);
    expect('email_notification' in plain).toBe(false);
  });

  it.each<[string, unknown, string, Record<string, unknown>]>([
    ['url input, before its content rules', { input_type: 'url', html: '<p>x</p>', markdown: '# x' }, 'INVALID_INPUT_TYPE', { input_type: 'url', allowed: ['html', 'markdown'] }],
    ['image input', { input_type: 'image' }, 'INVALID_INPUT_TYPE', { input_type: 'image', allowed: ['html', 'markdown'] }],
    ['an unknown type, with every conversion type allowed', { input_type: 'docx' }, 'INVALID_INPUT_TYPE', { allowed: ['html', 'markdown', 'url', 'image'] }],
    ['a url next to html', { input_type: 'html', html: '<p>x</p>', url: 'https://example.com' }, 'WRONG_FIELD_PROVIDED', { field: 'url' }],
    ['options before store', { input_type: 'html', html: '<p>x</p>', options: { scale: 0 }, store: 'yes' }, 'INVALID_PARAMETER', { parameter: 'options.scale' }],
    ['store before email_notification', { input_type: 'html', html: '<p>x</p>', store: 'yes', email_notification: 'yes' }, 'INVALID_PARAMETER', { parameter: 'store' }],
    ['email_notification before webhook_url', { input_type: 'html', html: '<p>x</p>', email_notification: 1, webhook_url: 'http://x' }, 'INVALID_PARAMETER', { parameter: 'email_notification' }],
    ['a webhook_url that is not a string', { input_type: 'html', html: '<p>x</p>', webhook_url: 5 }, 'INVALID_WEBHOOK_URL', { webhook_url: 5 }],
    ['a webhook_url with credentials, echoed without them', { input_type: 'html', html: '<p>x</p>', webhook_url: 'http://bob:hunter2@hooks.example.com/h?k=1' }, 'INVALID_WEBHOOK_URL', { webhook_url: 'http://hooks.example.com/h?k=1' }],
    ['a body that is not an object', [1], 'INVALID_PARAMETER', { parameter: 'body' }],
  ])('refuses %s', (_name, body, code, details) => {
    const err = refused(body);
    expect(err.code).toBe(code);
    expect(err.details).toEqual(expect.objectContaining(details));
  });

  it('describes every field for the OpenAPI document', () => {
    const schema = z.toJSONSchema(longjobBodySchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
    expect(Object.keys(schema.properties)).toEqual(['input_type', 'html', 'markdown', 'options', 'store', 'email_notification', 'webhook_url']);
    for (const [name, field] of Object.entries(schema.properties)) expect([name, typeof field.description]).toEqual([name, 'string']);
  });
});

/** A queued long job with its stored HTML input (`inputs/<job id>.json`), as a submission leaves it. */
async function queueLongJob(w: ReturnType<typeof memoryWorld>, jobId: string, now: Date, changes: Partial<Job> = {}): Promise<Job> {
  const inputKey = `inputs/${jobId}.json`;
  const job = { ...newJob({ job_id: jobId, account_id: w.account.account_id, job_type: 'long', status: 'queued', mode: 'html', now }), input_key: inputKey, ...changes };
  await w.blobs.put(inputKey, Buffer.from(JSON.stringify({ html: '<p>x</p>', options: normalisePdfOptions({}) })), 'application/json');
  await w.jobs.put(job);
  return job;
}

/** A clock the test moves by hand. */
function handClock(start = '2026-11-22T10:00:00Z') {
  let t = Date.parse(start);
  return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
}

/** The render worker's dependencies over `w`, charging on `clock` (the world's own unless the test moves time). */
function workerDeps(w: ReturnType<typeof memoryWorld>, renderer: FakeRenderer, opts: { clock?: Clock; mailer?: Mailer; share?: LongJobWorkerDeps['share'] } = {}) {
  const clock = opts.clock ?? w.clock;
  const mailer: Mailer = opts.mailer ?? { send: async () => undefined };
  return { ...w, clock, billing: new Billing(w.accounts, w.chargeStore, clock), renderer, queue: { send: async () => undefined }, mailer, share: opts.share };
}

describe('releaseDeadWorker', () => {
  it('gives up a dead worker\'s lease and slot, so the message delivered again renders the job at once with what is left of its 15 minutes', async () => {
    const w = memoryWorld();
    const clock = handClock();
    await queueLongJob(w, 'job_dead', clock.now());
    // The dead worker's claim: processing since 10:00, its lease and its slot good until 10:15:30.
    const job = (await w.jobs.get('job_dead'))!;
    await w.jobs.put({ ...job, status: 'processing', started_at: clock.now().toISOString(), lease_until: new Date(clock.now().getTime() + 930_000).toISOString() });
    expect(await w.slots.acquire({ accountId: job.account_id, kind: LONGJOB_RENDER_SLOT_KIND, jobId: 'job_dead', holder: 'dead', max: 1, now: clock.now(), leaseSeconds: 930 })).toBe(true);
    clock.advance(20_000);
    const renderer = new FakeRenderer();
    const deps = workerDeps(w, renderer, { clock, share: { rendersPerAccount: 1 } });
    // Without the release, the message delivered again finds the job held (a duplicate, as far as anyone can tell).
    expect(await processLongJob(deps, { job_id: 'job_dead' }, 900_000)).toBe('skipped');

    expect(await releaseDeadWorker(deps, 'job_dead')).toBe(true);
    expect(await processLongJob(deps, { job_id: 'job_dead' }, 900_000)).toBe('completed');
    expect(renderer.calls).toHaveLength(1);
    expect(await w.jobs.get('job_dead')).toMatchObject({ status: 'completed', started_at: '2026-11-22T10:00:00.000Z' });
    // A finished job, or one nobody holds, has nothing to release.
    expect(await releaseDeadWorker(deps, 'job_dead')).toBe(false);
    expect(await releaseDeadWorker(deps, 'job_unknown')).toBe(false);
  });
});

describe('processLongJob under at-least-once delivery', () => {
  /** Two deliveries of one job: the first worker stalls past its lease, the second claims the job and completes it. */
  it("a worker whose lease ran out fails late without overwriting the job another worker completed (or its input)", async () => {
    const w = memoryWorld();
    const clock = handClock();
    await queueLongJob(w, 'job_late', clock.now());

    let releaseFirst!: () => void;
    let firstRendering!: () => void;
    const firstAtRenderer = new Promise<void>((resolve) => (firstRendering = resolve));
    const renderer = new FakeRenderer();
    let calls = 0;
    renderer.slot = () => {
      if (++calls !== 1) return undefined;
      firstRendering();
      return new Promise<void>((resolve) => (releaseFirst = resolve));
    };
    // The first worker's document fails late (over the page limit), after the second took over and finished.
    renderer.behave = (req) => (req === renderer.calls[0] ? { pages: 500 } : {});
    const mails: unknown[] = [];
    const deps = workerDeps(w, renderer, { clock, mailer: { send: async (m) => void mails.push(m) } });

    const first = processLongJob(deps, { job_id: 'job_late' }, 1000);
    // The first worker has claimed the job and is printing it.
    await firstAtRenderer;
    clock.advance(120_000); // past the first worker's lease (timeout + 60 s)
    expect(await processLongJob(deps, { job_id: 'job_late' }, 1000)).toBe('completed');
    releaseFirst();
    expect(await first).toBe('skipped');

    const stored = await w.jobs.get('job_late');
    expect(stored).toMatchObject({ status: 'completed', pages: 1 });
    expect(w.jobs.events.filter((e) => e.event === 'job.failed')).toHaveLength(0);
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros - w.plan.price_per_pdf_micros);
  });

  it('gives back the lease of a claim whose reply was lost, so the message delivered again renders the job at once', async () => {
    const w = memoryWorld();
    await queueLongJob(w, 'job_lost', w.clock.now());
    const clock = handClock();
    const renderer = new FakeRenderer();
    const deps = workerDeps(w, renderer, { clock });
    const putIf = w.jobs.putIf.bind(w.jobs);
    w.jobs.putIf = async (...args: Parameters<typeof putIf>) => {
      await putIf(...args);
      w.jobs.putIf = putIf;
      throw new Error('socket hang up');
    };
    await expect(processLongJob(deps, { job_id: 'job_lost' }, 1000)).rejects.toThrow('socket hang up');
    // The claim went through: processing, under a lease already over.
    const held = (await w.jobs.get('job_lost'))!;
    expect(held.status).toBe('processing');
    expect(Date.parse(held.lease_until!)).toBeLessThanOrEqual(clock.now().getTime());
    expect(renderer.calls).toHaveLength(0);
    // Before, the next delivery found it held ('skipped') and the job waited for its lease, then ended as a timeout.
    clock.advance(1000);
    expect(await processLongJob(deps, { job_id: 'job_lost' }, 1000)).toBe('completed');
    expect(w.jobs.events.filter((e) => e.event === 'job.processing')).toHaveLength(1);
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros - w.plan.price_per_pdf_micros);
  });

  it('gives a job the stopping service cut short back to the queue (its lease returned), neither failed nor charged', async () => {
    const w = memoryWorld();
    await queueLongJob(w, 'job_stop', w.clock.now());
    const renderer = new FakeRenderer();
    renderer.behave = () => {
      throw new RendererStoppedError();
    };
    const clock = handClock();
    const deps = workerDeps(w, renderer, { clock });

    await expect(processLongJob(deps, { job_id: 'job_stop' }, 1000)).rejects.toBeInstanceOf(RendererStoppedError);
    const stored = (await w.jobs.get('job_stop'))!;
    expect(stored.status).toBe('processing');
    expect(Date.parse(stored.lease_until!)).toBeLessThanOrEqual(clock.now().getTime());
    expect(w.jobs.events.filter((e) => e.event === 'job.failed')).toHaveLength(0);
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros);
    // The next delivery (a moment later) takes it over at once and prints it.
    clock.advance(1000);
    renderer.behave = () => ({});
    expect(await processLongJob(deps, { job_id: 'job_stop' }, 1000)).toBe('completed');
  });

  it('fails a job the renderer found far too long to print with PAGE_LIMIT_EXCEEDED, charging nothing', async () => {
    const w = memoryWorld();
    // One page when it was counted at submission (its scripts grew it since).
    await queueLongJob(w, 'job_bomb', w.clock.now(), { pages: 1 });
    const renderer = new FakeRenderer();
    renderer.behave = () => {
      throw new TooManyPagesError(50_000);
    };
    const deps = workerDeps(w, renderer);

    expect(await processLongJob(deps, { job_id: 'job_bomb' }, 1000)).toBe('failed');
    const stored = (await w.jobs.get('job_bomb'))!;
    expect(stored).toMatchObject({ status: 'failed', error_code: 'PAGE_LIMIT_EXCEEDED', error_message: 'The PDF has more than 100 pages; long jobs allow 100.' });
    expect(stored.pages).toBeNull();
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros);

    // Printing stopped past the limit: no count either; an exact count over the limit is kept.
    for (const [printed, pages] of [[{ pages: 101, morePages: true }, null], [{ pages: 140, morePages: false }, 140]] as const) {
      await queueLongJob(w, 'job_bomb', w.clock.now(), { pages: 1 });
      renderer.behave = () => printed;
      expect(await processLongJob(deps, { job_id: 'job_bomb' }, 1000)).toBe('failed');
      expect((await w.jobs.get('job_bomb'))!).toMatchObject({ status: 'failed', error_code: 'PAGE_LIMIT_EXCEEDED', pages });
    }
  });

  it('completes and charges a job that prints exactly 100 pages, the most a long job takes', async () => {
    const w = memoryWorld();
    await queueLongJob(w, 'job_hundred', w.clock.now());
    const renderer = new FakeRenderer();
    renderer.behave = () => ({ pages: 100, morePages: false });

    expect(await processLongJob(workerDeps(w, renderer), { job_id: 'job_hundred' }, 1000)).toBe('completed');
    expect(await w.jobs.get('job_hundred')).toMatchObject({ status: 'completed', pages: 100 });
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros - w.plan.price_per_pdf_micros);
  });

  it('sends the failure email only when the job and its account want it', async () => {
    const w = memoryWorld();
    const mails: { to: string; subject: string }[] = [];
    const renderer = new FakeRenderer();
    renderer.behave = () => ({ pages: 140, morePages: false });
    const deps = workerDeps(w, renderer, { mailer: { send: async (m) => void mails.push(m) } });
    await queueLongJob(w, 'job_wanted', w.clock.now());
    await queueLongJob(w, 'job_quiet', w.clock.now(), { email_notification: false });
    for (const id of ['job_wanted', 'job_quiet']) expect(await processLongJob(deps, { job_id: id }, 1000)).toBe('failed');
    // An account that turned emails off gets none, whatever the job says.
    w.accounts.accounts.set(w.account.account_id, { ...w.account, email_notifications: false });
    await queueLongJob(w, 'job_muted', w.clock.now(), { email_notification: true });
    expect(await processLongJob(deps, { job_id: 'job_muted' }, 1000)).toBe('failed');
    expect(mails.map((m) => [m.to, m.subject])).toEqual([[w.account.email, expect.stringContaining('job_wanted')]]);
  });

  it('fails a job whose stored document is gone (it expired), printing and charging nothing (not left to retries)', async () => {
    const w = memoryWorld();
    const job = await queueLongJob(w, 'job_lost', w.clock.now());
    await w.blobs.delete(job.input_key!);
    const renderer = new FakeRenderer();

    expect(await processLongJob(workerDeps(w, renderer), { job_id: 'job_lost' }, 1000)).toBe('failed');
    expect(await w.jobs.get('job_lost')).toMatchObject({ status: 'failed', error_code: 'PDF_GENERATION_FAILED', error_message: expect.stringMatching(/no longer stored.*nothing was charged/) });
    expect(renderer.calls).toHaveLength(0);
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros);
  });

  it("fails a job whose account lost its plan after submission with the workers' one UPGRADE_REQUIRED refusal, charging nothing", async () => {
    const w = memoryWorld();
    await queueLongJob(w, 'job_noplan', w.clock.now());
    w.accounts.accounts.set(w.account.account_id, { ...w.account, plan_id: null, status: 'pending' });
    const renderer = new FakeRenderer();
    const deps = { ...w, renderer, queue: { send: async () => undefined }, mailer: { send: async () => undefined } };

    expect(await processLongJob(deps, { job_id: 'job_noplan' }, 1000)).toBe('failed');
    const refused = await rejection(requireCurrentPlan(w.plans, null));
    expect(await w.jobs.get('job_noplan')).toMatchObject({ status: 'failed', error_code: 'UPGRADE_REQUIRED', error_message: refused.message });
    expect(renderer.calls).toHaveLength(0);
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros);
  });
});

describe('submitLongJob time limit', () => {
  function submit(spentMs: number) {
    const world = memoryWorld(5);
    const timeouts: number[] = [];
    const sent: unknown[] = [];
    const renderer = {
      async render(request: { timeoutMs: number }) {
        timeouts.push(request.timeoutMs);
        return { pdf: Buffer.from('%PDF-1.7'), pages: 2, blockedRequests: 0, renderTimeout: false };
      },
    };
    const result = submitLongJob(
      { jobs: world.jobs, blobs: world.blobs, renderer, queue: { send: async (m: unknown) => void sent.push(m) }, clock: world.clock, submissionSeconds: 26 },
      { account: world.account, plan: world.plan, request: parseLongJobRequest({ input_type: 'html', html: '<p>x</p>' }), spentMs },
    );
    return { world, timeouts, sent, result };
  }

  it('counts pages within what is left of the limit after the time the request spent before it', async () => {
    const { timeouts, result } = submit(3_000);
    await result;
    expect(timeouts).toEqual([23_000]);
  });

  it('accepts exactly 100 counted pages, the most a long job takes, and refuses 101 creating no job', async () => {
    for (const [pages, accepted] of [[100, true], [101, false]] as const) {
      const world = memoryWorld(5);
      const renderer = { render: async () => ({ pdf: Buffer.from('%PDF-1.7'), pages, blockedRequests: 0, renderTimeout: false }) };
      const submitted = submitLongJob(
        { jobs: world.jobs, blobs: world.blobs, renderer, queue: { send: async () => undefined }, clock: world.clock },
        { account: world.account, plan: world.plan, request: parseLongJobRequest({ input_type: 'html', html: '<p>x</p>' }) },
      );
      if (accepted) expect(await submitted).toMatchObject({ status: 'queued', pages: 100 });
      else expect(await rejection(submitted)).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { pages: 101, max_pages: 100 } });
      expect(world.jobs.jobs.size).toBe(accepted ? 1 : 0);
    }
  });

  it('refuses a document the renderer found far too long to print, creating no job', async () => {
    const world = memoryWorld(5);
    const renderer = {
      async render(): Promise<never> {
        throw new TooManyPagesError(50_000);
      },
    };
    const submitted = submitLongJob(
      { jobs: world.jobs, blobs: world.blobs, renderer, queue: { send: async () => undefined }, clock: world.clock },
      { account: world.account, plan: world.plan, request: parseLongJobRequest({ input_type: 'html', html: '<p>x</p>' }) },
    );
    expect(await rejection(submitted)).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { pages_at_least: 101, max_pages: 100 } });
    expect(world.jobs.jobs.size).toBe(0);
  });

  /** A submission whose job write fails: after writing (`lost reply`) or without writing (`refused`). */
  async function submitWithFailingWrite(how: 'lost reply' | 'refused') {
    const world = memoryWorld(5);
    const put = world.jobs.put.bind(world.jobs);
    world.jobs.put = async (...args: Parameters<typeof put>) => {
      world.jobs.put = put;
      if (how === 'lost reply') await put(...args);
      throw new Error(how);
    };
    const sent: unknown[] = [];
    const renderer = { render: async () => ({ pdf: Buffer.from('%PDF-1.7'), pages: 2, blockedRequests: 0, renderTimeout: false }) };
    const result = submitLongJob(
      { jobs: world.jobs, blobs: world.blobs, renderer, queue: { send: async (m: unknown) => void sent.push(m) }, clock: world.clock },
      { account: world.account, plan: world.plan, request: parseLongJobRequest({ input_type: 'html', html: '<p>x</p>' }) },
    );
    return { world, sent, result };
  }

  it('answers with the job when its queued write went through but the reply was lost (the start sweeper would run it)', async () => {
    const { world, sent, result } = await submitWithFailingWrite('lost reply');
    const job = await result;
    // Answered 500 before, with no job id, while the start sweeper queued the job and it was rendered and charged.
    expect(await world.jobs.get(job.job_id)).toMatchObject({ status: 'queued' });
    expect(sent).toEqual([{ job_id: job.job_id }]);
  });

  it('deletes the stored document when the job was not written, so one written after all fails uncharged', async () => {
    const { world, sent, result } = await submitWithFailingWrite('refused');
    await expect(result).rejects.toThrow('refused');
    expect([...world.blobs.objects.keys()]).toEqual([]);
    expect(world.jobs.jobs.size).toBe(0);
    expect(sent).toEqual([]);
  });

  it('records the counted pages on the queued job, so GET /jobs/{id} shows them while it waits', async () => {
    const { world, result } = submit(0);
    const job = await result;
    expect(await world.jobs.get(job.job_id)).toMatchObject({ status: 'queued', pages: 2 });
  });

  it('records how the job starts with the job, and drops that record once the message is sent', async () => {
    const { world, sent, result } = submit(0);
    const job = await result;
    expect(sent).toEqual([{ job_id: job.job_id }]);
    expect(world.jobs.starts.size).toBe(0);
  });

  it('keeps the watch of a worker that claimed the job before the submitter confirmed its message', async () => {
    const world = memoryWorld(5);
    const renderer = { render: async () => ({ pdf: Buffer.from('%PDF-1.7'), pages: 1, blockedRequests: 0, renderTimeout: false }) };
    let lease = '';
    // The message is taken at once: the worker's claim (its watch) lands before the submitter's confirmation.
    const queue = {
      send: async (m: { job_id: string }) => {
        const job = (await world.jobs.get(m.job_id))!;
        lease = new Date(Date.now() + 16 * 60_000).toISOString();
        expect(await world.jobs.putIf({ ...job, status: 'processing', started_at: new Date().toISOString(), lease_until: lease }, ['queued'], [], new Date().toISOString(), { via: 'render-queue' })).toBe(true);
      },
    };
    const job = await submitLongJob({ jobs: world.jobs, blobs: world.blobs, renderer, queue, clock: world.clock }, { account: world.account, plan: world.plan, request: parseLongJobRequest({ input_type: 'html', html: '<p>x</p>' }) });
    expect(world.jobs.starts.get(job.job_id)).toMatchObject({ due_at: lease, start: { via: 'render-queue' } });
  });

  it('leaves a job a worker claimed to it when the send that reached the queue lost its reply: not failed, its input kept', async () => {
    const world = memoryWorld(5);
    const renderer = { render: async () => ({ pdf: Buffer.from('%PDF-1.7'), pages: 1, blockedRequests: 0, renderTimeout: false }) };
    const queue = {
      send: async (m: { job_id: string }) => {
        const job = (await world.jobs.get(m.job_id))!;
        const lease = new Date(world.clock.now().getTime() + 16 * 60_000).toISOString();
        expect(await world.jobs.putIf({ ...job, status: 'processing', started_at: world.clock.now().toISOString(), lease_until: lease }, ['queued'])).toBe(true);
        throw new Error('socket hang up');
      },
    };
    const job = await submitLongJob({ jobs: world.jobs, blobs: world.blobs, renderer, queue, clock: world.clock }, { account: world.account, plan: world.plan, request: parseLongJobRequest({ input_type: 'html', html: '<p>x</p>' }) });
    expect(await world.jobs.get(job.job_id)).toMatchObject({ status: 'processing' });
    expect(await world.blobs.get(job.input_key!)).not.toBeNull();
    expect(world.jobs.events.map((e) => e.event)).toEqual(['job.queued']);
  });

  it('keeps the start record while the message is not sent, so a submitter that dies there leaves it to the start sweeper', async () => {
    const world = memoryWorld(5);
    let sending!: () => void;
    const atSend = new Promise<void>((resolve) => (sending = resolve));
    const renderer = { render: async () => ({ pdf: Buffer.from('%PDF-1.7'), pages: 1, blockedRequests: 0, renderTimeout: false }) };
    // The process "dies" at the send: it never returns.
    const queue = { send: () => (sending(), new Promise<void>(() => undefined)) };
    void submitLongJob({ jobs: world.jobs, blobs: world.blobs, renderer, queue, clock: world.clock }, { account: world.account, plan: world.plan, request: parseLongJobRequest({ input_type: 'html', html: '<p>x</p>' }) });
    await atSend;
    const [job] = [...world.jobs.jobs.values()];
    expect(job.status).toBe('queued');
    expect([...world.jobs.starts.values()]).toEqual([{ job_id: job.job_id, account_id: job.account_id, created_at: job.created_at, due_at: job.created_at, start: { via: 'render-queue' } }]);
  });

  it('refuses with RENDER_TIMEOUT, creating and queuing nothing, when the limit has passed already', async () => {
    const { timeouts, sent, world, result } = submit(26_000);
    expect(await rejection(result)).toMatchObject({ code: 'RENDER_TIMEOUT', details: { timeout_seconds: 26 } });
    expect(timeouts).toEqual([]);
    expect(sent).toEqual([]);
    expect(world.jobs.jobs.size).toBe(0);
  });

  describe("an account's share of rendering workers", () => {
    /** Queues long job `id` of `accountId` with a stored document. */
    async function queued(w: ReturnType<typeof memoryWorld>, id: string, accountId = w.account.account_id) {
      await w.blobs.put(`inputs/${id}.json`, Buffer.from(JSON.stringify({ html: '<p>x</p>', options: normalisePdfOptions({}) })), 'application/json');
      await w.jobs.put({ ...newJob({ job_id: id, account_id: accountId, job_type: 'long', status: 'queued', mode: 'html', now: w.clock.now() }), input_key: `inputs/${id}.json` });
    }

    function world() {
      const w = memoryWorld();
      w.accounts.accounts.set('acct2', { ...w.account, account_id: 'acct2', email: 'b@example.com' });
      const renderer = new FakeRenderer();
      // Each document renders until the test lets it finish.
      const { holds, nextRender } = holdRenders(renderer);
      const sent: { message: unknown; delaySeconds?: number }[] = [];
      const queue = { send: async (message: { job_id: string }, options?: { delaySeconds?: number }) => void sent.push({ message, ...options }) };
      const deps = { ...w, renderer, queue, mailer: { send: async () => undefined }, share: { rendersPerAccount: 1, deferSeconds: 7 } };
      return { w, renderer, holds, sent, deps, nextRender };
    }

    it('sends a job over the share back to the queue with a delay, still queued and not rendered; other accounts go on', async () => {
      const { w, renderer, holds, sent, deps, nextRender } = world();
      await queued(w, 'job_a1');
      await queued(w, 'job_a2');
      await queued(w, 'job_b1', 'acct2');

      const rendering = nextRender();
      const first = processLongJob(deps, { job_id: 'job_a1' }, 1000);
      await rendering;
      expect(await processLongJob(deps, { job_id: 'job_a2' }, 1000)).toBe('deferred');
      // Sent back counted, and again with twice the wait (up to the 7 s this deployment allows).
      expect(await processLongJob(deps, { job_id: 'job_a2', deferrals: 1 }, 1000)).toBe('deferred');
      expect(await processLongJob(deps, { job_id: 'job_a2', deferrals: 2 }, 1000)).toBe('deferred');
      expect(sent).toEqual([
        { message: { job_id: 'job_a2', deferrals: 1 }, delaySeconds: 2 },
        { message: { job_id: 'job_a2', deferrals: 2 }, delaySeconds: 4 },
        { message: { job_id: 'job_a2', deferrals: 3 }, delaySeconds: 7 },
      ]);
      expect(await w.jobs.get('job_a2')).toMatchObject({ status: 'queued' });
      expect(w.jobs.events.filter((e) => e.job_id === 'job_a2').map((e) => e.event)).not.toContain('job.processing');

      // Another account's job renders beside the first.
      const other = nextRender();
      const second = processLongJob(deps, { job_id: 'job_b1' }, 1000);
      await other;
      expect(renderer.calls.map((c) => c.tenant)).toEqual([w.account.account_id, 'acct2']);
      holds.forEach((finish) => finish());
      expect(await Promise.all([first, second])).toEqual(['completed', 'completed']);

      // The slot came back with the job: the deferred message, delivered again, renders.
      const again = processLongJob(deps, { job_id: 'job_a2', deferrals: 3 }, 1000);
      await nextRender();
      holds.at(-1)!();
      expect(await again).toBe('completed');
    });

    it('gives the slot back when the job fails, and takes none for a job another worker holds', async () => {
      const { w, renderer, holds, sent, deps, nextRender } = world();
      await queued(w, 'job_bad');
      renderer.behave = () => ({ pages: 500 });
      const bad = processLongJob(deps, { job_id: 'job_bad' }, 1000);
      await nextRender();
      holds[0]();
      expect(await bad).toBe('failed');
      expect(w.slots.held.size).toBe(0);

      // A duplicate message for a job under another worker's lease: skipped, without a slot or a re-send.
      await queued(w, 'job_busy');
      const busy = (await w.jobs.get('job_busy'))!;
      await w.jobs.put({ ...busy, status: 'processing', lease_until: new Date(Date.now() + 60_000).toISOString() });
      expect(await processLongJob(deps, { job_id: 'job_busy' }, 1000)).toBe('skipped');
      expect(w.slots.held.size).toBe(0);
      expect(sent).toEqual([]);
    });

    it('a worker that finishes after its lease ran out gives back only its own slot, not the one of the worker that took over', async () => {
      const { w, holds, sent, deps, nextRender } = world();
      let now = Date.now();
      const clocked = { ...deps, clock: { now: () => new Date(now) } };
      await queued(w, 'job_slow');
      await queued(w, 'job_next');
      const late = processLongJob(clocked, { job_id: 'job_slow' }, 1000);
      await nextRender();
      // The first worker's lease (render time + 60 s) runs out; the redelivered message is taken by a second worker.
      now += 62_000;
      const takeover = processLongJob(clocked, { job_id: 'job_slow' }, 1000);
      await nextRender();
      holds[0]();
      await late;
      // The second worker still renders in its slot: the account's share (1) is still used up.
      expect(w.slots.held.size).toBe(1);
      expect(await processLongJob(clocked, { job_id: 'job_next' }, 1000)).toBe('deferred');
      expect(sent).toEqual([{ message: { job_id: 'job_next', deferrals: 1 }, delaySeconds: 2 }]);
      holds[1]();
      expect(await takeover).toBe('completed');
      expect(w.slots.held.size).toBe(0);
    });

    it('stamps started_at when the slot is held, not when the message arrived', async () => {
      const { w, holds, deps, nextRender } = world();
      let now = Date.parse('2026-01-01T00:00:00.000Z');
      const acquire = w.slots.acquire.bind(w.slots);
      // Taking the slot takes a while (another job's release is still on its way).
      const slots = { acquire: async (input: Parameters<typeof acquire>[0]) => ((now += 250), acquire(input)), release: w.slots.release.bind(w.slots), holders: w.slots.holders.bind(w.slots) };
      await queued(w, 'job_waited');
      const run = processLongJob({ ...deps, slots, clock: { now: () => new Date(now) } }, { job_id: 'job_waited' }, 1000);
      await nextRender();
      holds[0]();
      expect(await run).toBe('completed');
      const job = (await w.jobs.get('job_waited'))!;
      expect(job.started_at).toBe('2026-01-01T00:00:00.250Z');
      expect(w.jobs.events.find((e) => e.job_id === 'job_waited' && e.event === 'job.processing')).toBeDefined();
    });
  });
});


describe('abandonDeadLetteredLongJob (the render queue\'s dead-letter worker)', () => {
  async function jobIn(w: ReturnType<typeof memoryWorld>, id: string, changes: Record<string, unknown>) {
    const job = newJob({ job_id: id, account_id: w.account.account_id, job_type: 'long', status: 'queued', mode: 'html', now: w.clock.now() });
    await w.jobs.put({ ...job, ...changes });
  }

  const withMail = (w: ReturnType<typeof memoryWorld>, mails: { to: string; subject: string }[] = []) => ({ ...w, mailer: { send: async (m: { to: string; subject: string }) => void mails.push(m) } });

  it('fails a job left queued, or processing under a lease that ran out (its workers died), charging nothing, with the failure email', async () => {
    const w = memoryWorld();
    const mails: { to: string; subject: string }[] = [];
    const past = new Date(w.clock.now().getTime() - 1000).toISOString();
    await jobIn(w, 'job_queued', {});
    await jobIn(w, 'job_dead', { status: 'processing', lease_until: past });
    await jobIn(w, 'job_quiet', { email_notification: false });
    for (const id of ['job_queued', 'job_dead', 'job_quiet']) {
      expect(await abandonDeadLetteredLongJob(withMail(w, mails), id)).toBe('failed');
      expect(await w.jobs.get(id)).toMatchObject({ status: 'failed', error_code: 'PDF_GENERATION_FAILED', error_message: expect.stringContaining('nothing was charged') });
    }
    expect(w.jobs.events.filter((e) => e.event === 'job.failed').map((e) => e.payload.job_id)).toEqual(['job_queued', 'job_dead', 'job_quiet']);
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros);
    // As the worker would have: a failure email, unless the job turned emails off.
    expect(mails.map((m) => [m.to, m.subject])).toEqual([
      [w.account.email, expect.stringContaining('job_queued')],
      [w.account.email, expect.stringContaining('job_dead')],
    ]);
  });

  it('leaves alone a job a worker holds under a live lease, and one that already ended', async () => {
    const w = memoryWorld();
    const future = new Date(w.clock.now().getTime() + 60_000).toISOString();
    await jobIn(w, 'job_held', { status: 'processing', lease_until: future });
    await jobIn(w, 'job_done', { status: 'completed' });
    const mails: { to: string; subject: string }[] = [];
    expect(await abandonDeadLetteredLongJob(withMail(w, mails), 'job_held')).toBe('held');
    expect(await abandonDeadLetteredLongJob(withMail(w, mails), 'job_done')).toBe('already_finished');
    expect(await abandonDeadLetteredLongJob(withMail(w, mails), 'job_missing')).toBe('already_finished');
    expect(mails).toEqual([]);
    expect((await w.jobs.get('job_held'))!.status).toBe('processing');
    expect(w.jobs.events).toHaveLength(0);
  });
});

describe('a render worker killed mid-render (no catch runs)', () => {
  const LIMIT_MS = 15 * 60_000;

  async function world() {
    const w = memoryWorld();
    const clock = handClock();
    await queueLongJob(w, 'job_killed', clock.now());
    const renderer = new FakeRenderer();
    const mails: { to: string; subject: string }[] = [];
    const deps = workerDeps(w, renderer, { clock, mailer: { send: async (m) => void mails.push(m) } });
    const sent: unknown[] = [];
    const sweep = () =>
      // As functions/workers/jobs/start-sweep.ts wires it: a long job is ended without the blob store.
      sweepStartRecords({
        jobs: w.jobs,
        renderQueue: { send: async (m) => void sent.push(m) },
        workflows: w.workflows,
        clock,
        endAbandoned: (j) => endAbandonedLongJob({ jobs: w.jobs, clock, accounts: w.accounts, mailer: deps.mailer }, j, LIMIT_MS),
        endStranded: async () => {
          throw new Error('a long job has no workflow');
        },
      });
    return { w, deps, renderer, mails, sent, sweep, advance: (ms: number) => clock.advance(ms), clock };
  }

  /** The worker claims the job and is printing it when its process is killed: its promise never settles. */
  async function killedWhileRendering(x: Awaited<ReturnType<typeof world>>) {
    let atRenderer!: () => void;
    const reached = new Promise<void>((resolve) => (atRenderer = resolve));
    x.renderer.slot = () => (atRenderer(), new Promise<void>(() => undefined));
    void processLongJob(x.deps, { job_id: 'job_killed' }, LIMIT_MS, LIMIT_MS);
    await reached;
    x.renderer.slot = () => undefined;
  }

  it('is ended as a timeout by the start sweeper two minutes after its lease, uncharged, with job.failed and the failure email', async () => {
    const x = await world();
    await killedWhileRendering(x);
    const claimed = (await x.w.jobs.get('job_killed'))!;
    expect(claimed.status).toBe('processing');
    // The claim left a watch on the job, due when its lease ends.
    expect(x.w.jobs.starts.get('job_killed')).toMatchObject({ due_at: claimed.lease_until, start: { via: 'render-queue' } });

    x.advance(LIMIT_MS + 60_000 + 60_000); // the lease ran out a minute ago: not yet
    expect(await x.sweep()).toMatchObject({ ended: 0, sent: 0 });
    expect((await x.w.jobs.get('job_killed'))!.status).toBe('processing');

    x.advance(61_000);
    expect(await x.sweep()).toEqual({ sent: 0, watched: 0, cleared: 0, ended: 1, failed: 0 });
    expect(await x.w.jobs.get('job_killed')).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'RENDER_TIMEOUT', lease_until: null, error_message: expect.stringContaining('15 minutes') });
    expect(x.w.jobs.events.filter((e) => e.event === 'job.failed').map((e) => e.payload.job_id)).toEqual(['job_killed']);
    expect(x.mails.map((m) => m.subject)).toEqual([expect.stringContaining('job_killed')]);
    // The input is left to its 2-day retention.
    expect(await x.w.blobs.get('inputs/job_killed.json')).not.toBeNull();
    expect((await x.w.accounts.get(x.w.account.account_id))!.credits_micros).toBe(x.w.account.credits_micros);
    expect(x.w.jobs.starts.size).toBe(0);
    expect(x.sent).toEqual([]);

    // The queue's message comes back (90 minutes on, in AWS): the job has ended, nothing is printed again.
    x.advance(90 * 60_000);
    expect(await processLongJob(x.deps, { job_id: 'job_killed' }, LIMIT_MS, LIMIT_MS)).toBe('skipped');
    expect(x.renderer.calls).toHaveLength(1);
  });

  it('gives a job taken over by a redelivered message only what is left of its 15 minutes, and ends it once they are gone', async () => {
    const x = await world();
    await killedWhileRendering(x);
    // Its lease is the whole limit plus a minute; a message delivered again after it takes over with the rest.
    const started = Date.parse((await x.w.jobs.get('job_killed'))!.started_at!);
    x.advance(LIMIT_MS + 61_000);
    expect(await processLongJob(x.deps, { job_id: 'job_killed' }, LIMIT_MS, LIMIT_MS)).toBe('timeout');
    expect(x.renderer.calls).toHaveLength(1);
    expect(await x.w.jobs.get('job_killed')).toMatchObject({ status: 'timeout', started_at: new Date(started).toISOString() });
    expect(x.mails).toHaveLength(1);
    expect(await x.w.blobs.get('inputs/job_killed.json')).toBeNull();
    // The sweeper finds nothing left to do.
    x.advance(5 * 60_000);
    expect(await x.sweep()).toMatchObject({ ended: 0, cleared: 1 });
  });

  it('ends, without rendering or charging, a job taken over when exactly none of its 15 minutes is left', async () => {
    const x = await world();
    await x.w.jobs.put({ ...(await x.w.jobs.get('job_killed'))!, status: 'processing', started_at: x.clock.now().toISOString(), lease_until: x.clock.now().toISOString() });
    x.advance(LIMIT_MS);
    expect(await processLongJob(x.deps, { job_id: 'job_killed' }, LIMIT_MS, LIMIT_MS)).toBe('timeout');
    expect(x.renderer.calls).toHaveLength(0);
    expect(await x.w.jobs.get('job_killed')).toMatchObject({ status: 'timeout', error_code: 'RENDER_TIMEOUT' });
    expect((await x.w.accounts.get(x.w.account.account_id))!.credits_micros).toBe(x.w.account.credits_micros);
  });

  it('renders a job taken over with time left within that time, and drops the watch when it ends', async () => {
    const x = await world();
    await x.w.jobs.put({ ...(await x.w.jobs.get('job_killed'))!, status: 'processing', started_at: x.clock.now().toISOString(), lease_until: x.clock.now().toISOString() });
    x.advance(10 * 60_000);
    expect(await processLongJob(x.deps, { job_id: 'job_killed' }, LIMIT_MS, LIMIT_MS)).toBe('completed');
    expect(x.renderer.calls[0]!.timeoutMs).toBe(5 * 60_000);
    expect(x.w.jobs.starts.size).toBe(0);
  });

  it('names the job\'s limit, not what was left of it, when a job taken over runs out of time', async () => {
    const x = await world();
    await x.w.jobs.put({ ...(await x.w.jobs.get('job_killed'))!, status: 'processing', started_at: x.clock.now().toISOString(), lease_until: x.clock.now().toISOString() });
    x.advance(10 * 60_000);
    x.renderer.behave = (req) => {
      throw new RenderTimeoutError(req.timeoutMs);
    };
    expect(await processLongJob(x.deps, { job_id: 'job_killed' }, LIMIT_MS, LIMIT_MS)).toBe('timeout');
    expect(await x.w.jobs.get('job_killed')).toMatchObject({ status: 'timeout', error_message: expect.stringContaining('longer than 15 minutes') });
  });

  it('leaves a job whose worker holds a live lease to it (a later claim re-armed the watch)', async () => {
    const x = await world();
    await killedWhileRendering(x);
    const first = x.w.jobs.starts.get('job_killed')!;
    // A sweep that read the old watch finds the job claimed again: the new watch stays.
    const lease = new Date(x.clock.now().getTime() + LIMIT_MS).toISOString();
    await x.w.jobs.put({ ...(await x.w.jobs.get('job_killed'))!, lease_until: lease }, [], { via: 'render-queue' });
    await x.w.jobs.startSent('job_killed', first.due_at);
    expect(x.w.jobs.starts.get('job_killed')).toMatchObject({ due_at: lease });
    x.advance(3 * 60_000);
    expect(await endAbandonedLongJob(x.deps, (await x.w.jobs.get('job_killed'))!, LIMIT_MS)).toBe(false);
    expect((await x.w.jobs.get('job_killed'))!.status).toBe('processing');
  });
});
