/**
 * Whole-system invariants under mixed concurrent traffic. Several accounts (tight balances, a subscription, a
 * rate-limited plan, a key revoked mid-flight, webhooks registered) fire quick, long, bulk and merge/split jobs,
 * cancels and requests that must fail, all at once and in a seeded random order (MIXED_LOAD_SEED=<n> replays one;
 * the seed is printed with every failure). Once queues, workflows and sweepers have settled, what the table and the
 * API say must agree: balances never negative and moved exactly by the standing ledger, every charge on a job that
 * succeeded (and every success charged once), nothing left queued, processing or holding a slot, GET /jobs/{id} =
 * the list = the one terminal webhook event, total_pdf_count = the ledger, and no plan limit exceeded. Invariants
 * only, never timings: which requests win a race differs from run to run.
 */
import type http from 'node:http';
import { handler as startSweep } from '../../functions/workers/jobs/start-sweep';
import { handler as outboxSweep } from '../../functions/workers/webhooks/sweep';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestCa, type TestServer, httpsServer, makeTestCa } from '../support/servers';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { TERMINAL_EVENT, settled, tableReader } from '../support/table-state';
import { rawZip } from '../support/zips';

const SEED = Number(process.env.MIXED_LOAD_SEED ?? 20240611);
const RATE_LIMIT = 4;

/** mulberry32: a small seeded generator, so an order that broke something can be run again. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Delivery {
  path: string;
  body: any;
}

let ca: TestCa;
let receiver: TestServer;
let stack: TestStack;
let stateOf: ReturnType<typeof tableReader>['stateOf'];
const settle = (ms = 20_000) => settled(stack, ms);
let ahead = 0;
const deliveries: Delivery[] = [];

function receive(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body: any = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // counted as a delivery that is not a job event: the check below names it
    }
    deliveries.push({ path: req.url ?? '/', body });
    res.writeHead(204).end();
  });
}

beforeAll(async () => {
  ca = makeTestCa();
  receiver = await httpsServer(ca, receive);
  stack = await startTestStack(
    {
      ALLOW_PRIVATE_TARGETS: `localhost:${receiver.port}`,
      NODE_EXTRA_CA_CERTS: ca.caFile,
      LOCAL_SFN_RETRY_MS: '0',
      LOCAL_QUEUE_RETRY_MS: '50',
      LOCAL_SCHEDULE_INTERVAL_MS: '3600000',
      WEBHOOK_DEFER_SECONDS: '1',
      LONGJOB_DEFER_SECONDS: '1',
    },
    { clock: { now: () => new Date(Date.now() + ahead * 60_000) } },
  );
  ({ stateOf } = tableReader(stack));
  const standard = (await stack.services.plans.get('standard'))!;
  await stack.services.plans.put([{ ...standard, plan_id: 'mixed_limited', name: 'Mixed limited', rate_limit_per_minute: RATE_LIMIT }]);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const TERMINALS = Object.values(TERMINAL_EVENT).flat();
const ALL_EVENTS = ['job.queued', 'job.processing', ...TERMINALS.filter((e, i, xs) => xs.indexOf(e) === i)];
const CONVERSIONS = new Set(['/quickjob', '/longjob', '/bulkjob']);

interface Sent {
  who: string;
  route: string;
  label: string;
  status: number;
  code?: string;
  jobId?: string;
  startedAt: number;
  endedAt: number;
}

it(`keeps every invariant under mixed concurrent traffic (seed ${SEED})`, async () => {
  const random = rng(SEED);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  const pdf3 = Buffer.from(await simplePdf(3)).toString('base64');
  const pdf2 = Buffer.from(await simplePdf(2)).toString('base64');

  // Accounts: two with 7 PDFs' worth, a small subscription over 2 PDFs of credit, a rate-limited one, and one whose
  // traffic runs on a key revoked in the middle.
  const accounts: Record<string, TestAccount> = {
    tightA: await stack.account({ credits_usd: 0.07 }),
    tightB: await stack.account({ credits_usd: 0.07 }),
    sub: await stack.account({ plan_id: 'starter', credits_usd: 0.02, subscription: { name: 'Starter', monthly_pdfs: 6, price: 0.06 } }),
    limited: await stack.account({ plan_id: 'mixed_limited', credits_usd: 1 }),
    revoked: await stack.account({ credits_usd: 1 }),
  };
  const keyOf: Record<string, string> = Object.fromEntries(Object.entries(accounts).map(([k, a]) => [k, a.api_key]));
  const doomed = await (await stack.request('POST', '/accounts/me/api-keys', { token: accounts.revoked.id_token, json: { name: 'doomed' } })).json();
  keyOf.revoked = doomed.api_key;
  for (const who of ['tightB', 'sub', 'revoked']) {
    const res = await stack.request('POST', '/accounts/me/webhooks', { token: accounts[who].id_token, json: { url: `https://localhost:${receiver.port}/ok/${who}`, events: ALL_EVENTS } });
    expect(res.status).toBe(201);
  }
  // Uploads for background merge/split jobs, made before the burst.
  const uploads: Record<string, string[]> = {};
  for (const who of Object.keys(accounts)) {
    uploads[who] = [];
    for (let i = 0; i < 3; i++) {
      // Each job takes its uploads for itself (and deletes them), so merge and split get their own.
      const bytes = await simplePdf(2 + i);
      const up = await (await stack.request('POST', '/pdf/upload-url', { key: accounts[who].api_key, json: { content_length_bytes: bytes.length } })).json();
      expect((await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(bytes) })).status).toBe(200);
      uploads[who].push(up.s3_key);
    }
  }
  const before = Object.fromEntries(await Promise.all(Object.entries(accounts).map(async ([who, a]) => [who, (await stateOf(a.account_id)).account] as const)));

  const zip = (n: number) =>
    rawZip(Array.from({ length: n }, (_, i) => ({ name: `d/f${i}.html`, data: `<h1>file ${i}</h1><link rel="stylesheet" href="/s.css">` })).concat([{ name: 's.css', data: 'h1{color:#333}' }])).toString('base64');
  const longHtml = (pages: number) => Array.from({ length: pages }, (_, i) => `<section style="page-break-after:always">p${i}</section>`).join('');

  type Op = { route: string; label: string; json?: unknown; method?: string };
  const kinds: (() => Op)[] = [
    () => ({ route: '/quickjob', label: 'quick html', json: { input_type: 'html', html: '<h1>q</h1>' } }),
    () => ({ route: '/quickjob', label: 'quick html store', json: { input_type: 'html', html: '<h1>q</h1>', store: true } }),
    () => ({ route: '/quickjob', label: 'quick markdown', json: { input_type: 'markdown', markdown: '# m\n\ntext' } }),
    () => ({ route: '/quickjob', label: 'quick markdown store', json: { input_type: 'markdown', markdown: '# m', store: true } }),
    () => ({ route: '/quickjob', label: 'quick over 25 pages', json: { input_type: 'html', html: longHtml(30) } }),
    () => ({ route: '/quickjob', label: 'quick bad options', json: { input_type: 'html', html: '<p>x</p>', options: { scale: 'big' } } }),
    () => ({ route: '/longjob', label: 'long html', json: { input_type: 'html', html: longHtml(2) } }),
    () => ({ route: '/longjob', label: 'long markdown', json: { input_type: 'markdown', markdown: '# long' } }),
    () => ({ route: '/longjob', label: 'long over 100 pages', json: { input_type: 'html', html: longHtml(105) } }),
    () => ({ route: '/bulkjob', label: 'bulk 2', json: { zip_base64: zip(2) } }),
    () => ({ route: '/bulkjob', label: 'bulk 3', json: { zip_base64: zip(3) } }),
    () => ({ route: '/pdf/merge', label: 'merge', json: { inputs: [{ pdf_base64: pdf2 }, { pdf_base64: pdf3 }] } }),
    () => ({ route: '/pdf/split', label: 'split', json: { input: { pdf_base64: pdf3 }, split: { mode: 'each_page' } } }),
  ];
  const ops: { who: string; op: Op | 'cancel' | 'revoke' | 'bgmerge' | 'bgsplit' }[] = [];
  for (const who of Object.keys(accounts)) {
    for (let i = 0; i < 10; i++) ops.push({ who, op: pick(kinds)() });
    // Every account gets each kind of background work at least once.
    ops.push({ who, op: kinds[9]() }, { who, op: kinds[6]() }, { who, op: 'bgmerge' }, { who, op: 'bgsplit' }, { who, op: 'cancel' }, { who, op: 'cancel' });
  }
  ops.push({ who: 'revoked', op: 'revoke' });
  for (let i = ops.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [ops[i], ops[j]] = [ops[j], ops[i]];
  }

  const sent: Sent[] = [];
  const bulkOf = new Map<string, string[]>(); // who → bulk jobs answered 202
  let revokedAt = Infinity;
  const send = async (who: string, route: string, label: string, init: { json?: unknown; method?: string; token?: boolean }) => {
    const startedAt = Date.now();
    const res = await stack.request(init.method ?? 'POST', route, init.token ? { token: accounts[who].id_token, json: init.json } : { key: keyOf[who], json: init.json });
    const ct = res.headers.get('content-type') ?? '';
    const body: any = ct.includes('json') ? await res.json() : (await res.arrayBuffer(), null);
    const s: Sent = { who, route, label, status: res.status, code: body?.error?.code, jobId: res.headers.get('x-job-id') ?? body?.job_id, startedAt, endedAt: Date.now() };
    sent.push(s);
    if (s.jobId && res.status === 202 && route === '/bulkjob') bulkOf.set(who, [...(bulkOf.get(who) ?? []), s.jobId]);
    return { s, body };
  };
  const run = async ({ who, op }: (typeof ops)[number]) => {
    // Spread over a few hundred ms so that cancels and the revocation land mid-flight.
    await new Promise((r) => setTimeout(r, Math.floor(random() * 1500)));
    if (op === 'revoke') {
      const res = await stack.request('DELETE', `/accounts/me/api-keys/${doomed.api_key_id}`, { token: accounts.revoked.id_token });
      expect(res.status).toBe(200);
      revokedAt = Date.now();
      return;
    }
    if (op === 'cancel') {
      // A bulk job of this account once one was accepted (queued, running or already done by then).
      const end = Date.now() + 15_000;
      while (!bulkOf.get(who)?.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      const jobs = bulkOf.get(who) ?? [];
      if (!jobs.length) return;
      await new Promise((r) => setTimeout(r, Math.floor(random() * 400)));
      await send(who, `/jobs/${pick(jobs)}/cancel`, 'cancel', {});
      return;
    }
    if (op === 'bgmerge' || op === 'bgsplit') {
      const [a, b, c] = uploads[who];
      const json =
        op === 'bgmerge'
          ? { operation: 'merge', inputs: [{ s3_key: a, filename: 'a.pdf' }, { s3_key: b, filename: 'b.pdf' }] }
          : { operation: 'split', inputs: [{ s3_key: c, filename: 'c.pdf' }], split: { mode: 'each_page' } };
      await send(who, '/pdf/jobs', op, { json });
      return;
    }
    await send(who, op.route, op.label, { json: op.json });
  };
  const burstStart = Date.now();
  await Promise.all(ops.map(run));
  const burstEnd = Date.now();

  // Let everything end: queues and workflows, then the sweepers past their delays (clock moved on).
  expect(await settle(60_000)).toBe(true);
  for (const minutes of [3, 20, 50]) {
    ahead = minutes;
    await startSweep();
    await outboxSweep();
    expect(await settle()).toBe(true);
  }
  ahead = 0;

  const stored = new Set(sent.filter((s) => s.label.endsWith(' store') && s.jobId).map((s) => s.jobId));
  const background = new Set(sent.filter((s) => s.route === '/pdf/jobs' && s.jobId).map((s) => s.jobId));
  const problems: string[] = [];
  const p = (who: string, msg: string) => problems.push(`${who}: ${msg}`);
  for (const s of sent) if (s.status >= 500) p(s.who, `${s.label} answered ${s.status} ${s.code}`);

  for (const [who, acct] of Object.entries(accounts)) {
    const st = await stateOf(acct.account_id);
    const b = before[who];
    const live = st.charges.filter((c) => !c.refunded_at);
    const sum = (xs: Record<string, any>[], f: string) => xs.reduce((t, c) => t + Number(c[f] ?? 0), 0);
    const spent = (bucket: string) => sum(live.filter((c) => c.bucket === bucket), 'amount_micros');

    // Balances: never negative, moved exactly by the standing ledger.
    if (st.account.credits_micros < 0) p(who, `credits ${st.account.credits_micros} < 0`);
    if ((st.account.free_credits_micros ?? 0) < 0) p(who, 'free credits < 0');
    if ((st.account.subscription?.allowance_micros ?? 0) < 0) p(who, 'allowance < 0');
    if (st.account.credits_micros !== b.credits_micros - spent('credits')) p(who, `credits ${st.account.credits_micros} ≠ ${b.credits_micros} − ledger ${spent('credits')}`);
    if ((st.account.free_credits_micros ?? 0) !== (b.free_credits_micros ?? 0) - spent('free_credits')) p(who, 'free credits ≠ ledger');
    if ((st.account.subscription?.allowance_micros ?? 0) !== (b.subscription?.allowance_micros ?? 0) - spent('subscription'))
      p(who, `allowance ${st.account.subscription?.allowance_micros} ≠ ${b.subscription?.allowance_micros} − ledger ${spent('subscription')}`);
    const pdfs = (st.account.total_pdf_count ?? 0) - (b.total_pdf_count ?? 0);
    if (pdfs !== sum(live, 'pdf_count')) p(who, `total_pdf_count moved ${pdfs}, ledger ${sum(live, 'pdf_count')}`);
    if ((st.account.total_amount_micros ?? 0) - (b.total_amount_micros ?? 0) !== sum(live, 'amount_micros')) p(who, 'total_amount ≠ ledger');

    // Charges belong to succeeded jobs; successes are charged exactly once (per file for bulk).
    const jobIds = new Set(st.jobs.map((j) => j.job_id));
    for (const c of live) if (!jobIds.has(c.job_id)) p(who, `charge ${c.sk} for no job`);
    for (const job of st.jobs) {
      const charged = live.filter((c) => c.job_id === job.job_id);
      const count = sum(charged, 'pdf_count');
      const tag = `${job.job_type} job ${job.job_id} (${job.status})`;
      if (job.status === 'queued' || job.status === 'processing') p(who, `${tag} left running`);
      if (['failed', 'timeout'].includes(job.status) && charged.length) p(who, `${tag} charged`);
      if (job.job_type === 'bulk') {
        if (count !== (job.success_count ?? 0)) p(who, `${tag}: ${count} PDFs charged for ${job.success_count} successes`);
      } else if (job.job_type === 'pdfop') {
        if (job.status === 'completed' && charged.length !== 1) p(who, `${tag} has ${charged.length} charges`);
      } else if (job.status === 'completed') {
        if (count !== 1) p(who, `${tag}: ${count} PDFs charged`);
        if (!job.output && (job.job_type !== 'quick' || stored.has(job.job_id))) p(who, `${tag} completed without an output`);
      }

      // Events: unique, one terminal matching the status, none pending.
      const evs = st.events.get(job.job_id) ?? [];
      const names = evs.map((e) => e.event as string);
      if (new Set(names).size !== names.length) p(who, `${tag} duplicate events ${names.join(',')}`);
      const ends = names.filter((n) => TERMINALS.includes(n));
      if (job.job_type !== 'quick' && (ends.length !== 1 || !TERMINAL_EVENT[job.status]?.includes(ends[0]))) p(who, `${tag} end events [${names.join(',')}]`);
      if (evs.some((e) => e.gsi1pk)) p(who, `${tag} events left pending`);

      // The API agrees with the table.
      const got = await (await stack.request('GET', `/jobs/${job.job_id}`, { key: acct.api_key })).json();
      if (got.status !== job.status) p(who, `${tag}: GET /jobs/{id} says ${got.status}`);
      if (got.job_type === 'bulk' && got.success_count !== job.success_count) p(who, `${tag}: GET success_count ${got.success_count}`);
    }
    // The list shows every job with the same status.
    const listed: Record<string, any>[] = [];
    let next: string | null = null;
    do {
      const page: any = await (await stack.request('GET', `/jobs?limit=100${next ? `&next_token=${encodeURIComponent(next)}` : ''}`, { token: acct.id_token })).json();
      listed.push(...page.jobs);
      next = page.next_token;
    } while (next);
    if (listed.length !== st.jobs.length) p(who, `list has ${listed.length} jobs, table ${st.jobs.length}`);
    for (const l of listed) {
      const job = st.jobs.find((j) => j.job_id === l.job_id);
      if (!job || job.status !== l.status) p(who, `listed ${l.job_id} as ${l.status}, table ${job?.status}`);
    }

    // Webhook deliveries: each job's terminal event delivered (distinct event ids) exactly once in kind, matching.
    if (['tightB', 'sub', 'revoked'].includes(who)) {
      const mine = deliveries.filter((d) => d.path === `/ok/${who}`);
      for (const job of st.jobs.filter((j) => j.job_type !== 'quick')) {
        const ends = new Map(mine.filter((d) => d.body?.job_id === job.job_id && TERMINALS.includes(d.body.event)).map((d) => [d.body.event_id, d.body]));
        const list = [...ends.values()];
        if (list.length !== 1 || list[0].status !== job.status) p(who, `${job.job_type} job ${job.job_id} (${job.status}) terminal deliveries: ${list.map((e) => `${e.event}/${e.status}`).join(',') || 'none'}`);
      }
      for (const d of mine) if (!jobIds.has(d.body?.job_id)) p(who, `delivery for unknown job ${d.body?.job_id}`);
    }

    // Nothing held.
    const ended = new Set(st.jobs.filter((j) => j.status !== 'queued' && j.status !== 'processing').map((j) => j.job_id));
    for (const slot of st.slots) if (ended.has(slot.job_id) || !jobIds.has(slot.job_id)) p(who, `slot ${slot.sk} still held by ${slot.job_id}`);
    for (const s of st.starts) if (ended.has(s.job_id)) p(who, `start record of ended job ${s.job_id} left`);
    if (Object.keys(st.account.commitments ?? {}).length) p(who, `commitments left: ${Object.keys(st.account.commitments).join(',')}`);

    // API billing summary agrees with the table.
    const billing = (await (await stack.request('GET', '/accounts/me/billing', { token: acct.id_token })).json()).billing;
    if (billing.total_pdf_count !== st.account.total_pdf_count) p(who, `billing total_pdf_count ${billing.total_pdf_count} ≠ ${st.account.total_pdf_count}`);

    // Every answer that named a job names one in the table; a 200 quick answer's job completed.
    for (const s of sent.filter((x) => x.who === who && x.jobId)) {
      const job = st.jobs.find((j) => j.job_id === s.jobId);
      if (!job) p(who, `${s.label} answered ${s.status} with unknown job ${s.jobId}`);
      else if (s.route === '/quickjob' && s.status === 200 && job.status !== 'completed') p(who, `${s.label} answered 200, job ${job.status}`);
    }
    // Requests that must fail did, with the spec's code.
    for (const s of sent.filter((x) => x.who === who)) {
      if (s.status === 401) continue;
      if (s.label === 'quick over 25 pages' && s.code !== 'PAGE_LIMIT_EXCEEDED' && s.code !== 'RATE_LIMIT_EXCEEDED' && s.code !== 'INSUFFICIENT_CREDITS') p(who, `${s.label}: ${s.status} ${s.code}`);
      if (s.label === 'long over 100 pages' && s.code !== 'PAGE_LIMIT_EXCEEDED' && s.code !== 'RATE_LIMIT_EXCEEDED' && s.code !== 'INSUFFICIENT_CREDITS') p(who, `${s.label}: ${s.status} ${s.code}`);
      if (s.label === 'quick bad options' && s.code !== 'INVALID_PARAMETER') p(who, `${s.label}: ${s.status} ${s.code}`);
      if (s.status === 409 && s.code === 'BULK_JOB_ALREADY_ACTIVE' && s.route !== '/bulkjob') p(who, `${s.label}: ${s.code}`);
      if (s.label === 'cancel' && ![200, 202, 409].includes(s.status) && s.status !== 401) p(who, `cancel answered ${s.status} ${s.code}`);
    }
  }

  // Plan limits. Rate: the conversions let through within the calendar minutes the burst spanned.
  const minutes = Math.floor(burstEnd / 60_000) - Math.floor(burstStart / 60_000) + 1;
  const through = sent.filter((s) => s.who === 'limited' && CONVERSIONS.has(s.route) && s.code !== 'RATE_LIMIT_EXCEEDED' && s.status !== 400).length;
  if (through > RATE_LIMIT * minutes) problems.push(`limited: ${through} conversions through in ${minutes} minute(s), limit ${RATE_LIMIT}/min`);
  if (!sent.some((s) => s.code === 'RATE_LIMIT_EXCEEDED')) problems.push('limited: no request was rate limited');
  // The revoked key: nothing sent after the revocation answered got past the gateway.
  for (const s of sent.filter((x) => x.who === 'revoked' && x.startedAt > revokedAt)) if (s.status !== 401) problems.push(`revoked key: ${s.label} sent after the revocation answered ${s.status}`);
  // Active bulk jobs and merge/split jobs: never more than 2 at once per account (created → completed intervals).
  for (const [who, acct] of Object.entries(accounts)) {
    const st = await stateOf(acct.account_id);
    for (const type of ['bulk', 'pdfop']) {
      const spans = st.jobs.filter((j) => j.job_type === type && j.completed_at && (type === 'bulk' || background.has(j.job_id))).map((j) => [Date.parse(j.created_at), Date.parse(j.completed_at)]);
      for (const [s] of spans) {
        const open = spans.filter(([a, e]) => a <= s && s < e).length;
        if (open > 2) problems.push(`${who}: ${open} ${type} jobs active at ${new Date(s).toISOString()}`);
      }
    }
  }

  if (process.env.MIXED_LOAD_VERBOSE) {
    const tally = new Map<string, number>();
    for (const s of sent) tally.set(`${s.label} ${s.status} ${s.code ?? ''}`, (tally.get(`${s.label} ${s.status} ${s.code ?? ''}`) ?? 0) + 1);
    console.log([...tally].sort().map(([k, n]) => `${n}× ${k}`).join('\n'));
  }
  if (problems.length) console.log(`mixed load, seed ${SEED}:\n${problems.join('\n')}\nanswers:\n${sent.map((s) => `${s.who} ${s.label} ${s.status} ${s.code ?? ''}`).join('\n')}`);
  expect({ seed: SEED, problems }).toEqual({ seed: SEED, problems: [] });
}, 150_000);
