import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { rawZip } from '../support/zips';

/**
 * `npm start` keeps its state under the data dir and survives a restart (the local contract). Step Functions keeps
 * an execution running through anything that happens to a Lambda; locally, a bulk job whose workflow a stop cut short
 * must resume when the service starts again, not stay `processing` (holding the account's slot and credit) for ever.
 */
describe('a restart of the local service', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-restart-'));
  // A stop that waits for nothing: the execution is aborted mid-way, as a crash would leave it.
  const env = { RENDER_PREWARM: '1', RESPONSE_CONTRACT: 'strict', LOCAL_SFN_RETRY_MS: '0', LOCAL_WORKFLOW_STOP_GRACE_MS: '0' };
  let stack: LocalStack | undefined;
  afterAll(async () => {
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, route: string, key: string, json?: unknown) =>
    fetch(`${stack!.baseUrl}${route}`, { method, headers: { 'X-API-Key': key, ...(json ? { 'Content-Type': 'application/json' } : {}) }, body: json ? JSON.stringify(json) : undefined });

  it('resumes a bulk job whose workflow the stop interrupted, and charges each file once', async () => {
    stack = await startLocalStack({ port: 0, dataDir, env });
    const created = await fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ credits_usd: 5 }) });
    const { api_key, account_id } = await created.json();
    const before = (await stack.services.accounts.get(account_id))!.credits_micros;
    // Each file keeps its page busy for a moment, so the stop lands while files are still printing.
    const busy = (i: number) => `<p>file ${i}</p><script>const t = Date.now(); while (Date.now() - t < 1200) {}</script>`;
    const zip = rawZip([0, 1, 2, 3].map((i) => ({ name: `f${i}.html`, data: busy(i) })));
    // Watches the renderer port (calls go through unchanged): documents that got a printing slot and started.
    let printing = 0;
    const render = stack.services.renderer.render.bind(stack.services.renderer);
    const spy = jest.spyOn(stack.services.renderer, 'render').mockImplementation((request) => {
      const shouldStart = request.shouldStart;
      return render(shouldStart ? { ...request, shouldStart: async () => (await shouldStart()) && ++printing > 0 } : request);
    });
    const accepted = await call('POST', '/bulkjob', api_key, { zip_base64: zip.toString('base64') });
    expect(accepted.status).toBe(202);
    const { job_id } = await accepted.json();
    for (let i = 0; i < 1000 && printing === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const { status } = await (await call('GET', `/jobs/${job_id}`, api_key)).json();
    // The moment the test is about: the workflow is printing with files still to record. Had the wait run out, or
    // every file been printed already, the stop would interrupt no printing and the restart would resume nothing.
    expect(printing).toBeGreaterThan(0);
    expect(status).toBe('processing');
    expect((await stack.services.jobFiles.list(job_id)).length).toBeLessThan(4);
    spy.mockRestore();

    await stack.stop();
    stack = undefined;
    stack = await startLocalStack({ port: 0, dataDir, env });
    await stack.workflows.idle();

    const job = await (await call('GET', `/jobs/${job_id}`, api_key)).json();
    expect(job).toMatchObject({ status: 'completed', success_count: 4, failure_count: 0 });
    const files = await (await call('GET', `/jobs/${job_id}/files`, api_key)).json();
    expect(files.files.map((f: { status: string }) => f.status)).toEqual(['success', 'success', 'success', 'success']);
    const plan = (await stack.services.plans.get('standard'))!;
    expect((await stack.services.accounts.get(account_id))!.credits_micros).toBe(before - 4 * plan.price_per_pdf_micros);
  }, 90_000);

  it('answers a submission still in flight when the stop comes, and keeps its job for the next start', async () => {
    stack ??= await startLocalStack({ port: 0, dataDir, env });
    const created = await fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ credits_usd: 1 }) });
    const { api_key } = await created.json();
    // The submission counts the pages first (a busy script makes that take a moment): the stop lands during it.
    let counting!: () => void;
    const submitting = new Promise<void>((resolve) => (counting = resolve));
    const render = stack.services.renderer.render.bind(stack.services.renderer);
    const spy = jest.spyOn(stack.services.renderer, 'render').mockImplementation((request) => (counting(), render(request)));
    const submitted = call('POST', '/longjob', api_key, { input_type: 'html', html: '<p>late</p><script>const t = Date.now(); while (Date.now() - t < 1500) {}</script>' });
    await submitting;
    const stopped = stack.stop();
    const res = await submitted;
    spy.mockRestore();
    await stopped;
    // Before, the queue stopped ahead of the answers and refused the job: a 500, and the job failed.
    expect(res.status).toBe(202);
    const { job_id } = await res.json();

    stack = await startLocalStack({ port: 0, dataDir, env });
    let job: { status: string } = { status: 'queued' };
    for (let i = 0; i < 600 && (job.status === 'queued' || job.status === 'processing'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = await (await call('GET', `/jobs/${job_id}`, api_key)).json();
    }
    expect(job.status).toBe('completed');
  }, 120_000);

  it('keeps the links it handed out working: local S3 comes back on its port', async () => {
    stack ??= await startLocalStack({ port: 0, dataDir, env });
    const created = await fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ credits_usd: 1 }) });
    const { api_key } = await created.json();
    const stored = await (await call('POST', '/quickjob', api_key, { input_type: 'html', html: '<p>kept</p>', store: true })).json();
    expect(stored.download_url).toEqual(expect.any(String));

    await stack.stop();
    stack = undefined;
    stack = await startLocalStack({ port: 0, dataDir, env });
    const res = await fetch(stored.download_url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
  }, 60_000);
});
