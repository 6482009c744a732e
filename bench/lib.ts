/** Small helpers shared by the benchmarks: load driving, percentiles, tables. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';
import { installedChromiumRelease, unpackedChromium } from '../functions/adapters/chromium/unpack';

/**
 * The browser of the bare puppeteer baselines: what a plain script launches, and nothing that makes it slower than it
 * has to be (shared memory stays in /dev/shm, as the service's does here).
 */
export async function launchBaselineBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM_PATH ?? (await unpackedChromium({ unpack: () => chromium.executablePath(), release: installedChromiumRelease() })),
    headless: 'shell',
    args: ['--no-sandbox', '--disable-gpu'],
    ignoreDefaultArgs: ['--disable-dev-shm-usage'],
  });
}

/** The bare baseline's document: a new context, setContent, pdf, close. */
export async function bareRender(browser: Browser, html: string): Promise<void> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setContent(html, { waitUntil: 'load' });
  await page.pdf({ format: 'A4', printBackground: true });
  await context.close();
}

export interface Measurement {
  label: string;
  concurrency: number;
  count: number;
  p50: number;
  p95: number;
  perSecond: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Runs `count` calls of `task` (numbered from `first`) with `concurrency` workers; adds each latency, returns the seconds taken. */
async function callsOf(concurrency: number, count: number, first: number, task: (i: number) => Promise<void>, latencies: number[]): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const t = performance.now();
        await task(first + i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

function measurement(label: string, concurrency: number, count: number, latencies: number[], seconds: number): Measurement {
  latencies.sort((a, b) => a - b);
  return { label, concurrency, count, p50: percentile(latencies, 50), p95: percentile(latencies, 95), perSecond: count / seconds };
}

/** Runs `task` `count` times with `concurrency` workers; latency per call and overall throughput. */
export async function drive(label: string, concurrency: number, count: number, task: (i: number) => Promise<void>): Promise<Measurement> {
  const latencies: number[] = [];
  const seconds = await callsOf(concurrency, count, 0, task, latencies);
  return measurement(label, concurrency, count, latencies, seconds);
}

/**
 * Measures several contenders in alternating rounds (A B, B A, A B, ...) of `count / rounds` calls each, so that
 * drift in the machine's speed during the run reaches them alike. Each gets its latencies over all its rounds and
 * its throughput as its calls over the time its own rounds took.
 */
export async function driveInterleaved(concurrency: number, count: number, rounds: number, contenders: { label: string; task: (i: number) => Promise<void> }[]): Promise<Measurement[]> {
  const perRound = Math.ceil(count / rounds);
  const totals = contenders.map(() => ({ latencies: [] as number[], seconds: 0, count: 0 }));
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, at) => at);
    if (round % 2 === 1) order.reverse();
    for (const at of order) {
      const total = totals[at];
      total.seconds += await callsOf(concurrency, perRound, total.count, contenders[at].task, total.latencies);
      total.count += perRound;
    }
  }
  return contenders.map(({ label }, at) => measurement(label, concurrency, totals[at].count, totals[at].latencies, totals[at].seconds));
}

/** One keep-alive connection per concurrent caller: the load generator should cost the machine little next to the service. */
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** A lean HTTP request for load loops (node's http, which costs less CPU per call than fetch). */
export function request(url: string, init: { method: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method, headers: init.headers, agent: keepAlive }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? (Number.isInteger(c) ? String(c) : c.toFixed(1)) : c)));
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells.map((r, ri) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |${ri === 0 ? `\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|` : ''}`).join('\n');
}

export interface ServiceProcess {
  baseUrl: string;
  stop(): Promise<void>;
}

/** Starts the service exactly as `npm start` does, in its own process, on a free port with a fresh data dir. */
export async function startService(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-bench-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.resolve(__dirname, '../bin/local.ts')], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
  return {
    baseUrl,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function localAccount(baseUrl: string, body: Record<string, unknown> = { credits_usd: 100_000 }) {
  const res = await fetch(`${baseUrl}/_local/accounts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`account: ${res.status} ${await res.text()}`);
  return (await res.json()) as { api_key: string; id_token: string; account_id: string };
}
