import { Billing } from '../../../../functions/core/billing/charging';
import { abandonDeadLetteredLongJob, endAbandonedLongJob, processLongJob } from '../../../../functions/core/conversion/longjob';
import { newJob } from '../../../../functions/core/jobs/job';
import type { Mailer } from '../../../../functions/core/notifications/ports';
import { normalisePdfOptions } from '../../../../functions/core/render/options';
import { FakeRenderer, holdRenders } from '../../../support/bulk-memory';
import { memoryWorld } from '../../../support/memory';

/**
 * A worker alive past its lease (A) and the worker that took the job over (B), both rendering: whichever
 * finishes, the job is completed, charged, announced and emailed once, and names the output that is stored.
 */
describe('processLongJob: a worker past its lease and the worker that took over', () => {
  function world() {
    const w = memoryWorld();
    let now = Date.parse('2026-11-22T10:00:00Z');
    const clock = { now: () => new Date(now), advance: (ms: number) => (now += ms) };
    const renderer = new FakeRenderer();
    const { holds, nextRender } = holdRenders(renderer);
    // Each attempt prints bytes of its own (Chromium stamps a creation date), so the stored object tells who wrote it.
    renderer.behave = (req) => ({ pdf: Buffer.from(`%PDF-attempt-${renderer.calls.indexOf(req) === 0 ? 'A' : 'B-longer'}`) });
    const mails: { subject?: string }[] = [];
    const mailer: Mailer = { send: async (m) => void mails.push(m as { subject?: string }) };
    const deps = { ...w, clock, billing: new Billing(w.accounts, w.chargeStore, clock), renderer, queue: { send: async () => undefined }, mailer, share: { rendersPerAccount: 2 } };
    return { w, clock, renderer, holds, mails, deps, nextRender };
  }

  async function queued(w: ReturnType<typeof memoryWorld>, id: string, now: Date) {
    await w.blobs.put(`inputs/${id}.json`, Buffer.from(JSON.stringify({ html: '<p>x</p>', options: normalisePdfOptions({}) })), 'application/json');
    await w.jobs.put({ ...newJob({ job_id: id, account_id: w.account.account_id, job_type: 'long', status: 'queued', mode: 'html', now }), input_key: `inputs/${id}.json` });
  }

  /** A claims and renders; its lease runs out; B claims and renders; then they finish in `order`. */
  async function race(order: 'A first' | 'B first' | 'together') {
    const t = world();
    const { w, clock, holds, deps, nextRender } = t;
    await queued(w, 'job_race', clock.now());
    const a = processLongJob(deps, { job_id: 'job_race' }, 1000);
    await nextRender();
    clock.advance(62_000); // past A's lease (its 1 s budget + 60 s)
    const b = processLongJob(deps, { job_id: 'job_race' }, 1000);
    await nextRender();
    expect(t.renderer.calls).toHaveLength(2);
    let outcomes: string[];
    if (order === 'A first') {
      holds[0]();
      const first = await a;
      holds[1]();
      outcomes = [first, await b];
    } else if (order === 'B first') {
      holds[1]();
      const second = await b;
      holds[0]();
      outcomes = [await a, second];
    } else {
      holds.forEach((finish) => finish());
      outcomes = await Promise.all([a, b]);
    }
    return { ...t, outcomes };
  }

  it.each(['A first', 'B first', 'together'] as const)('%s: one charge, one job.completed, one ready email, the stored output the job names, slots back', async (order) => {
    const { w, mails, outcomes } = await race(order);
    // The worker holding the lease (B) completes the job; A's late result is dropped.
    expect(outcomes).toEqual(['skipped', 'completed']);
    const job = (await w.jobs.get('job_race'))!;
    expect(job).toMatchObject({ status: 'completed', lease_until: null });
    expect([...w.chargeStore.ledger.values()]).toHaveLength(1);
    expect((await w.accounts.get(w.account.account_id))!.credits_micros).toBe(w.account.credits_micros - w.plan.price_per_pdf_micros);
    expect(w.jobs.events.filter((e) => e.event === 'job.completed')).toHaveLength(1);
    expect(w.jobs.events.filter((e) => e.event === 'job.failed')).toHaveLength(0);
    expect(mails).toHaveLength(1);
    // One output object, the one the job names, with the size the job records.
    const outputs = [...w.blobs.objects.keys()].filter((k) => k.startsWith('outputs/'));
    expect(outputs).toEqual([job.output!.key]);
    expect(w.blobs.objects.get(job.output!.key)!.body.byteLength).toBe(job.output!.size_bytes);
    expect(w.blobs.objects.get(job.output!.key)!.body.toString()).toBe('%PDF-attempt-B-longer');
    expect(w.slots.held.size).toBe(0);
    expect(w.blobs.objects.has('inputs/job_race.json')).toBe(false);
  });

  it("completes and emails when its own charge went through with the reply lost (the ledger says charged before)", async () => {
    const { w, clock, holds, mails, deps, nextRender } = world();
    await queued(w, 'job_lost', clock.now());
    const commit = w.chargeStore.commit.bind(w.chargeStore);
    w.chargeStore.commit = async (...args: Parameters<typeof commit>) => {
      await commit(...args);
      return 'already_charged';
    };
    const run = processLongJob(deps, { job_id: 'job_lost' }, 1000);
    await nextRender();
    holds[0]();
    expect(await run).toBe('completed');
    const job = (await w.jobs.get('job_lost'))!;
    expect(w.blobs.objects.get(job.output!.key)!.body.byteLength).toBe(job.output!.size_bytes);
    expect(mails).toHaveLength(1);
  });

  it.each(['the start sweeper', 'the dead-letter worker'] as const)('a worker still alive after %s ended its job (lease over) drops its result: no charge, no ready email, no output', async (ender) => {
    const { w, clock, holds, mails, deps, nextRender } = world();
    await queued(w, 'job_ended', clock.now());
    const run = processLongJob(deps, { job_id: 'job_ended' }, 1000);
    await nextRender();
    clock.advance(62_000 + 120_000);
    const job = (await w.jobs.get('job_ended'))!;
    if (ender === 'the start sweeper') expect(await endAbandonedLongJob(deps, job, 3000)).toBe(true);
    else expect(await abandonDeadLetteredLongJob(deps, 'job_ended')).toBe('failed');
    holds[0]();
    expect(await run).toBe('skipped');
    expect((await w.jobs.get('job_ended'))!.status).toBe(ender === 'the start sweeper' ? 'timeout' : 'failed');
    expect(w.chargeStore.ledger.size).toBe(0);
    expect(w.jobs.events.filter((e) => e.event === 'job.completed')).toHaveLength(0);
    expect(w.jobs.events.filter((e) => e.event === 'job.failed')).toHaveLength(1);
    expect(mails.map((m) => m.subject)).toEqual([expect.not.stringContaining('ready')]);
    expect([...w.blobs.objects.keys()].filter((k) => k.startsWith('outputs/'))).toEqual([]);
    expect(w.slots.held.size).toBe(0);
  });

  it('a slow worker that is the only one completes the job after its lease ran out', async () => {
    const { w, clock, holds, mails, deps, nextRender } = world();
    await queued(w, 'job_slow', clock.now());
    const a = processLongJob(deps, { job_id: 'job_slow' }, 1000);
    await nextRender();
    clock.advance(62_000); // its lease is over, but nobody took the job
    holds[0]();
    expect(await a).toBe('completed');
    const job = (await w.jobs.get('job_slow'))!;
    expect(job).toMatchObject({ status: 'completed', lease_until: null });
    expect(w.blobs.objects.get(job.output!.key)!.body.byteLength).toBe(job.output!.size_bytes);
    expect([...w.chargeStore.ledger.values()]).toHaveLength(1);
    expect(mails).toHaveLength(1);
    expect(w.slots.held.size).toBe(0);
  });
});
