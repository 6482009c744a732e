/** In-memory bulk pieces for unit tests of functions/core/bulk (the integration tests use the real stack). */
import type { BulkDeps } from '../../functions/core/bulk/deps';
import { DEFAULT_BULK_TIMING } from '../../functions/core/bulk/limits';
import type { BulkProgress, PreparedCounts } from '../../functions/core/bulk/ports';
import type { OutboxEvent } from '../../functions/core/events/events';
import type { JobFileRow } from '../../functions/core/jobs/files';
import type { Job } from '../../functions/core/jobs/job';
import { pageWindow } from '../../functions/core/render/page-window';
import { RenderNotStartedError, type RenderRequest, type RenderResult, type Renderer } from '../../functions/core/render/ports';
import { type MemoryChargeStore, type MemoryFiles, type MemoryJobs, memoryWorld } from './memory';

/** Like the DynamoDB adapter: row once + processed_count, attribute updates only while processing. */
export class MemoryBulkProgress implements BulkProgress {
  recordCalls = 0;
  constructor(
    private readonly jobs: MemoryJobs,
    private readonly files: MemoryFiles,
    private readonly ledger: MemoryChargeStore,
  ) {}

  async recordFile(jobId: string, row: JobFileRow): Promise<boolean> {
    this.recordCalls++;
    const job = this.jobs.jobs.get(jobId);
    if (!job || job.status !== 'processing') return false;
    const existing = await this.files.get(jobId, row.index);
    if (existing) {
      // As the DynamoDB adapter: a made PDF replaces the CANCELLED skip a concurrent retry of its task wrote.
      if (row.status !== 'success' || existing.status !== 'skipped' || existing.error_code !== 'CANCELLED') return false;
      await this.files.putAll(jobId, [structuredClone(row)]);
      job.success_count = (job.success_count ?? 0) + 1;
      job.failure_count = (job.failure_count ?? 0) - 1;
      return true;
    }
    await this.files.putAll(jobId, [structuredClone(row)]);
    job.processed_count = (job.processed_count ?? 0) + 1;
    if (row.status === 'success') job.success_count = (job.success_count ?? 0) + 1;
    else job.failure_count = (job.failure_count ?? 0) + 1;
    return true;
  }

  async setCounts(jobId: string, counts: PreparedCounts) {
    const job = this.jobs.jobs.get(jobId);
    if (!job || job.status !== 'processing') return false;
    // As the DynamoDB adapter: only forward (see BulkProgress.setCounts).
    if (job.file_count !== counts.file_count || job.processed_count === undefined || job.processed_count < counts.processed_count) Object.assign(job, counts);
    return true;
  }

  async requestCancel(jobId: string) {
    const job = this.jobs.jobs.get(jobId);
    if (!job || job.status !== 'processing') return false;
    job.cancel_requested = true;
    return true;
  }

  async finishJob(job: Job, events: OutboxEvent[], cancelSeen: boolean) {
    const current = this.jobs.jobs.get(job.job_id);
    if (!current || current.status !== 'processing' || (!cancelSeen && current.cancel_requested)) return false;
    await this.jobs.put(job, events);
    return true;
  }

  async chargedUnits(_accountId: string, jobId: string) {
    return new Set([...this.ledger.ledger.keys()].filter((k) => k.startsWith(`${jobId}#`)).map((k) => k.slice(jobId.length + 1)));
  }
}

/**
 * A renderer that prints nothing real: the page count comes from the HTML (`<!-- pages: N -->`) unless `behave` says
 * otherwise. Like the Chromium adapter it asks `shouldStart` once it has a printing slot (`slot`: the wait for one).
 */
export class FakeRenderer implements Renderer {
  calls: RenderRequest[] = [];
  /** Documents that passed `shouldStart` (or had none) and were printed. */
  started: RenderRequest[] = [];
  slot: (request: RenderRequest) => Promise<void> | void = () => undefined;
  behave: (request: RenderRequest) => Promise<Partial<RenderResult>> | Partial<RenderResult> = () => ({});
  async render(request: RenderRequest): Promise<RenderResult> {
    this.calls.push(request);
    await this.slot(request);
    if (request.shouldStart && !(await request.shouldStart())) throw new RenderNotStartedError();
    this.started.push(request);
    const pages = Number(/<!-- pages: (\d+) -->/.exec(request.html)?.[1] ?? 1);
    // Like Chromium with the page window: printing stops after maxPages + 1 pages (the fake ignores selections).
    const windowed = request.maxPages !== undefined && pageWindow(request) !== request.options.pageRanges;
    const printed = windowed ? Math.min(pages, request.maxPages! + 1) : pages;
    const extra = await this.behave(request);
    return { pdf: Buffer.from(`%PDF-fake ${request.bundle?.documentPath}`), pages: printed, blockedRequests: 0, renderTimeout: false, missingAssets: 0, ...(windowed ? { morePages: pages > request.maxPages! } : {}), ...extra };
  }
}

/**
 * Makes each render of `renderer` wait in its printing slot until the test lets it go: `holds[i]()` finishes the i-th
 * render; `nextRender()` resolves when the next one reaches its slot.
 */
export function holdRenders(renderer: FakeRenderer): { holds: (() => void)[]; nextRender: () => Promise<void> } {
  const holds: (() => void)[] = [];
  let reached!: () => void;
  let next = new Promise<void>((resolve) => (reached = resolve));
  renderer.slot = () => {
    reached();
    next = new Promise<void>((resolve) => (reached = resolve));
    return new Promise<void>((resolve) => holds.push(resolve));
  };
  return { holds, nextRender: () => next };
}

export function bulkWorld(creditsUsd = 5) {
  const world = memoryWorld(creditsUsd);
  const renderer = new FakeRenderer();
  const progress = new MemoryBulkProgress(world.jobs, world.files, world.chargeStore);
  let now = Date.now();
  const clock = { now: () => new Date(now) };
  const deps: BulkDeps = {
    jobs: world.jobs,
    files: world.files,
    blobs: world.blobs,
    billing: world.billing,
    clock,
    slots: world.slots,
    commitments: world.commitments,
    workflows: world.workflows,
    accounts: world.accounts,
    plans: world.plans,
    renderer,
    progress,
    timing: DEFAULT_BULK_TIMING,
  };
  return { ...world, renderer, progress, deps, advance: (ms: number) => (now += ms) };
}
