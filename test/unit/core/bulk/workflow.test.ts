import { invalidParameter } from '../../../../functions/core/errors';
import { cancelJob } from '../../../../functions/core/bulk/cancel';
import { decideRows, finishBulkJob, recordBulkJobFailure } from '../../../../functions/core/bulk/finish';
import { prepareBulkJob } from '../../../../functions/core/bulk/prepare';
import { renderBulkFile } from '../../../../functions/core/bulk/render-file';
import type { BulkRequest } from '../../../../functions/core/bulk/requests';
import type { BundleIndex } from '../../../../functions/core/bulk/storage';
import { bulkKeys } from '../../../../functions/core/bulk/storage';
import { submitBulkJob } from '../../../../functions/core/bulk/submit';
import type { JobFileRow } from '../../../../functions/core/jobs/files';
import { newJob } from '../../../../functions/core/jobs/job';
import { parsePdfOptions } from '../../../../functions/core/render/options';
import { RendererStoppedError, RenderTimeoutError, TooManyPagesError } from '../../../../functions/core/render/ports';
import { requireCurrentPlan } from '../../../../functions/core/accounts/entitlements';
import { bulkWorld } from '../../../support/bulk-memory';
import { rejection } from '../../../support/errors';
import { type RawEntry, rawZip, unzip } from '../../../support/zips';

const options = parsePdfOptions({});
type World = ReturnType<typeof bulkWorld>;

function page(n: number, body = '') {
  return `<!-- pages: ${n} --><p>${body}</p>`;
}

async function submit(w: World, entries: RawEntry[], bundle_type: 'html' | 'markdown' = 'html') {
  const request: BulkRequest = { bundle_type, options, input: { kind: 'zip', bytes: rawZip(entries) } };
  return submitBulkJob(w.deps, { account: w.account, plan: w.plan, request });
}

/** A ZIP uploaded through the presigned link, and the request that names it. */
async function uploaded(w: World, entries: RawEntry[]): Promise<{ key: string; request: BulkRequest }> {
  const key = bulkKeys.upload(w.account.account_id);
  await w.blobs.put(key, rawZip(entries), 'application/zip');
  return { key, request: { bundle_type: 'html', options, input: { kind: 's3', key } } };
}

/** What the state machine does: Prepare, RenderFile for every item (in order here), Finish. */
async function run(w: World, jobId: string, between?: (index: number) => Promise<void>) {
  const prepared = await prepareBulkJob(w.deps, { job_id: jobId, account_id: w.account.account_id });
  for (const index of prepared.items) {
    await between?.(index);
    await renderBulkFile(w.deps, { job_id: jobId, index });
  }
  if (prepared.status === 'processing') await finishBulkJob(w.deps, { job_id: jobId });
  return { prepared, job: (await w.jobs.get(jobId))!, rows: await w.files.list(jobId) };
}

const credits = (w: World) => w.accounts.accounts.get(w.account.account_id)!.credits_micros;
const charges = (w: World, jobId: string) => [...w.chargeStore.ledger.keys()].filter((k) => k.startsWith(jobId)).sort();

describe('a bulk job from submission to its end', () => {
  it('records a job whose workflow cannot start as failed, frees its slot and staged inputs, and charges nothing', async () => {
    const w = bulkWorld();
    w.workflows.fail = new Error('throttled');
    const before = credits(w);
    const err = await submit(w, [{ name: 'a.html', data: page(1) }]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const [job] = [...w.jobs.jobs.values()];
    expect(job).toMatchObject({ status: 'failed', error_code: 'SERVICE_UNAVAILABLE' });
    expect(w.slots.held.size).toBe(0);
    expect([...w.blobs.objects.keys()]).toEqual([]);
    expect(credits(w)).toBe(before);
  });

  it('answers with the job when its queued write went through but the reply was lost, and runs it', async () => {
    const w = bulkWorld();
    const put = w.jobs.put.bind(w.jobs);
    w.jobs.put = async (...args: Parameters<typeof put>) => {
      await put(...args);
      w.jobs.put = put;
      throw new Error('socket hang up');
    };
    const res = await submit(w, [{ name: 'a.html', data: page(1) }]);
    // Answered 500 before, with no job id, and the job the start sweeper found ended failed.
    expect(res).toMatchObject({ status: 'queued', job_type: 'bulk' });
    expect(w.workflows.started).toEqual([{ workflow: 'bulk', input: { job_id: res.job_id, account_id: w.account.account_id } }]);
    const { job } = await run(w, res.job_id);
    expect(job).toMatchObject({ status: 'completed', success_count: 1 });
    expect(charges(w, res.job_id)).toHaveLength(1);
  });

  it('undoes a submission whose job was not written: staged inputs deleted, slot freed', async () => {
    const w = bulkWorld();
    w.jobs.put = async () => {
      throw new Error('throttled');
    };
    await expect(submit(w, [{ name: 'a.html', data: page(1) }])).rejects.toThrow('throttled');
    expect([...w.blobs.objects.keys()]).toEqual([]);
    expect(w.slots.held.size).toBe(0);
    expect(w.workflows.started).toEqual([]);
  });

  it('keeps an uploaded ZIP when the workflow cannot start, so the same s3_key can be submitted again', async () => {
    const w = bulkWorld();
    const { key, request } = await uploaded(w, [{ name: 'a.html', data: page(1) }]);
    w.workflows.fail = new Error('throttled');
    await expect(submitBulkJob(w.deps, { account: w.account, plan: w.plan, request })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect([...w.blobs.objects.keys()]).toEqual([key]);
    w.workflows.fail = null;
    await expect(submitBulkJob(w.deps, { account: w.account, plan: w.plan, request })).resolves.toMatchObject({ status: 'queued' });
  });

  it('reads its own copy of the ZIP when Prepare runs again (a restart), not the upload, which may have been replaced since', async () => {
    const w = bulkWorld();
    const { key, request } = await uploaded(w, [{ name: 'a.html', data: page(1) }, { name: 'b.html', data: page(1) }]);
    const { job_id } = await submitBulkJob(w.deps, { account: w.account, plan: w.plan, request });
    const first = await prepareBulkJob(w.deps, { job_id, account_id: w.account.account_id });
    // The presigned PUT (valid 15 minutes) is used again with another archive before the run starts over.
    await w.blobs.put(key, rawZip([{ name: 'other.html', data: page(1) }]), 'application/zip');
    const again = await prepareBulkJob(w.deps, { job_id, account_id: w.account.account_id });
    expect(again).toEqual(first);
    expect(again.items).toEqual([0, 1]);
  });

  it('keeps that ZIP also when the start went through after all (its reply was lost) and the execution finds its job failed', async () => {
    const w = bulkWorld();
    const { key, request } = await uploaded(w, [{ name: 'a.html', data: page(1) }]);
    w.workflows.fail = new Error('socket hang up');
    await expect(submitBulkJob(w.deps, { account: w.account, plan: w.plan, request })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { job_id: expect.any(String) } });
    const [failed] = [...w.jobs.jobs.values()];
    const { prepared } = await run(w, failed.job_id);
    expect(prepared).toMatchObject({ status: 'failed', items: [] });
    expect([...w.blobs.objects.keys()]).toEqual([key]);
  });

  it('holds two bulk jobs per account queued or running: the third is refused BULK_JOB_ALREADY_ACTIVE until one ends', async () => {
    const w = bulkWorld();
    const first = await submit(w, [{ name: 'a.html', data: page(1) }]);
    await submit(w, [{ name: 'a.html', data: page(1) }]);
    expect(await rejection(submit(w, [{ name: 'a.html', data: page(1) }]))).toMatchObject({ code: 'BULK_JOB_ALREADY_ACTIVE', details: { max_active_jobs: 2 } });
    await cancelJob(w.deps, (await w.jobs.get(first.job_id))!);
    expect((await submit(w, [{ name: 'a.html', data: page(1) }])).status).toBe('queued');
  });

  it("takes a bundle of exactly the plan's ZIP size, uploaded or inline, and refuses one byte more (BULK_ZIP_TOO_LARGE)", async () => {
    const w = bulkWorld();
    const plan = { ...w.plan, max_bulk_zip_mb: 1 };
    const max = 1024 * 1024;
    const send = (input: BulkRequest['input']) => submitBulkJob(w.deps, { account: w.account, plan, request: { bundle_type: 'html', options, input } });
    const upload = async (size: number) => {
      const key = bulkKeys.upload(w.account.account_id);
      await w.blobs.put(key, Buffer.alloc(size), 'application/zip');
      return send({ kind: 's3', key });
    };
    expect(await rejection(upload(max + 1))).toMatchObject({ code: 'BULK_ZIP_TOO_LARGE', details: { size_bytes: max + 1, max_bytes: max } });
    expect((await upload(max)).status).toBe('queued');
    const inline = (size: number) => send({ kind: 'files', files: [{ path: 'a.html', bytes: Buffer.alloc(size, 0x61) }] });
    expect(await rejection(inline(max + 1))).toMatchObject({ code: 'BULK_ZIP_TOO_LARGE', details: { size_bytes: max + 1 } });
    expect((await inline(max)).status).toBe('queued');
  });

  it('refuses a second job given the same uploaded ZIP while the first holds it (404 UPLOAD_NOT_FOUND naming that job)', async () => {
    const w = bulkWorld();
    const { request } = await uploaded(w, [{ name: 'a.html', data: page(1) }]);
    const first = await submitBulkJob(w.deps, { account: w.account, plan: w.plan, request });
    expect(await rejection(submitBulkJob(w.deps, { account: w.account, plan: w.plan, request }))).toMatchObject({ code: 'UPLOAD_NOT_FOUND', details: { reason: 'in_use', job_id: first.job_id } });
    expect(w.jobs.jobs.size).toBe(1);
  });

  it('converts every file, charges each once, writes the output ZIP with manifest.json, bulk.job.completed, and cleans up', async () => {
    const w = bulkWorld(1);
    const { job_id } = await submit(w, [{ name: 'style.css', data: 'p{}' }, { name: 'a.html', data: page(1) }, { name: 'docs/b.htm', data: page(2) }]);
    expect(w.workflows.started).toEqual([{ workflow: 'bulk', input: { job_id, account_id: w.account.account_id } }]);
    expect((await w.jobs.get(job_id))!.status).toBe('queued');
    const { prepared, job, rows } = await run(w, job_id);
    expect(prepared).toMatchObject({ status: 'processing', items: [0, 1] });
    expect(job).toMatchObject({ status: 'completed', file_count: 2, processed_count: 2, success_count: 2, failure_count: 0, pages_total: 3, error_code: null });
    expect(rows.map((r) => [r.input, r.output, r.status, r.pages])).toEqual([
      ['a.html', 'a.pdf', 'success', 1],
      ['docs/b.htm', 'docs/b.pdf', 'success', 2],
    ]);
    expect(credits(w)).toBe(1_000_000 - 2 * 10_000);
    expect(charges(w, job_id)).toEqual([`${job_id}#file#0`, `${job_id}#file#1`]);
    const zip = await unzip((await w.blobs.get(job.output!.key))!);
    expect([...zip.keys()]).toEqual(['a.pdf', 'docs/b.pdf', 'manifest.json']);
    expect(JSON.parse(zip.get('manifest.json')!.toString())).toMatchObject({ job_id, status: 'completed', bundle_type: 'html', count: 2, files: [{ index: 0, output: 'a.pdf' }, { index: 1 }] });
    expect(w.jobs.events.map((e) => [e.event, e.payload.success_count, e.output_key])).toEqual([['bulk.job.completed', 2, job.output!.key]]);
    // Only the output is left in storage, and the slot is free again.
    expect([...w.blobs.objects.keys()]).toEqual([job.output!.key]);
    expect(w.slots.held.size).toBe(0);
    // The page is the bundle document at its own path, with the options of the request.
    // Each file gets the per-file timeout and page limit, the job's own warm-page scope and the account as tenant.
    expect(w.renderer.calls.map((c) => [c.bundle?.documentPath, c.options, c.networkIdle?.maxMs, c.timeoutMs, c.maxPages, c.bundle?.scope, c.tenant])).toEqual([
      ['a.html', options, 20_000, w.deps.timing.fileTimeoutSeconds * 1000, 100, job_id, w.account.account_id],
      ['docs/b.htm', options, 20_000, w.deps.timing.fileTimeoutSeconds * 1000, 100, job_id, w.account.account_id],
    ]);
    expect(w.deps.timing.fileTimeoutSeconds * 1000).not.toBe(20_000);
  });

  it('serves the bundle to the page: assets by path, null for absent ones, and never more than was checked', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'css/site.css', data: 'h1{color:red}' }, { name: 'docs/a.html', data: page(1) }, { name: 'img/x.png', data: Buffer.alloc(300, 1), method: 0 }]);
    let seen: (string | null)[] = [];
    w.renderer.behave = async (req) => {
      seen = await Promise.all(['css/site.css', 'img/x.png', 'docs/a.html', 'nope.css'].map(async (p) => {
        const data = await req.bundle!.read(p);
        return data ? Buffer.from(data).toString('latin1').slice(0, 13) : null;
      }));
      return { missingAssets: 1 };
    };
    const { rows } = await run(w, job_id);
    expect(seen).toEqual(['h1{color:red}', '\u0001'.repeat(13), page(1).slice(0, 13), null]);
    expect(rows[0]).toMatchObject({ status: 'success', missing_assets: 1 });
  });

  it("serves no file for names of an object's own properties (constructor, __proto__)", async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.html', data: page(1) }]);
    let seen: unknown[] = [];
    w.renderer.behave = async (req) => {
      seen = await Promise.all(['constructor', '__proto__', 'toString'].flatMap((p) => [req.bundle!.read(p), req.bundle!.size(p), req.bundle!.isDocument!(p)]));
      return {};
    };
    const { rows } = await run(w, job_id);
    expect(seen).toEqual([null, null, false, null, null, false, null, null, false]);
    expect(rows[0]).toMatchObject({ status: 'success' });
  });

  it('tells the page which bundle files are documents of the job (links to them become links to their PDFs), and records its links to them', async () => {
    const w = bulkWorld();
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0x61);
    const { job_id } = await submit(w, [{ name: 'big.html', data: big, method: 0 }, { name: 'a.html', data: page(1) }, { name: 'b.html', data: page(1) }, { name: 'site.css', data: 'p{}' }]);
    let seen: boolean[] = [];
    w.renderer.behave = (req) => {
      if (req.bundle!.documentPath !== 'a.html') return {};
      // big.html makes no PDF (too large to convert): no document to link to.
      seen = ['b.html', 'a.html', 'site.css', 'big.html', 'none.html'].map((p) => req.bundle!.isDocument!(p));
      return { documentLinks: 2 };
    };
    const { rows } = await run(w, job_id);
    expect(seen).toEqual([true, true, false, false, false]);
    expect(rows.map((r) => [r.input, r.status, r.document_links])).toEqual([
      ['big.html', 'failed', undefined],
      ['a.html', 'success', 2],
      ['b.html', 'success', undefined],
    ]);
  });

  it('finds a file named in the other Unicode normalisation (a ZIP made on macOS names it decomposed), unless that is ambiguous', async () => {
    const w = bulkWorld();
    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    const { job_id } = await submit(w, [
      { name: 'a.html', data: page(1) },
      { name: `img/${nfd}.png`, data: 'decomposed' },
      { name: `css/${nfc}.css`, data: 'composed' },
      { name: `both/${nfc}.txt`, data: 'composed' },
      { name: `both/${nfd}.txt`, data: 'decomposed' },
    ]);
    let seen: (string | number | null)[] = [];
    w.renderer.behave = async (req) => {
      const paths = [`img/${nfc}.png`, `img/${nfd}.png`, `css/${nfd}.css`, `both/${nfc}.txt`, `both/${nfd}.txt`, `img/${nfc.toUpperCase()}.png`];
      seen = await Promise.all(paths.map(async (p) => {
        const data = await req.bundle!.read(p);
        return data ? `${Buffer.from(data).toString()}:${req.bundle!.size(p)}` : null;
      }));
      return {};
    };
    await run(w, job_id);
    expect(seen).toEqual(['decomposed:10', 'decomposed:10', 'composed:8', 'composed:8', 'decomposed:10', null]);
  });

  it('takes root references (/css/x.css) of a ZIP of one folder (site/…, as "Compress" makes it) to mean that folder', async () => {
    const read = async (entries: RawEntry[], paths: string[]) => {
      const w = bulkWorld();
      const { job_id } = await submit(w, entries);
      let seen: (string | null)[] = [];
      w.renderer.behave = async (req) => {
        seen = await Promise.all(
          paths.map(async (p) => {
            const data = await req.bundle!.read(p);
            return data ? `${Buffer.from(data).toString()}:${req.bundle!.size(p)}` : null;
          }),
        );
        return {};
      };
      await run(w, job_id);
      return seen;
    };
    const site = [{ name: 'site/index.html', data: page(1) }, { name: 'site/css/site.css', data: 'p{}' }, { name: '__MACOSX/site/._index.html', data: 'x' }];
    expect(await read(site, ['css/site.css', 'site/css/site.css', 'index.html', 'css/none.css'])).toEqual(['p{}:3', 'p{}:3', `${page(1)}:${page(1).length}`, null]);
    // Two top-level folders (or a file at the top): the root is the ZIP's.
    expect(await read([...site, { name: 'other/a.css', data: 'a' }], ['css/site.css'])).toEqual([null]);
    expect(await read([...site, { name: 'top.css', data: 't' }], ['css/site.css', 'top.css'])).toEqual([null, 't:1']);
  });

  it('converts Markdown with front matter removed; HTML files of a Markdown bundle are assets', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.md', data: '---\ntitle: Secret title\n---\n# Heading' }, { name: 'b.markdown', data: 'text' }, { name: 'c.html', data: '<p>asset</p>' }], 'markdown');
    const { rows } = await run(w, job_id);
    expect(rows.map((r) => [r.input, r.output])).toEqual([
      ['a.md', 'a.pdf'],
      ['b.markdown', 'b.pdf'],
    ]);
    const html = w.renderer.calls[0].html;
    expect(html).toContain('<h1 dir="auto" id="heading">Heading</h1>');
    expect(html).not.toContain('title: Secret title');
  });

  it('reads each document in the encoding a browser would: byte-order mark, else <meta charset>, else UTF-8', async () => {
    const w = bulkWorld();
    const latin1 = Buffer.from('<meta charset="windows-1252"><p>caf\u00e9 \u2013 \u20ac</p>', 'latin1');
    latin1[latin1.length - 5] = 0x80; // the euro sign is 0x80 in windows-1252
    latin1[latin1.length - 7] = 0x96; // the en dash
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<p>caf\u00e9 \u4e2d</p>', 'utf16le')]);
    const utf8 = Buffer.from('\ufeff<p>caf\u00e9</p>', 'utf8');
    const { job_id } = await submit(w, [{ name: 'latin1.html', data: latin1 }, { name: 'utf16.html', data: utf16 }, { name: 'utf8.html', data: utf8 }]);
    await run(w, job_id);
    expect(w.renderer.calls.map((c) => c.html)).toEqual(['<meta charset="windows-1252"><p>caf\u00e9 \u2013 \u20ac</p>', '<p>caf\u00e9 \u4e2d</p>', '<p>caf\u00e9</p>']);
  });

  it('fails a Markdown file the parser refuses (nested too deeply) as RENDER_FAILED, and converts the rest', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'deep.md', data: `${'>'.repeat(6000)} x` }, { name: 'ok.md', data: '# fine' }], 'markdown');
    const { job, rows } = await run(w, job_id);
    expect(rows.map((r) => [r.input, r.status, r.error_code])).toEqual([
      ['deep.md', 'failed', 'RENDER_FAILED'],
      ['ok.md', 'success', null],
    ]);
    expect(rows[0].error_message).toMatch(/nests too deeply/);
    expect(job.status).toBe('partial_failed');
  });

  it('skips the file that would pass the page budget and every later file, without charging them (partial_failed)', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1, 2, 3].map((i) => ({ name: `f${i}.html`, data: page(60) })).concat([{ name: 'f4.html', data: page(1) }]));
    const { job, rows } = await run(w, job_id);
    expect(rows.map((r) => [r.status, r.error_code, r.pages])).toEqual([
      ['success', null, 60],
      ['success', null, 60],
      ['success', null, 60],
      ['skipped', 'BULK_PAGE_BUDGET_EXCEEDED', 0],
      ['skipped', 'BULK_PAGE_BUDGET_EXCEEDED', 0],
    ]);
    expect(job).toMatchObject({ status: 'partial_failed', success_count: 3, failure_count: 2, pages_total: 180, error_code: null });
    expect(charges(w, job_id)).toHaveLength(3);
    expect([...(await unzip((await w.blobs.get(job.output!.key))!)).keys()]).toEqual(['f0.pdf', 'f1.pdf', 'f2.pdf', 'manifest.json']);
    expect(w.jobs.events.map((e) => e.event)).toEqual(['bulk.job.partial']);
  });

  it('gives each failing file its code: FILE_TOO_LARGE, PAGE_LIMIT_EXCEEDED, RENDER_TIMEOUT, RENDER_FAILED; render_timeout files still convert', async () => {
    const w = bulkWorld();
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0x61);
    const { job_id } = await submit(w, [
      { name: 'big.html', data: big, method: 0 },
      { name: 'long.html', data: page(101) },
      { name: 'bomb.html', data: '<p>bomb</p>' },
      { name: 'loop.html', data: '<script>for(;;){}</script>' },
      { name: 'broken.html', data: '<p>broken</p>' },
      { name: 'slow.html', data: '<p>slow</p>' },
    ]);
    w.renderer.behave = (req) => {
      if (req.html.includes('for(;;)')) throw new RenderTimeoutError(60_000);
      if (req.html.includes('broken')) throw new Error('Page crashed');
      if (req.html.includes('bomb')) throw new TooManyPagesError(50_000);
      if (req.html.includes('slow')) return { renderTimeout: true, blockedRequests: 2 };
      return {};
    };
    const { job, rows } = await run(w, job_id);
    expect(rows.map((r) => [r.input, r.status, r.error_code, r.render_timeout, r.blocked_requests])).toEqual([
      ['big.html', 'failed', 'FILE_TOO_LARGE', false, 0],
      ['long.html', 'failed', 'PAGE_LIMIT_EXCEEDED', false, 0],
      ['bomb.html', 'failed', 'PAGE_LIMIT_EXCEEDED', false, 0],
      ['loop.html', 'failed', 'RENDER_TIMEOUT', false, 0],
      ['broken.html', 'failed', 'RENDER_FAILED', false, 0],
      ['slow.html', 'success', null, true, 2],
    ]);
    expect(w.renderer.calls.map((c) => c.bundle!.documentPath)).not.toContain('big.html');
    expect(rows[2].error_message).toBe('bomb.html has more than 100 pages; a file of a bulk job may have at most 100. Split it, or use options.pageRanges.');
    expect(job).toMatchObject({ status: 'partial_failed', success_count: 1, failure_count: 5, processed_count: 6 });
    expect(charges(w, job_id)).toEqual([`${job_id}#file#5`]);
  });

  it('converts a file of exactly 100 pages: only a file over the limit is PAGE_LIMIT_EXCEEDED', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'edge.html', data: page(100) }]);
    const { rows } = await run(w, job_id);
    expect(rows.map((r) => [r.input, r.status, r.error_code, r.pages])).toEqual([['edge.html', 'success', null, 100]]);
  });

  it('converts a file of exactly 10 MB: only a file over the limit is FILE_TOO_LARGE', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'edge.html', data: Buffer.alloc(10 * 1024 * 1024, 0x61), method: 0 }]);
    const { job, rows } = await run(w, job_id);
    expect(rows.map((r) => [r.input, r.status, r.error_code])).toEqual([['edge.html', 'success', null]]);
    expect(job).toMatchObject({ status: 'completed', success_count: 1 });
  });

  it("logs a file's unexplained render failure (a crash) as unexpected, one the document explains as an ordinary failure", async () => {
    const w = bulkWorld();
    const logged: { level: string; message: string }[] = [];
    w.deps.log = (message) => logged.push({ level: 'warn', message });
    w.deps.logUnexpected = (message) => logged.push({ level: 'error', message });
    const { job_id } = await submit(w, [
      { name: 'broken.html', data: '<p>broken</p>' },
      { name: 'ranged.html', data: '<p>ranged</p>' },
    ]);
    w.renderer.behave = (req) => {
      if (req.html.includes('broken')) throw new Error('Page crashed');
      throw invalidParameter('options.pageRanges', 'options.pageRanges asks for pages beyond the end of the document.');
    };
    await run(w, job_id);
    expect(logged.filter((l) => l.message.includes('failed to render'))).toEqual([
      { level: 'error', message: `bulk job ${job_id}: file 0 failed to render` },
      { level: 'warn', message: `bulk job ${job_id}: file 1 failed to render` },
    ]);
  });

  it('fails the job with BULK_ALL_FILES_FAILED when nothing converted, charging nothing and storing no output', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.html', data: page(101) }]);
    const { job } = await run(w, job_id);
    expect(job).toMatchObject({ status: 'failed', error_code: 'BULK_ALL_FILES_FAILED', success_count: 0, failure_count: 1, output: null });
    expect(charges(w, job_id)).toEqual([]);
    expect(w.jobs.events.map((e) => [e.event, e.payload.error_code])).toEqual([['bulk.job.failed', 'BULK_ALL_FILES_FAILED']]);
    expect(w.blobs.objects.size).toBe(0);
  });

  it.each([
    ['no convertible file', [{ name: 'a.css', data: 'p{}' }, { name: 'b.md', data: '# md' }], 'BULK_NO_CONVERTIBLE_FILES'],
    ['201 convertible files', Array.from({ length: 201 }, (_, i) => ({ name: `f${i}.html`, data: 'x' })), 'BULK_FILE_COUNT_EXCEEDED'],
    ['an unsafe entry', [{ name: '../x.html', data: 'x' }], 'BULK_ZIP_UNSAFE_ENTRY'],
    ['too many entries', Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}.css`, data: 'x' })), 'BULK_ZIP_TOO_MANY_ENTRIES'],
  ])('fails at preparation for %s (%s), before any rendering, with nothing charged or kept', async (_n, entries, code) => {
    const w = bulkWorld();
    const { job_id } = await submit(w, entries as RawEntry[]);
    const { prepared, job, rows } = await run(w, job_id);
    expect(prepared).toMatchObject({ status: 'failed', items: [] });
    expect(job).toMatchObject({ status: 'failed', error_code: code });
    expect(rows).toEqual([]);
    expect(w.renderer.calls).toEqual([]);
    expect(w.blobs.objects.size).toBe(0);
    expect(w.slots.held.size).toBe(0);
    expect(w.jobs.events.map((e) => [e.event, e.payload.error_code])).toEqual([['bulk.job.failed', code]]);
  });

  it('checks the whole job against the balance before rendering (INSUFFICIENT_CREDITS), counting every bucket', async () => {
    const w = bulkWorld(0.02);
    const { job_id } = await submit(w, [1, 2, 3].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const { job } = await run(w, job_id);
    expect(job).toMatchObject({ status: 'failed', error_code: 'INSUFFICIENT_CREDITS', file_count: 3, failure_count: 3 });
    expect(w.renderer.calls).toEqual([]);
    expect(credits(w)).toBe(20_000);

    // 0.01 of free credits + 0.02 of one-off credits cover three files charged one by one.
    const v = bulkWorld(0.02);
    v.accounts.accounts.get(v.account.account_id)!.free_credits_micros = 10_000;
    const second = await submit(v, [1, 2, 3].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    expect((await run(v, second.job_id)).job).toMatchObject({ status: 'completed', success_count: 3 });
    expect(v.accounts.accounts.get(v.account.account_id)).toMatchObject({ credits_micros: 0, free_credits_micros: 0 });
  });

  it('skips files that start after the time budget with TIME_BUDGET_EXCEEDED', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1, 2].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const { rows, job } = await run(w, job_id, async (index) => {
      if (index === 1) w.advance(16 * 60 * 1000);
    });
    expect(rows.map((r) => [r.status, r.error_code])).toEqual([
      ['success', null],
      ['skipped', 'TIME_BUDGET_EXCEEDED'],
      ['skipped', 'TIME_BUDGET_EXCEEDED'],
    ]);
    expect(job).toMatchObject({ status: 'partial_failed', success_count: 1 });
  });
});

describe('an account that lost its plan after submission', () => {
  const losePlan = (w: World) => w.accounts.accounts.set(w.account.account_id, { ...w.accounts.accounts.get(w.account.account_id)!, plan_id: null, status: 'pending' });

  it('is refused by Prepare and by Finish with the workers\' one UPGRADE_REQUIRED refusal, charging nothing', async () => {
    const refusal = await rejection(requireCurrentPlan(bulkWorld().plans, null));
    const atPrepare = bulkWorld();
    const first = await submit(atPrepare, [{ name: 'a.html', data: page(1) }]);
    losePlan(atPrepare);
    const prepared = await run(atPrepare, first.job_id);
    expect(prepared.prepared.status).toBe('failed');
    expect(prepared.job).toMatchObject({ status: 'failed', error_code: 'UPGRADE_REQUIRED', error_message: refusal.message });

    const atFinish = bulkWorld();
    const second = await submit(atFinish, [{ name: 'a.html', data: page(1) }]);
    const finished = await run(atFinish, second.job_id, async () => void losePlan(atFinish));
    expect(finished.job).toMatchObject({ status: 'failed', error_code: 'UPGRADE_REQUIRED', error_message: refusal.message });
    expect([...charges(atPrepare, first.job_id), ...charges(atFinish, second.job_id)]).toEqual([]);
  });
});

describe('retries', () => {
  it('a retried render records its file once and counts it once', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.html', data: page(1) }, { name: 'b.html', data: page(1) }]);
    await prepareBulkJob(w.deps, { job_id });
    await renderBulkFile(w.deps, { job_id, index: 0 });
    await renderBulkFile(w.deps, { job_id, index: 0 });
    expect((await w.jobs.get(job_id))!.processed_count).toBe(1);
    expect(await w.files.list(job_id)).toHaveLength(1);
  });

  it('a workflow run again from the start (a stop or crash of the local service) keeps its counts and prints no file twice', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1, 2].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    await prepareBulkJob(w.deps, { job_id });
    await renderBulkFile(w.deps, { job_id, index: 0 });
    await renderBulkFile(w.deps, { job_id, index: 1 });
    expect(w.renderer.calls).toHaveLength(2);

    // The run starts over: Prepare counts the rows already recorded (it set processed_count back to 0).
    const again = await prepareBulkJob(w.deps, { job_id });
    expect(again.items).toEqual([0, 1, 2]);
    expect(await w.jobs.get(job_id)).toMatchObject({ processed_count: 2, success_count: 2, failure_count: 0 });
    for (const index of again.items) expect(await renderBulkFile(w.deps, { job_id, index })).toEqual({ index, status: 'success' });
    expect(w.renderer.calls).toHaveLength(3);
    await finishBulkJob(w.deps, { job_id });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'completed', processed_count: 3, success_count: 3 });
    expect(charges(w, job_id)).toHaveLength(3);
  });

  it('a run started over after Finish charged some files checks the balance only for the files not charged yet', async () => {
    // 0.03 USD: exactly the three files.
    const w = bulkWorld(0.03);
    const { job_id } = await submit(w, [0, 1, 2].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const { items } = await prepareBulkJob(w.deps, { job_id });
    for (const index of items) await renderBulkFile(w.deps, { job_id, index });
    // Finish charged two of them, then the process died before it wrote the job.
    const unit = (index: number) => ({ account_id: w.account.account_id, job_id, unit: `file#${index}`, operation: 'pdf' as const, amount_micros: w.plan.price_per_pdf_micros, pdf_count: 1 });
    expect(await w.deps.billing.chargeInOrder([unit(0), unit(1)])).toBe(2);
    expect(credits(w)).toBe(10_000);

    // 0.01 USD left covers the one file not charged yet: the job goes on and completes, each file charged once.
    expect((await prepareBulkJob(w.deps, { job_id })).status).toBe('processing');
    for (const index of items) await renderBulkFile(w.deps, { job_id, index });
    await finishBulkJob(w.deps, { job_id });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'completed', success_count: 3 });
    expect(charges(w, job_id)).toHaveLength(3);
    expect(credits(w)).toBe(0);
  });

  it('a bundle that cannot be read while the page loads is retried, not recorded as the file failing', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'style.css', data: 'p{}' }, { name: 'a.html', data: page(1) }]);
    await prepareBulkJob(w.deps, { job_id });
    // The staged bundle no longer matches what was checked (its checksum differs).
    const key = bulkKeys.index(w.account.account_id, job_id);
    const index = JSON.parse((await w.blobs.get(key))!.toString()) as BundleIndex;
    index.entries['style.css'].crc ^= 1;
    await w.blobs.put(key, Buffer.from(JSON.stringify(index)), 'application/json');
    w.renderer.behave = async (req) => {
      await req.bundle!.read('style.css');
      return {};
    };
    await expect(renderBulkFile(w.deps, { job_id, index: 0 })).rejects.toMatchObject({ name: 'TransientTaskError' });
    expect(await w.files.list(job_id)).toEqual([]);
    expect((await w.jobs.get(job_id))!.processed_count).toBe(0);
  });

  it('a render the stopping service cut short is retried, not recorded as the file failing', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.html', data: page(1) }]);
    await prepareBulkJob(w.deps, { job_id });
    w.renderer.behave = () => {
      throw new RendererStoppedError({ cause: new Error('Target closed') });
    };
    await expect(renderBulkFile(w.deps, { job_id, index: 0 })).rejects.toMatchObject({ name: 'TransientTaskError' });
    expect(await w.files.list(job_id)).toEqual([]);
    w.renderer.behave = () => ({});
    await renderBulkFile(w.deps, { job_id, index: 0 });
    expect((await w.files.list(job_id)).map((r) => r.status)).toEqual(['success']);
  });

  it('a finish that fails after charging (output storage down) and is retried charges nothing twice', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1, 2].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const prepared = await prepareBulkJob(w.deps, { job_id });
    for (const index of prepared.items) await renderBulkFile(w.deps, { job_id, index });
    w.blobs.failPuts.add('/outputs/');
    w.blobs.failPuts.add(`${job_id}.zip`);
    await expect(finishBulkJob(w.deps, { job_id })).rejects.toMatchObject({ name: 'TransientTaskError' });
    expect(charges(w, job_id)).toHaveLength(3);
    const afterFirst = credits(w);
    w.blobs.failPuts.clear();
    expect(await finishBulkJob(w.deps, { job_id })).toEqual({ job_id, status: 'completed' });
    expect(credits(w)).toBe(afterFirst);
    expect(credits(w)).toBe(5_000_000 - 30_000);
    // Once more (a duplicate delivery): nothing changes.
    expect(await finishBulkJob(w.deps, { job_id })).toEqual({ job_id, status: 'completed' });
    expect(credits(w)).toBe(afterFirst);
    expect(w.jobs.events.map((e) => e.event)).toEqual(['bulk.job.completed']);
  });

  it('delivers only the files the balance still pays for at finish: the first unpaid one and all later ones fail INSUFFICIENT_CREDITS', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1, 2].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const prepared = await prepareBulkJob(w.deps, { job_id });
    for (const index of prepared.items) await renderBulkFile(w.deps, { job_id, index });
    // Spent elsewhere since the job was checked: one file's price is left.
    w.accounts.accounts.get(w.account.account_id)!.credits_micros = 10_000;
    await finishBulkJob(w.deps, { job_id });
    expect((await w.jobs.get(job_id))!).toMatchObject({ status: 'partial_failed', success_count: 1, failure_count: 2 });
    expect((await w.files.list(job_id)).map((r) => [r.status, r.error_code])).toEqual([
      ['success', null],
      ['failed', 'INSUFFICIENT_CREDITS'],
      ['failed', 'INSUFFICIENT_CREDITS'],
    ]);
    expect(charges(w, job_id)).toHaveLength(1);
    expect(credits(w)).toBe(0);
  });

  it('fails with BULK_ALL_FILES_FAILED, not INSUFFICIENT_CREDITS, when only some of the files that made nothing were unpaid', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'f0.html', data: page(101) }, { name: 'f1.html', data: page(1) }]);
    const prepared = await prepareBulkJob(w.deps, { job_id });
    for (const index of prepared.items) await renderBulkFile(w.deps, { job_id, index });
    // Spent elsewhere since the job was checked: nothing is left for the one file that converted.
    w.accounts.accounts.get(w.account.account_id)!.credits_micros = 0;
    await finishBulkJob(w.deps, { job_id });
    expect((await w.files.list(job_id)).map((r) => r.error_code)).toEqual(['PAGE_LIMIT_EXCEEDED', 'INSUFFICIENT_CREDITS']);
    expect((await w.jobs.get(job_id))!).toMatchObject({ status: 'failed', error_code: 'BULK_ALL_FILES_FAILED' });
  });

  it('a retried finish keeps its decisions even when the balance ran out meanwhile (already charged files stay delivered)', async () => {
    const w = bulkWorld(0.02);
    const { job_id } = await submit(w, [0, 1].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const prepared = await prepareBulkJob(w.deps, { job_id });
    for (const index of prepared.items) await renderBulkFile(w.deps, { job_id, index });
    w.blobs.failPuts.add(`${job_id}.zip`);
    await expect(finishBulkJob(w.deps, { job_id })).rejects.toMatchObject({ name: 'TransientTaskError' });
    expect(credits(w)).toBe(0);
    w.blobs.failPuts.clear();
    await finishBulkJob(w.deps, { job_id });
    expect((await w.jobs.get(job_id))!).toMatchObject({ status: 'completed', success_count: 2 });
  });

  it('refunds a job whose finish failed for good after it charged the files (storage down on every retry)', async () => {
    const w = bulkWorld();
    const before = credits(w);
    const { job_id } = await submit(w, [0, 1, 2].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const prepared = await prepareBulkJob(w.deps, { job_id });
    for (const index of prepared.items) await renderBulkFile(w.deps, { job_id, index });
    w.blobs.failPuts.add(`${job_id}.zip`);
    for (let attempt = 0; attempt < 4; attempt++) await expect(finishBulkJob(w.deps, { job_id })).rejects.toMatchObject({ name: 'TransientTaskError' });
    expect(credits(w)).toBe(before - 30_000);
    expect(await recordBulkJobFailure(w.deps, { job_id, error: { Error: 'States.TaskFailed' } })).toEqual({ job_id, status: 'failed' });
    expect((await w.jobs.get(job_id))!).toMatchObject({ status: 'failed', output: null, error_message: expect.stringMatching(/nothing was charged/) });
    expect(credits(w)).toBe(before);
    const account = w.accounts.accounts.get(w.account.account_id)!;
    expect(account).toMatchObject({ total_pdf_count: 0, total_amount_micros: 0 });
    // Each unit is refunded once however often the failure step runs; the ledger keeps the entries, marked refunded.
    expect(await recordBulkJobFailure(w.deps, { job_id })).toEqual({ job_id, status: 'failed' });
    expect(credits(w)).toBe(before);
    expect([...w.chargeStore.ledger.values()].filter((e) => e.job_id === job_id).map((e) => !!e.refunded_at)).toEqual([true, true, true]);
  });

  // The workflow timed out the Finish step while it ran: RecordFailure fails the job, then the late Finish charges.
  // When the bucket also refused RecordFailure's deletes, Finish still reads the staged PDFs and reaches its final
  // write, which the failed job refuses: it must refund there too.
  it.each([
    ['', false],
    [', also when its staged files could not be removed', true],
  ])('refunds what a finish charged after the workflow had already failed the job%s', async (_, deletesFail) => {
    const w = bulkWorld();
    const before = credits(w);
    const { job_id } = await submit(w, [0, 1].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const prepared = await prepareBulkJob(w.deps, { job_id });
    for (const index of prepared.items) await renderBulkFile(w.deps, { job_id, index });
    const billing = w.deps.billing;
    const chargeInOrder = billing.chargeInOrder.bind(billing);
    billing.chargeInOrder = async (...args) => {
      const remove = w.blobs.delete;
      if (deletesFail) {
        w.blobs.delete = async () => {
          throw new Error('bucket unavailable');
        };
      }
      try {
        await recordBulkJobFailure(w.deps, { job_id, error: { Error: 'States.Timeout' } });
      } finally {
        w.blobs.delete = remove;
      }
      return chargeInOrder(...args);
    };
    const finished = await finishBulkJob(w.deps, { job_id });
    if (deletesFail) expect(finished).toEqual({ job_id, status: 'failed' });
    expect(charges(w, job_id)).toHaveLength(2);
    expect((await w.jobs.get(job_id))!.status).toBe('failed');
    expect(credits(w)).toBe(before);
  });

  it('records a job whose steps failed for good as failed, with nothing kept', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.html', data: page(1) }]);
    await prepareBulkJob(w.deps, { job_id });
    await renderBulkFile(w.deps, { job_id, index: 0 });
    expect(await recordBulkJobFailure(w.deps, { job_id, error: { Error: 'States.Timeout' } })).toEqual({ job_id, status: 'failed' });
    expect((await w.jobs.get(job_id))!).toMatchObject({ status: 'failed', error_code: 'INTERNAL_SERVER_ERROR' });
    expect(await w.files.list(job_id)).toEqual([]);
    expect(w.blobs.objects.size).toBe(0);
    expect(charges(w, job_id)).toEqual([]);
  });
});

describe('cancel', () => {
  it('cancels a queued job at once: 200, nothing charged, bulk.job.cancelled, and the workflow then does nothing', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.html', data: page(1) }]);
    const outcome = await cancelJob(w.deps, (await w.jobs.get(job_id))!);
    expect(outcome).toEqual({ job_id, status: 'cancelled', cancel_requested: true, message: expect.any(String) });
    expect(w.slots.held.size).toBe(0);
    expect(w.blobs.objects.size).toBe(0);
    const { prepared, job } = await run(w, job_id);
    expect(prepared.status).toBe('cancelled');
    expect(job.status).toBe('cancelled');
    expect(w.renderer.calls).toEqual([]);
    expect(w.jobs.events.map((e) => e.event)).toEqual(['bulk.job.cancelled']);
    // Again: harmless.
    expect((await cancelJob(w.deps, job)).status).toBe('cancelled');
  });

  it('stops a running job before its next file: made PDFs stay and are charged, the rest are skipped with CANCELLED', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1, 2, 3].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const { job, rows } = await run(w, job_id, async (index) => {
      if (index === 2) {
        expect((await cancelJob(w.deps, (await w.jobs.get(job_id))!)).status).toBe('processing');
        const again = await cancelJob(w.deps, (await w.jobs.get(job_id))!);
        expect(again).toEqual({ job_id, status: 'processing', cancel_requested: true, message: expect.any(String) });
      }
    });
    expect(rows.map((r) => [r.status, r.error_code])).toEqual([
      ['success', null],
      ['success', null],
      ['skipped', 'CANCELLED'],
      ['skipped', 'CANCELLED'],
    ]);
    expect(job).toMatchObject({ status: 'cancelled', cancel_requested: true, success_count: 2, failure_count: 2 });
    expect(charges(w, job_id)).toHaveLength(2);
    expect([...(await unzip((await w.blobs.get(job.output!.key))!)).keys()]).toEqual(['f0.pdf', 'f1.pdf', 'manifest.json']);
    expect(w.jobs.events.map((e) => [e.event, e.payload.success_count, e.output_key])).toEqual([['bulk.job.cancelled', 2, job.output!.key]]);
  });

  it('skips files still waiting for a printing slot when the cancel lands; a file already printing finishes and is charged', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1, 2, 3].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const prepared = await prepareBulkJob(w.deps, { job_id });
    // One slot: f0 prints at once, the others have read the job (no cancel yet) and queue for the slot.
    let openSlots!: () => void;
    const slotsFree = new Promise<void>((resolve) => (openSlots = resolve));
    let allCalled!: () => void;
    const everyFileAtRenderer = new Promise<void>((resolve) => (allCalled = resolve));
    w.renderer.slot = (req) => {
      if (w.renderer.calls.length === 4) allCalled();
      return req.bundle!.documentPath === 'f0.html' ? undefined : slotsFree;
    };
    const tasks = prepared.items.map((index) => renderBulkFile(w.deps, { job_id, index }));
    // Every file reaches the renderer once its source is read from the bundle (inflated off the main thread);
    // should the tasks end without that, the length check below fails instead of waiting.
    await Promise.race([everyFileAtRenderer, Promise.allSettled(tasks)]);
    expect(w.renderer.calls).toHaveLength(4);
    expect((await cancelJob(w.deps, (await w.jobs.get(job_id))!)).status).toBe('processing');
    openSlots();
    expect((await Promise.all(tasks)).map((t) => t.status)).toEqual(['success', 'skipped', 'skipped', 'skipped']);
    expect(w.renderer.started.map((r) => r.bundle!.documentPath)).toEqual(['f0.html']);

    await finishBulkJob(w.deps, { job_id });
    const job = (await w.jobs.get(job_id))!;
    expect((await w.files.list(job_id)).map((r) => [r.status, r.error_code])).toEqual([
      ['success', null],
      ['skipped', 'CANCELLED'],
      ['skipped', 'CANCELLED'],
      ['skipped', 'CANCELLED'],
    ]);
    expect(job).toMatchObject({ status: 'cancelled', success_count: 1, failure_count: 3 });
    expect(charges(w, job_id)).toEqual([`${job_id}#file#0`]);
  });

  it('skips a file whose wait for a slot outlasted the time budget; retries when the job cannot be read before printing', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    await prepareBulkJob(w.deps, { job_id });
    w.renderer.slot = () => void w.advance(16 * 60 * 1000);
    expect(await renderBulkFile(w.deps, { job_id, index: 0 })).toEqual({ index: 0, status: 'skipped' });
    expect(await w.files.get(job_id, 0)).toMatchObject({ status: 'skipped', error_code: 'TIME_BUDGET_EXCEEDED' });

    const v = bulkWorld();
    const second = await submit(v, [{ name: 'a.html', data: page(1) }]);
    await prepareBulkJob(v.deps, { job_id: second.job_id });
    v.renderer.slot = () => {
      v.jobs.get = async () => {
        throw new Error('DynamoDB unavailable');
      };
    };
    await expect(renderBulkFile(v.deps, { job_id: second.job_id, index: 0 })).rejects.toMatchObject({ name: 'TransientTaskError' });
    expect(v.renderer.started).toEqual([]);
    expect(await v.files.list(second.job_id)).toEqual([]);
  });

  it('does not lose a cancel that lands while Finish runs: the job ends cancelled, its PDFs kept and charged', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [0, 1].map((i) => ({ name: `f${i}.html`, data: page(1) })));
    const prepared = await prepareBulkJob(w.deps, { job_id });
    for (const index of prepared.items) await renderBulkFile(w.deps, { job_id, index });
    // The cancel arrives while Finish stores the output ZIP (after it read the job).
    const put = w.blobs.put.bind(w.blobs);
    let cancelled = false;
    w.blobs.put = async (key, body, type) => {
      await put(key, body, type);
      if (key.endsWith(`${job_id}.zip`) && !cancelled) {
        cancelled = true;
        expect((await cancelJob(w.deps, (await w.jobs.get(job_id))!)).status).toBe('processing');
      }
    };
    expect(await finishBulkJob(w.deps, { job_id })).toEqual({ job_id, status: 'cancelled' });
    const job = (await w.jobs.get(job_id))!;
    expect(job).toMatchObject({ status: 'cancelled', cancel_requested: true, success_count: 2, failure_count: 0 });
    expect((await w.files.list(job_id)).map((r) => r.status)).toEqual(['success', 'success']);
    expect(charges(w, job_id)).toHaveLength(2);
    const zip = await unzip((await w.blobs.get(job.output!.key))!);
    expect([...zip.keys()]).toEqual(['f0.pdf', 'f1.pdf', 'manifest.json']);
    expect(JSON.parse(zip.get('manifest.json')!.toString())).toMatchObject({ status: 'cancelled', count: 2 });
    expect(w.jobs.events.map((e) => [e.event, e.payload.success_count])).toEqual([['bulk.job.cancelled', 2]]);
    expect(w.slots.held.size).toBe(0);
    // Cancelled already: cancelling again is harmless.
    expect((await cancelJob(w.deps, job)).status).toBe('cancelled');
  });

  it.each([
    ['the balance cannot pay for the files', 0.02, 3, 'INSUFFICIENT_CREDITS'],
    ['there are more files than a job converts', 10, 201, 'BULK_FILE_COUNT_EXCEEDED'],
  ])('lists every counted file as CANCELLED when a cancel answered during Prepare wins over its refusal (%s)', async (_n, usd, count, code) => {
    const files = Array.from({ length: count }, (_, i) => ({ name: `f${i}.html`, data: page(1) }));
    const uncancelled = bulkWorld(usd);
    expect((await run(uncancelled, (await submit(uncancelled, files)).job_id)).job).toMatchObject({ status: 'failed', error_code: code });

    const w = bulkWorld(usd);
    const { job_id } = await submit(w, files);
    // The cancel (202: the job is processing) lands while Prepare reads the bundle, before it finds the refusal.
    const get = w.blobs.get.bind(w.blobs);
    w.blobs.get = async (key) => {
      const job = (await w.jobs.get(job_id))!;
      if (key.endsWith('bundle.zip') && !job.cancel_requested) expect((await cancelJob(w.deps, job)).status).toBe('processing');
      return get(key);
    };
    const { prepared, job, rows } = await run(w, job_id);
    expect(prepared).toMatchObject({ status: 'cancelled', items: [] });
    expect(job).toMatchObject({ status: 'cancelled', error_code: null, file_count: count, processed_count: count, success_count: 0, failure_count: count });
    expect(rows).toHaveLength(count);
    expect(rows.every((r, i) => r.index === i && r.input === `f${i}.html` && r.status === 'skipped' && r.error_code === 'CANCELLED')).toBe(true);
    expect(w.jobs.events.map((e) => [e.event, e.payload.failure_count])).toEqual([['bulk.job.cancelled', count]]);
    expect(charges(w, job_id)).toEqual([]);
    expect(w.renderer.calls).toEqual([]);
    expect(w.slots.held.size).toBe(0);
  });

  it('refuses finished jobs and other job types with 409 JOB_NOT_CANCELLABLE', async () => {
    const w = bulkWorld();
    const { job_id } = await submit(w, [{ name: 'a.html', data: page(1) }]);
    const { job } = await run(w, job_id);
    await expect(cancelJob(w.deps, job)).rejects.toMatchObject({ code: 'JOB_NOT_CANCELLABLE', details: { reason: 'finished', status: 'completed' } });
    for (const type of ['quick', 'long', 'pdfop'] as const) {
      const other = newJob({ job_id: `job_${type}`, account_id: w.account.account_id, job_type: type, status: 'processing', now: new Date() });
      await expect(cancelJob(w.deps, other)).rejects.toMatchObject({ code: 'JOB_NOT_CANCELLABLE', details: { reason: 'job_type', job_type: type } });
    }
  });
});

describe('decideRows', () => {
  const row = (index: number, status: JobFileRow['status'], pages: number): JobFileRow => ({
    index,
    input: `f${index}.html`,
    output: null,
    status,
    pages,
    error_code: status === 'success' ? null : 'RENDER_FAILED',
    error_message: null,
    blocked_requests: 0,
    render_timeout: false,
    missing_assets: 0,
  });
  const bundle = (n: number) => ({ files: Array.from({ length: n }, (_, index) => ({ index, path: `f${index}.html`, size: 1, entry: null })) }) as unknown as BundleIndex;

  it('lets a file land exactly on the budget, and counts failed files as no pages', () => {
    const rows = decideRows(bundle(4), [row(0, 'success', 100), row(1, 'failed', 0), row(2, 'success', 100), row(3, 'success', 1)], 200);
    expect(rows.map((r) => [r.status, r.error_code])).toEqual([
      ['success', null],
      ['failed', 'RENDER_FAILED'],
      ['success', null],
      ['skipped', 'BULK_PAGE_BUDGET_EXCEEDED'],
    ]);
  });

  it('keeps a skip as it was decided (CANCELLED, TIME_BUDGET_EXCEEDED) past the budget: only files that ran are skipped for it', () => {
    const cancelled = { ...row(1, 'skipped', 0), error_code: 'CANCELLED' };
    const rows = decideRows(bundle(3), [row(0, 'success', 3), cancelled, row(2, 'success', 1)], 2);
    expect(rows.map((r) => [r.status, r.error_code])).toEqual([
      ['skipped', 'BULK_PAGE_BUDGET_EXCEEDED'],
      ['skipped', 'CANCELLED'],
      ['skipped', 'BULK_PAGE_BUDGET_EXCEEDED'],
    ]);
  });

  it('records a file whose render was abandoned as RENDER_FAILED', () => {
    expect(decideRows(bundle(2), [row(0, 'success', 1)], 200)[1]).toMatchObject({ status: 'failed', error_code: 'RENDER_FAILED', input: 'f1.html' });
  });
});
