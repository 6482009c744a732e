import { runQuickJob, textDocument } from '../../../../functions/core/conversion/quickjob';
import { ServiceError } from '../../../../functions/core/errors';
import type { RenderRequest } from '../../../../functions/core/render/ports';
import { RenderTimeoutError, TooManyPagesError } from '../../../../functions/core/render/ports';
import { normalisePdfOptions } from '../../../../functions/core/render/options';
import { memoryWorld } from '../../../support/memory';
import { rejection } from '../../../support/errors';

/** A world whose clock the renderer moves: each render "takes" `renderMs`. */
function setup(renderMs: number, pdfBytes = 0, pages = 1) {
  const world = memoryWorld(5);
  let now = Date.parse('2026-11-22T10:00:00Z');
  const clock = { now: () => new Date(now) };
  const renders: RenderRequest[] = [];
  const renderer = {
    async render(request: RenderRequest) {
      renders.push(request);
      if (renderMs > request.timeoutMs) {
        now += request.timeoutMs;
        throw new RenderTimeoutError(request.timeoutMs);
      }
      now += renderMs;
      return { pdf: Buffer.concat([Buffer.from('%PDF-1.7\n%%EOF'), Buffer.alloc(pdfBytes)]), pages, blockedRequests: 0, renderTimeout: false };
    },
  };
  const run = (input: { spentMs?: number; store?: boolean; mode?: 'html' | 'image' }) =>
    runQuickJob(
      { jobs: world.jobs, blobs: world.blobs, billing: world.billing, renderer, clock, timeoutSeconds: 30 },
      { account: world.account, plan: world.plan, mode: input.mode ?? 'html', store: input.store ?? false, spentMs: input.spentMs, check: async () => textDocument('html', '<p>x</p>', normalisePdfOptions({})) },
    );
  const credits = async () => (await world.accounts.get(world.account.account_id))!.credits_micros;
  return { world, run, renders, credits };
}

describe('runQuickJob credit pre-check', () => {
  it('refuses an account that cannot pay before checking the input, rendering or recording a job', async () => {
    const world = memoryWorld(0);
    let checked = 0;
    let rendered = 0;
    const renderer = {
      async render() {
        rendered++;
        return { pdf: Buffer.from('%PDF-1.7\n%%EOF'), pages: 1, blockedRequests: 0, renderTimeout: false };
      },
    };
    const err = await rejection(
      runQuickJob(
        { jobs: world.jobs, blobs: world.blobs, billing: world.billing, renderer, clock: world.clock, timeoutSeconds: 30 },
        { account: world.account, plan: world.plan, mode: 'html', store: false, check: async () => (checked++, textDocument('html', '<p>x</p>', normalisePdfOptions({}))) },
      ),
    );
    expect(err.code).toBe('INSUFFICIENT_CREDITS');
    expect([checked, rendered, world.jobs.jobs.size]).toEqual([0, 0, 0]);
  });
});

describe('runQuickJob time limit', () => {
  it('gives the renderer what is left of 30 s after the time the request spent before the job', async () => {
    const { run, renders } = setup(100);
    await run({ spentMs: 4_000 });
    expect(renders[0].timeoutMs).toBe(26_000);
  });

  it('times out at once, charging nothing, when the request arrived 30 s ago or more', async () => {
    const { run, renders, credits, world } = setup(100);
    const before = await credits();
    const err = await rejection(run({ spentMs: 31_000 }));
    expect(err).toMatchObject({ code: 'QUICKJOB_TIMEOUT', details: { timeout_seconds: 30 } });
    expect(renders).toHaveLength(0);
    expect(await credits()).toBe(before);
    expect([...world.jobs.jobs.values()][0]).toMatchObject({ status: 'timeout', error_code: 'QUICKJOB_TIMEOUT' });
    expect(err.message).toMatch(/Submit it to \/longjob/);
  });

  it('tells images, which /longjob does not take, to send fewer or smaller images (details still as the spec says)', async () => {
    const { run } = setup(100);
    const err = await rejection(run({ spentMs: 31_000, mode: 'image' }));
    expect(err).toMatchObject({ code: 'QUICKJOB_TIMEOUT', details: { timeout_seconds: 30, suggestion: 'use_longjob_endpoint' } });
    expect(err.message).toMatch(/fewer or smaller images/);
  });

  it('charges a PDF finished past the limit but within its answer margin', async () => {
    // The render ends at the 30 s limit; storing the PDF takes it into the margin, short of its end.
    const { world, credits } = setup(0);
    const { clock, blobs, advance } = slowStore(world.blobs, 500); // half of the 1 s margin
    const before = await credits();
    const renderer = {
      render: async (request: RenderRequest) => {
        advance(request.timeoutMs);
        return { pdf: Buffer.from('%PDF-1.7\n%%EOF'), pages: 1, blockedRequests: 0, renderTimeout: false };
      },
    };
    const result = await runQuickJob(
      { jobs: world.jobs, blobs, billing: world.billing, renderer, clock, timeoutSeconds: 30 },
      { account: world.account, plan: world.plan, mode: 'html', store: true, spentMs: 29_000, check: async () => textDocument('html', '<p>x</p>', normalisePdfOptions({})) },
    );
    expect(result.job.status).toBe('completed');
    expect(await credits()).toBe(before - world.plan.price_per_pdf_micros);
  });

  it('neither charges nor keeps a PDF finished after the caller was answered (a gateway timeout)', async () => {
    // The clock passes the limit while the PDF is stored: a slow store after a render that just made it.
    const { world, credits } = setup(0);
    const { clock, blobs } = slowStore(world.blobs, 3_500);
    const before = await credits();
    const renderer = { render: async () => ({ pdf: Buffer.from('%PDF-1.7\n%%EOF'), pages: 1, blockedRequests: 0, renderTimeout: false }) };
    const err = await rejection(
      runQuickJob(
        { jobs: world.jobs, blobs, billing: world.billing, renderer, clock, timeoutSeconds: 30 },
        { account: world.account, plan: world.plan, mode: 'html', store: true, spentMs: 28_000, check: async () => textDocument('html', '<p>x</p>', normalisePdfOptions({})) },
      ),
    );
    expect(err).toMatchObject({ code: 'QUICKJOB_TIMEOUT' });
    expect(await credits()).toBe(before);
    expect(world.blobs.objects.size).toBe(0);
    expect([...world.jobs.jobs.values()][0]).toMatchObject({ status: 'timeout' });
  });
});

describe('runQuickJob when the charge write loses its reply', () => {
  function losingReplies(world: ReturnType<typeof setup>['world'], commits: boolean) {
    const store = world.chargeStore;
    const commit = store.commit.bind(store);
    store.commit = async (...args) => {
      if (commits) await commit(...args);
      throw new Error('socket hang up');
    };
  }

  it('answers a charge that did commit as done: the PDF, its link, one charge', async () => {
    const { world, run, credits } = setup(10);
    const before = await credits();
    losingReplies(world, true);
    const result = await run({ store: true });
    expect(result.job.status).toBe('completed');
    expect(result.stored?.download_url).toEqual(expect.any(String));
    expect(await credits()).toBe(before - world.plan.price_per_pdf_micros);
    expect([...world.jobs.jobs.values()][0]).toMatchObject({ status: 'completed' });
    expect(world.blobs.objects.size).toBe(1);
  });

  it('fails a job whose charge did not commit, charging nothing and keeping nothing', async () => {
    const { world, run, credits } = setup(10);
    const before = await credits();
    losingReplies(world, false);
    expect(await run({ store: true }).then(() => null, (e: unknown) => e)).toMatchObject({ message: 'socket hang up' });
    expect(await credits()).toBe(before);
    expect([...world.jobs.jobs.values()][0]).toMatchObject({ status: 'failed', error_code: 'INTERNAL_SERVER_ERROR' });
    expect(world.blobs.objects.size).toBe(0);
  });

  it('leaves the job and its output as the write left them when the job cannot be read either', async () => {
    const { world, run } = setup(10);
    losingReplies(world, true);
    // The table is unreachable from the moment the write's reply is lost.
    const commit = world.chargeStore.commit.bind(world.chargeStore);
    world.chargeStore.commit = async (...args) => {
      try {
        return await commit(...args);
      } finally {
        world.jobs.get = async () => {
          throw new Error('DynamoDB unavailable');
        };
      }
    };
    expect(await run({ store: true }).then(() => null, (e: unknown) => e)).toMatchObject({ message: 'socket hang up' });
    // The charge committed with its job: both stay, and the PDF stays downloadable.
    expect([...world.jobs.jobs.values()][0]).toMatchObject({ status: 'completed' });
    expect(world.blobs.objects.size).toBe(1);
  });
});

/** A clock that storing each object moves on by `storeMs` (a slow store), and that a test may move itself. */
function slowStore<B extends { put(key: string, body: Uint8Array, type: string): Promise<unknown> }>(store: B, storeMs: number) {
  let now = Date.parse('2026-11-22T10:00:00Z');
  const advance = (ms: number) => void (now += ms);
  const blobs: B = Object.assign(Object.create(store), {
    put: async (key: string, body: Uint8Array, type: string) => {
      advance(storeMs);
      await store.put(key, body, type);
    },
  });
  return { clock: { now: () => new Date(now) }, blobs, advance };
}

describe('runQuickJob page limit', () => {
  it('refuses a document the renderer found far too long to print: a failed job without a page count, nothing charged', async () => {
    const world = memoryWorld(5);
    const renderer = {
      async render(): Promise<never> {
        throw new TooManyPagesError(50_000);
      },
    };
    const run = runQuickJob(
      { jobs: world.jobs, blobs: world.blobs, billing: world.billing, renderer, clock: world.clock, timeoutSeconds: 30 },
      { account: world.account, plan: world.plan, mode: 'html', store: false, check: async () => textDocument('html', '<p>x</p>', normalisePdfOptions({})) },
    );
    const refused = await rejection(run);
    expect(refused).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { job_id: expect.stringMatching(/^job_/), pages_at_least: 101, max_pages: 25 } });
    expect(refused.message).toMatch(/more than 100 pages.*Split the document/);
    // /longjob would refuse it too: the details suggest no endpoint.
    expect(refused.details).not.toHaveProperty('suggestion');
    const job = (await world.jobs.get((refused.details as { job_id: string }).job_id))!;
    expect(job).toMatchObject({ status: 'failed', error_code: 'PAGE_LIMIT_EXCEEDED' });
    expect(job.pages ?? null).toBeNull();
    expect((await world.accounts.get(world.account.account_id))!.credits_micros).toBe(world.account.credits_micros);
  });
  it('completes and charges a document of exactly 25 pages, the most a quick job allows', async () => {
    const { world, run, credits } = setup(100, 0, 25);
    const before = await credits();
    const result = await run({});
    expect(result.job).toMatchObject({ status: 'completed', pages: 25 });
    expect(await credits()).toBe(before - world.plan.price_per_pdf_micros);
  });

  it('refuses 26 pages, and still suggests /longjob for exactly 100 pages (the most a long job takes)', async () => {
    for (const pages of [26, 100]) {
      const { run, credits } = setup(100, 0, pages);
      const before = await credits();
      const refused = await rejection(run({}));
      expect(refused).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { pages, max_pages: 25, suggestion: 'use_longjob_endpoint' } });
      expect(refused.message).toMatch(/Use \/longjob \(up to 100 pages\)/);
      expect(await credits()).toBe(before);
    }
  });
});

describe('runQuickJob inline or stored', () => {
  it("returns a PDF smaller than document 2's 4.4 MB (binary megabytes) in the response, and stores a larger one", async () => {
    const inline = await setup(100, 4_500_000).run({});
    expect(inline.stored).toBeNull();
    expect(inline.pdf.byteLength).toBeGreaterThan(4_500_000);
    const stored = await setup(100, Math.ceil(4.4 * 2 ** 20)).run({});
    expect(stored.stored).toMatchObject({ download_url: expect.any(String) });
  });
});

describe('runQuickJob output that must be stored', () => {
  it('a PDF too large to return inline whose storing fails: nothing charged, and the advice is to retry (store: true would answer null links)', async () => {
    const { world, run, credits } = setup(100, Math.ceil(4.4 * 2 ** 20));
    world.blobs.put = async () => {
      throw new Error('bucket unavailable');
    };
    const before = await credits();
    const err = await rejection(run({}));
    expect(err).toMatchObject({ code: 'PDF_GENERATION_FAILED', details: { job_id: expect.any(String) } });
    expect(err.message).toBe('The PDF is too large to return inline and storing it failed on our side; nothing was charged. Retry the request.');
    expect(await credits()).toBe(before);
  });
});

describe('runQuickJob refusals about the printed document', () => {
  it("name the field the caller sent it in, not the renderer's html (Markdown, a URL's page, images)", async () => {
    const world = memoryWorld(5);
    const renderer = {
      render: async () => {
        throw new ServiceError('INVALID_PARAMETER', 'The document navigated away.', { parameter: 'html', reason: 'navigated_away' });
      },
    };
    const refusal = (mode: 'html' | 'markdown' | 'url' | 'image') =>
      rejection(
        runQuickJob(
          { jobs: world.jobs, blobs: world.blobs, billing: world.billing, renderer, clock: { now: () => new Date() }, timeoutSeconds: 30 },
          { account: world.account, plan: world.plan, mode, store: false, check: async () => textDocument('html', '<p>x</p>', normalisePdfOptions({})) },
        ),
      );
    for (const [mode, field] of [['html', 'html'], ['markdown', 'markdown'], ['url', 'url'], ['image', 'images']] as const) {
      expect(await refusal(mode)).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: field, reason: 'navigated_away', job_id: expect.any(String) } });
    }
  });
});

describe('runQuickJob refused at its charge', () => {
  it('records the page count of the document it printed (README: pages once the document is counted), charging nothing', async () => {
    const { world, credits } = setup(0);
    const renderer = {
      render: async () => {
        // Another request spends the balance while this document prints.
        const id = world.account.account_id;
        world.accounts.accounts.set(id, { ...world.accounts.accounts.get(id)!, credits_micros: 0 });
        return { pdf: Buffer.from('%PDF-1.7\n%%EOF'), pages: 3, blockedRequests: 0, renderTimeout: false };
      },
    };
    const clock = { now: () => new Date('2026-11-22T10:00:00Z') };
    const err = await rejection(
      runQuickJob(
        { jobs: world.jobs, blobs: world.blobs, billing: world.billing, renderer, clock, timeoutSeconds: 30 },
        { account: world.account, plan: world.plan, mode: 'html', store: false, check: async () => textDocument('html', '<p>x</p>', normalisePdfOptions({})) },
      ),
    );
    expect(err).toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(await credits()).toBe(0);
    expect([...world.jobs.jobs.values()][0]).toMatchObject({ status: 'failed', error_code: 'INSUFFICIENT_CREDITS', pages: 3 });
  });
});
