import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalStack } from '../../local/stack';
import { type NpmService, alive, descendants, killTree, startNpmService, stillAlive } from '../support/processes';
import { type TestServer, httpServer } from '../support/servers';

/**
 * A stop of `npm start` never waits for a long render: a second signal, or the stop's limit, ends the process at
 * once, and the next start renders the job it was printing (it used to wait for the render, up to 15 minutes).
 */
describe('stopping npm start while a long job renders', () => {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  let server: TestServer;
  // The document calls the test server synchronously. The submission's counting render is answered at once; the
  // worker's render waits until the test lets it go.
  let released = false;
  let release!: () => void;
  let releasedNow!: Promise<void>;
  let counted = false;
  let called: (() => void) | undefined;
  beforeAll(async () => {
    server = await httpServer((_req, res) => {
      const answer = () => res.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/plain' }).end('go');
      if (released || !counted) {
        counted = true;
        answer();
        return;
      }
      called?.();
      void releasedNow.then(answer);
    });
  });
  beforeEach(() => {
    released = false;
    counted = false;
    releasedNow = new Promise<void>((resolve) => (release = resolve));
  });
  afterAll(async () => {
    release();
    await server.close();
  });

  async function submitHeldJob(service: NpmService) {
    const account = await (await fetch(`${service.baseUrl}/_local/accounts`, { method: 'POST', body: '{"credits_usd":1}' })).json();
    const printing = new Promise<void>((resolve) => (called = resolve));
    const script = `const x = new XMLHttpRequest(); x.open('GET', 'http://127.0.0.1:${server.port}/held', false); x.send();`;
    const accepted = await fetch(`${service.baseUrl}/longjob`, {
      method: 'POST',
      headers: { 'X-API-Key': account.api_key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ input_type: 'html', html: `<p>long</p><script>${script}</script>` }),
    });
    expect(accepted.status).toBe(202);
    await printing;
    return { account, jobId: (await accepted.json()).job_id as string };
  }

  async function expectRenderedAfterRestart(dataDir: string, account: { account_id: string; api_key: string }, jobId: string) {
    released = true;
    release();
    const stack = await startLocalStack({ port: 0, dataDir, env: { ALLOW_PRIVATE_TARGETS: `127.0.0.1:${server.port}`, RENDER_PREWARM: '1' } });
    try {
      let job: Record<string, unknown> = {};
      for (let i = 0; i < 300 && job.status !== 'completed' && job.status !== 'failed'; i++) {
        if (i) await new Promise((r) => setTimeout(r, 200));
        job = await (await fetch(`${stack.baseUrl}/jobs/${jobId}`, { headers: { 'X-API-Key': account.api_key } })).json();
      }
      expect(job).toMatchObject({ status: 'completed', pages: 1, error_code: null });
      expect((await stack.services.accounts.get(account.account_id))!.credits_micros).toBe(990_000);
    } finally {
      await stack.stop();
    }
  }

  /** A service printing a held long job is stopped by `stop`; then every process is gone and the next start renders the job. */
  async function stopWhileRendering(name: string, env: NodeJS.ProcessEnv, stop: (service: NpmService) => Promise<void>) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), `pdfsvc-${name}-`));
    let service: NpmService | undefined;
    try {
      service = await startNpmService({ DATA_DIR: dataDir, ALLOW_PRIVATE_TARGETS: `127.0.0.1:${server.port}`, RENDER_PREWARM: '1', ...env });
      const { account, jobId } = await submitHeldJob(service);
      const tree = [service.npm.pid!, ...descendants(service.npm.pid!)];
      await stop(service);
      expect(await stillAlive(tree)).toEqual([]);
      await expectRenderedAfterRestart(dataDir, account, jobId);
    } finally {
      if (service) killTree(service.npm);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('exits at once on a second signal, and the next start renders the job', async () => {
    await stopWhileRendering('stop-twice', {}, async (service) => {
      service.npm.kill('SIGTERM');
      for (let i = 0; i < 100 && !service.errors().includes('SIGTERM: stopping'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(service.errors()).toContain('SIGTERM: stopping');
      // The graceful stop waits for the render, which waits for the test: only the second signal can end it.
      await new Promise((r) => setTimeout(r, 1_100));
      expect(alive(service.npm.pid!)).toBe(true);
      service.npm.kill('SIGTERM');
      expect(await service.exited).toBe(1);
      expect(service.errors()).toContain('SIGTERM again: exiting now');
      expect(service.errors()).not.toContain('still stopping');
    });
  }, 180_000);

  it('exits when the stop takes longer than LOCAL_STOP_TIMEOUT_MS, and the next start renders the job', async () => {
    await stopWhileRendering('stop-limit', { LOCAL_STOP_TIMEOUT_MS: '2000' }, async (service) => {
      service.npm.kill('SIGTERM');
      expect(await service.exited).toBe(1);
      expect(service.errors()).toContain('SIGTERM: stopping (requests and work in flight finish, for up to 2 s; signal again to exit at once)');
      expect(service.errors()).toContain('still stopping after 2 s: exiting now; the next start takes over the work still in flight');
    });
  }, 180_000);

  it('refuses to start with a stop limit that is not a number of milliseconds', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-stop-setting-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      cwd: path.join(__dirname, '../..'),
      env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOCAL_STOP_TIMEOUT_MS: '30s' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let errors = '';
      child.stderr!.on('data', (chunk) => (errors += chunk));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(errors).toContain('LOCAL_STOP_TIMEOUT_MS must be a number of milliseconds above 0, not "30s"');
    } finally {
      killTree(child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
