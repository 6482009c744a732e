import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { killTree, startNpmService, stillAlive } from '../support/processes';
import { type TestServer, httpsServer, makeTestCa } from '../support/servers';

/**
 * A crash of the local service (SIGKILL, out of memory) while a long job renders. The process that held the job's
 * lease and its account's render slot is gone, so the next start releases them and renders the job again at once;
 * it used to stay `processing` until the lease ran out (15.5 minutes), holding the slot, and then end as a timeout.
 */
describe('a crash of the local service', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-crash-'));
  let npm: ChildProcess | undefined;
  let stack: LocalStack | undefined;
  afterAll(async () => {
    if (npm) killTree(npm);
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('renders a long job again after the restart, charges it once, and frees its account to render the next', async () => {
    const first = await startNpmService({ DATA_DIR: dataDir, RENDER_PREWARM: '1' });
    npm = first.npm;
    const account = await (await fetch(`${first.baseUrl}/_local/accounts`, { method: 'POST', body: '{"credits_usd":1}' })).json();
    const call = (baseUrl: string, method: string, route: string, json?: unknown) =>
      fetch(`${baseUrl}${route}`, { method, headers: { 'X-API-Key': account.api_key, 'Content-Type': 'application/json' }, body: json ? JSON.stringify(json) : undefined });
    // Busy for a while when it loads, so the crash lands while the worker prints it.
    const busy = '<p>long</p><script>const t = Date.now(); while (Date.now() - t < 2500) {}</script>';
    const accepted = await call(first.baseUrl, 'POST', '/longjob', { input_type: 'html', html: busy });
    expect(accepted.status).toBe(202);
    const { job_id } = await accepted.json();
    let status = '';
    for (let i = 0; i < 400 && status !== 'processing'; i++) {
      status = (await (await call(first.baseUrl, 'GET', `/jobs/${job_id}`)).json()).status;
      if (status !== 'processing') await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe('processing');
    const killed = killTree(first.npm);
    npm = undefined;
    // The restart comes after the crash (a killed process can take a moment to go; the start would wait for its store).
    await stillAlive(killed, 10_000);

    stack = await startLocalStack({ port: 0, dataDir, env: { RENDER_PREWARM: '1' } });
    const deadline = Date.now() + 60_000;
    let job: Record<string, unknown> = {};
    while (Date.now() < deadline) {
      job = await (await call(stack.baseUrl, 'GET', `/jobs/${job_id}`)).json();
      if (job.status !== 'processing' && job.status !== 'queued') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(job).toMatchObject({ status: 'completed', pages: 1, error_code: null });
    expect((await stack.services.accounts.get(account.account_id))!.credits_micros).toBe(990_000);

    // The account's one local render slot is free again: its next long job renders now, not in a quarter of an hour.
    const next = await (await call(stack.baseUrl, 'POST', '/longjob', { input_type: 'html', html: '<p>next</p>' })).json();
    let after: Record<string, unknown> = {};
    for (let i = 0; i < 300 && after.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await (await call(stack.baseUrl, 'GET', `/jobs/${next.job_id}`)).json();
    }
    expect(after.status).toBe('completed');
  }, 240_000);

  it("gives back the dispatch slots of deliveries the crash cut: the account's next events go out at once", async () => {
    const webhookData = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-crash-webhooks-'));
    const ca = makeTestCa();
    // Holds every delivery until the test lets go: the two the account's local share allows are in flight at the crash.
    let holding = true;
    const held: import('node:http').ServerResponse[] = [];
    const delivered: string[] = [];
    const receiver: TestServer = await httpsServer(ca, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        if (holding) return void held.push(res);
        delivered.push(JSON.parse(body).job_id);
        res.writeHead(204).end();
      });
    });
    const env = { DATA_DIR: webhookData, ALLOW_PRIVATE_TARGETS: `localhost:${receiver.port}`, NODE_EXTRA_CA_CERTS: ca.caFile, RENDER_PREWARM: '1' };
    let restarted: LocalStack | undefined;
    try {
      const first = await startNpmService(env);
      npm = first.npm;
      const account = await (await fetch(`${first.baseUrl}/_local/accounts`, { method: 'POST', body: '{"credits_usd":1}' })).json();
      const call = (baseUrl: string, method: string, route: string, json: unknown, credential: Record<string, string>) =>
        fetch(`${baseUrl}${route}`, { method, headers: { ...credential, 'Content-Type': 'application/json' }, body: JSON.stringify(json) });
      const hook = await call(first.baseUrl, 'POST', '/accounts/me/webhooks', { url: `https://localhost:${receiver.port}/hold`, events: ['job.queued', 'job.processing', 'job.completed'] }, { Authorization: `Bearer ${account.id_token}` });
      expect(hook.status).toBe(201);
      expect((await call(first.baseUrl, 'POST', '/longjob', { input_type: 'html', html: '<p>first</p>' }, { 'X-API-Key': account.api_key })).status).toBe(202);
      for (let i = 0; i < 400 && held.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
      expect(held).toHaveLength(2);
      const killed = killTree(first.npm);
      npm = undefined;
      await stillAlive(killed, 10_000);
      holding = false;
      for (const res of held.splice(0)) res.destroy();

      restarted = await startLocalStack({ port: 0, dataDir: webhookData, env });
      const next = await (await call(restarted.baseUrl, 'POST', '/longjob', { input_type: 'html', html: '<p>next</p>' }, { 'X-API-Key': account.api_key })).json();
      // The dead dispatches held the account's two slots for their 2-minute leases: the new job's events waited for them.
      for (let i = 0; i < 300 && !delivered.includes(next.job_id); i++) await new Promise((r) => setTimeout(r, 100));
      expect(delivered).toContain(next.job_id);
    } finally {
      await restarted?.stop();
      await receiver.close();
      rmSync(webhookData, { recursive: true, force: true });
    }
  }, 240_000);
});
