import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import chromium from '@sparticuz/chromium';
import { installedChromiumRelease, unpackedChromium } from '../../functions/adapters/chromium/unpack';
import { startLocalStack } from '../../local/stack';
import { alive, descendants, killTree, startNpmService, stillAlive } from '../support/processes';
import { type TestServer, httpServer } from '../support/servers';

describe('local contract', () => {
  it('keeps accounts, keys and jobs under DATA_DIR across a restart', async () => {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-restart-'));
    try {
      let stack = await startLocalStack({ port: 0, dataDir });
      const created = await (await fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', body: JSON.stringify({ credits_usd: 2, email: 'keep@example.com' }) })).json();
      const quick = await fetch(`${stack.baseUrl}/quickjob`, { method: 'POST', headers: { 'X-API-Key': created.api_key, 'Content-Type': 'application/json' }, body: JSON.stringify({ input_type: 'html', html: '<p>x</p>', store: true }) });
      const { job_id } = await quick.json();
      await stack.stop();

      stack = await startLocalStack({ port: 0, dataDir });
      try {
        const me = await (await fetch(`${stack.baseUrl}/me`, { headers: { 'X-API-Key': created.api_key } })).json();
        expect(me).toMatchObject({ account_id: created.account_id, email: 'keep@example.com', billing: { credits_balance: 1.99, total_pdf_count: 1 } });
        const token = await fetch(`${stack.baseUrl}/me`, { headers: { Authorization: `Bearer ${created.id_token}` } });
        expect(token.status).toBe(200);
        const link = await (await fetch(`${stack.baseUrl}/jobs/${job_id}/download`, { headers: { 'X-API-Key': created.api_key } })).json();
        expect((await fetch(link.download_url)).status).toBe(200);
      } finally {
        await stack.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('stops what it had started when it cannot start: the same DATA_DIR serves again right after', async () => {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-busy-'));
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      await expect(startLocalStack({ port: (busy.address() as AddressInfo).port, dataDir })).rejects.toThrow(/EADDRINUSE/);
      // The first attempt's table emulator let go of its files: a second one opens them.
      const stack = await startLocalStack({ port: 0, dataDir });
      try {
        expect((await fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', body: '{}' })).status).toBe(201);
      } finally {
        await stack.stop();
      }
    } finally {
      busy.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('creates accounts per the contract: defaults, pending, credits, subscription, validation', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-contract-'));
    const stack = await startLocalStack({ port: 0, dataDir });
    const post = (body: unknown) => fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
    try {
      const plain = await post(undefined);
      expect(plain.status).toBe(201);
      // It holds an API key and an ID token.
      expect(plain.headers.get('cache-control')).toBe('no-store');
      const a = await plain.json();
      expect(Object.keys(a).sort()).toEqual(['account_id', 'api_key', 'email', 'id_token', 'plan_id']);
      expect(a.plan_id).toBe('standard');

      // A pending account is "pending" here as in GET /me (it was null here only).
      const pending = await (await post({ plan_id: 'pending' })).json();
      expect(pending.plan_id).toBe('pending');
      expect(await (await fetch(`${stack.baseUrl}/me`, { headers: { 'X-API-Key': pending.api_key } })).json()).toMatchObject({ plan_id: 'pending', status: 'pending' });

      const sub = await (await post({ subscription: { name: 'Business', monthly_pdfs: 10000, price: 100 }, free_credits_usd: 0.5 })).json();
      const billing = (await (await fetch(`${stack.baseUrl}/me`, { headers: { 'X-API-Key': sub.api_key } })).json()).billing;
      expect(billing).toMatchObject({ subscription_credits_remaining: 100, subscription_pdfs_remaining: 10000, free_credits_remaining: 0.5, credits_balance: 0 });
      expect(billing.subscription).toMatchObject({ name: 'Business', status: 'active', monthly_pdfs: 10000, price: 100, active: true });

      // Without a price the allowance covers monthly_pdfs at 0.01 USD each.
      const unpriced = await (await post({ subscription: { name: 'Starter', monthly_pdfs: 2000 } })).json();
      const unpricedBilling = (await (await fetch(`${stack.baseUrl}/me`, { headers: { 'X-API-Key': unpriced.api_key } })).json()).billing;
      expect(unpricedBilling).toMatchObject({ subscription_credits_remaining: 20, subscription_pdfs_remaining: 2000 });

      // A period ending 40 days ahead began now: a period shown is never one that has not begun.
      const before = Date.now();
      const later = await (await post({ subscription: { name: 'Starter', monthly_pdfs: 100, period_end: new Date(before + 40 * 86_400_000).toISOString() } })).json();
      const laterSub = (await (await fetch(`${stack.baseUrl}/me`, { headers: { 'X-API-Key': later.api_key } })).json()).billing.subscription;
      expect(Date.parse(laterSub.period_start)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(laterSub.period_start)).toBeLessThanOrEqual(Date.now());

      const refusals: [unknown, string][] = [
        [{ plan_id: 'gold' }, 'plan_id'],
        [{ plan_id: 7 }, 'plan_id'],
        [{ credits_usd: -1 }, 'credits_usd'],
        // Past a billion USD, micro-USD stop being exact integers (it used to be a 500).
        [{ credits_usd: 1e12 }, 'credits_usd'],
        [{ subscription: { name: 'x', monthly_pdfs: 1e12 } }, 'subscription.monthly_pdfs'],
        [{ subscription: { name: 'x', monthly_pdfs: 5, price: 1e300 } }, 'subscription.price'],
        [{ free_credits_usd: '5' }, 'free_credits_usd'],
        [{ subscription: [] }, 'subscription'],
        [{ subscription: { name: 'x' } }, 'subscription.monthly_pdfs'],
        [{ subscription: { monthly_pdfs: 5 } }, 'subscription.name'],
        [{ subscription: { name: 'x', monthly_pdfs: 5, price: -1 } }, 'subscription.price'],
        [{ subscription: { name: 'x', monthly_pdfs: 5, status: 'gone' } }, 'subscription.status'],
        [{ subscription: { name: 'x', monthly_pdfs: 5, period_end: 'soon' } }, 'subscription.period_end'],
        // From the year 10000 on, times print as "+010000-…", which sorts before every other ISO time: such a period
        // was stored as ended (shown active: false, its allowance unusable) although it ends far ahead.
        [{ subscription: { name: 'x', monthly_pdfs: 5, period_end: '+010000-01-01T00:00:00Z' } }, 'subscription.period_end'],
        [{ subscription: { name: 'x', monthly_pdfs: 5, period_end: '-000001-01-01T00:00:00Z' } }, 'subscription.period_end'],
        [{ email: 'nope' }, 'email'],
        [null, 'body'],
      ];
      for (const [bad, parameter] of refusals) {
        const res = await post(bad);
        const error = (await res.json()).error;
        expect([JSON.stringify(bad), res.status, error.code, error.details.parameter]).toEqual([JSON.stringify(bad), 400, 'INVALID_PARAMETER', parameter]);
      }
    } finally {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('`npm start` prints its URL once and stops, Chromium included, when the npm process is signalled', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-npm-start-'));
    let npm: ChildProcess | undefined;
    // The slow document calls here as it starts; the answer waits until the test lets it go (see below).
    let called!: () => void;
    const printing = new Promise<void>((resolve) => (called = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let signal: TestServer | undefined;
    try {
      signal = await httpServer((_req, res) => {
        called();
        void answered.then(() => res.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/plain' }).end('go'));
      });
      const service = await startNpmService({ DATA_DIR: dataDir, ALLOW_PRIVATE_TARGETS: `127.0.0.1:${signal.port}` });
      npm = service.npm;
      const { baseUrl } = service;
      const account = await (await fetch(`${baseUrl}/_local/accounts`, { method: 'POST', body: '{"credits_usd":1}' })).json();
      const pdf = await fetch(`${baseUrl}/quickjob`, { method: 'POST', headers: { 'X-API-Key': account.api_key, 'Content-Type': 'application/json' }, body: JSON.stringify({ input_type: 'html', html: '<p>x</p>' }) });
      expect(pdf.status).toBe(200);
      const tree = descendants(npm.pid!);
      expect(tree.length).toBeGreaterThan(3); // node, Chromium's processes
      // The service is npm's child itself, not behind the tsx CLI: that one passes a signal on and SIGKILLs a child
      // that has not acknowledged it within ~30 ms, which a busy service often had not (no graceful stop under load).
      const commands = tree.map((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
        } catch {
          return '';
        }
      });
      expect(commands.filter((c) => /\.bin\/tsx\b|tsx\/dist\/cli/.test(c))).toEqual([]);
      expect(commands.some((c) => c.includes('--import tsx') && c.includes('bin/local.ts'))).toBe(true);

      // A document being printed when the signal arrives is still answered: Chromium closes after it, not under it.
      // It is loaded in Chromium and waiting on its synchronous call to the test's server when the signal is sent.
      const script = `const x = new XMLHttpRequest(); x.open('GET', 'http://127.0.0.1:${signal.port}/printing', false); x.send();
        const t = Date.now(); while (Date.now() - t < 1500) {}`;
      const slow = fetch(`${baseUrl}/quickjob`, {
        method: 'POST',
        headers: { 'X-API-Key': account.api_key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ input_type: 'html', html: `<p>slow</p><script>${script}</script>` }),
      });
      await Promise.race([printing, slow.then(() => Promise.reject(new Error('the slow document was answered without calling the test server')))]);
      npm.kill('SIGTERM');
      answer();
      const done = await slow;
      expect(done.status).toBe(200);
      expect(Buffer.from(await done.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
      expect(signal.hits).toEqual(['/printing']);
      expect(await stillAlive(tree)).toEqual([]);
      // A stop that finished: status 0 (a forced or failed one is 1).
      expect(await service.exited).toBe(0);
      expect(service.output().match(/listening on/g)).toHaveLength(1);
    } finally {
      // Whatever is left (a failed assertion above) must not outlive the test.
      if (npm) killTree(npm);
      answer();
      await signal?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  // The README's quick start waits for /_local/jwks.json, which answers as soon as the gateway listens, while Chromium
  // is still being started; a Ctrl-C or SIGTERM then killed the process outright (exit by signal), cutting the
  // requests it had accepted, instead of stopping gracefully as the contract says.
  it('`npm start` signalled after it answers but before it is warm stops gracefully: requests already accepted are answered', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-early-signal-'));
    const dataDir = path.join(dir, 'data');
    let npm: ChildProcess | undefined;
    let tree: number[] = [];
    try {
      // Chromium that takes 3 s to start: the window between "answers" and "warm", made wide enough to hit.
      const real = await unpackedChromium({ unpack: () => chromium.executablePath(), release: installedChromiumRelease() });
      const slowChromium = path.join(dir, 'slow-chromium');
      writeFileSync(slowChromium, `#!/bin/sh\nsleep 3\nexec '${real}' "$@"\n`);
      chmodSync(slowChromium, 0o755);
      const probe = net.createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => probe.once('listening', resolve));
      const port = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));
      const baseUrl = `http://127.0.0.1:${port}`;

      npm = spawn('npm', ['start'], {
        cwd: path.join(__dirname, '../..'),
        env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, CHROMIUM_PATH: slowChromium },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => npm!.once('exit', (code) => resolve(code)));
      let out = '';
      let errors = '';
      npm.stdout!.on('data', (chunk) => (out += chunk));
      npm.stderr!.on('data', (chunk) => (errors += chunk));
      for (let i = 0; ; i++) {
        if (i > 300) throw new Error(`no answer from ${baseUrl}: ${out}${errors}`);
        if (await fetch(`${baseUrl}/_local/jwks.json`).then((r) => r.ok, () => false)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const account = await (await fetch(`${baseUrl}/_local/accounts`, { method: 'POST', body: '{"credits_usd":1}' })).json();
      const quick = fetch(`${baseUrl}/quickjob`, {
        method: 'POST',
        headers: { 'X-API-Key': account.api_key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ input_type: 'html', html: '<p>early</p>' }),
      });
      await new Promise((r) => setTimeout(r, 300)); // the request is in; Chromium is still starting
      expect(out).not.toMatch(/listening on/);
      tree = [npm.pid!, ...descendants(npm.pid!)];
      npm.kill('SIGTERM');

      const answer = await quick;
      expect(answer.status).toBe(200);
      expect(Buffer.from(await answer.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
      expect(await exited).toBe(0);
      expect(errors).toMatch(/SIGTERM: stopping/);
      expect(await stillAlive(tree)).toEqual([]);
    } finally {
      if (npm) killTree(npm);
      for (const pid of tree) if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
