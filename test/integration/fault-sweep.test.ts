import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../../functions/adapters/dynamodb/client';
import { keys } from '../../functions/adapters/dynamodb/schema';
import { handler as startSweep } from '../../functions/workers/jobs/start-sweep';
import { handler as outboxSweep } from '../../functions/workers/webhooks/sweep';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { type TableCommand, interceptTable, tableError } from '../support/table-faults';
import { rawZip } from '../support/zips';

/**
 * A fault-injection sweep of the write paths. Each path runs once cleanly to list the commands it sends (DynamoDB
 * and S3 puts, named by kind: `TransactWrite[PCHARGE,UACCOUNT,PJOB:completed]`); then once per command with that
 * command failing, and once per write with the write going through and its reply lost. After the answer, the
 * background work (queues, workflows) and the sweepers (start, outbox; clock moved past their delays) settle, and
 * the table must hold what the service promises: balances and usage counters equal the ledger's non-refunded
 * entries, no charge for a job that did not complete, no job left queued or processing, each job's events once with
 * its end among them and none left pending, counts equal their items, and the answer agrees with what was kept.
 */

type Fault = 'fail' | 'lost';
const WRITES = /^(Put|Update|Delete|TransactWrite|BatchWrite|S3\.put)/;
const kindOf = (k: unknown) => String(k ?? '').split('#')[0];

/** A command named by what it touches, the same in every run of a path (ids left out). */
function label(cmd: TableCommand): string {
  const n = cmd.constructor.name.replace('Command', '');
  const i = cmd.input;
  const item = (x: any) => `${kindOf(x.Item?.sk ?? x.Key?.sk)}${x.Item?.status ? `:${x.Item.status}` : ''}`;
  if (n === 'TransactWrite') return `${n}[${i.TransactItems.map((t: any) => Object.keys(t)[0][0] + item(Object.values(t)[0])).join(',')}]`;
  if (n === 'Put' || n === 'Update' || n === 'Delete' || n === 'Get') return `${n}(${item(i)})`;
  if (n === 'Query') {
    const v = i.ExpressionAttributeValues ?? {};
    return `${n}(${kindOf(v[':pk'])}${v[':prefix'] ? `,${kindOf(v[':prefix'])}` : ''}${String(v[':pk']).endsWith('S') ? `,${String(v[':pk']).split('#').pop()}` : ''})`;
  }
  if (n === 'BatchWrite') return `${n}(${(Object.values(i.RequestItems).flat() as any[]).map((r) => Object.keys(r)[0][0] + kindOf((r.PutRequest?.Item ?? r.DeleteRequest?.Key).sk)).join(',')})`;
  if (n === 'BatchGet') return n;
  return n;
}

interface Run {
  res: Response;
  body: any;
  user: TestAccount;
  ctx: Record<string, any>;
}

interface Scenario {
  name: string;
  /** Run through ID token routes and other state before the request (not faulted). */
  setup?: (u: TestAccount) => Promise<Record<string, any>>;
  request: (u: TestAccount, ctx: Record<string, any>) => Promise<Response>;
  /** Path-specific agreement between the answer and what was kept; returns problems. */
  agrees?: (run: Run, state: State) => Promise<string[]> | string[];
  /** Also fault the gateway's credential commands (once is enough: they are the same on every route). */
  authToo?: boolean;
  /** Extra balance to start with. */
  credits?: number;
  /** The request asked to store its PDF: a completed job whose upload failed is answered with null links, uncharged (the spec's rule). */
  store?: boolean;
}

interface State {
  account: Record<string, any>;
  charges: Record<string, any>[];
  jobs: Record<string, any>[];
  events: Map<string, Record<string, any>[]>;
  slots: Record<string, any>[];
  starts: Record<string, any>[];
  files: Map<string, Record<string, any>[]>;
  items: Record<string, any>[];
}

describe('fault sweep of the write paths', () => {
  let stack: TestStack;
  let ahead = 0;
  let db: ReturnType<typeof createDynamo>;
  // The sweep's hook state.
  let active = false;
  let record: string[] = [];
  let seen = new Map<string, number>();
  let target: { label: string; n: number; fault: Fault } | null = null;
  let fired = false;
  let blobPuts: string[] = [];
  let blobDeletes: string[] = [];

  /** Whether this command is the one to fault (counted by label and occurrence); records it. */
  function pick(l: string): Fault | null {
    if (!active) return null;
    record.push(l);
    const n = (seen.get(l) ?? 0) + 1;
    seen.set(l, n);
    if (!fired && target && target.label === l && target.n === n) {
      fired = true;
      return target.fault;
    }
    return null;
  }
  const lostReply = () => tableError('socket hang up', 'TimeoutError');

  beforeAll(async () => {
    stack = await startTestStack(
      { LOCAL_SFN_RETRY_MS: '0', LOCAL_SCHEDULE_INTERVAL_MS: '3600000', LOCAL_QUEUE_RETRY_MS: '50', WEBHOOK_DEFER_SECONDS: '1', LONGJOB_DEFER_SECONDS: '1' },
      { clock: { now: () => new Date(Date.now() + ahead * 60_000) } },
    );
    const { config } = stack.services;
    db = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });
    interceptTable(stack).hook = (cmd, send) => {
      const fault = pick(label(cmd));
      if (fault === 'fail') return Promise.reject(tableError());
      if (fault === 'lost')
        return send(cmd).then(() => {
          throw lostReply();
        });
      return undefined;
    };
    const blobs = stack.services.blobs as any;
    for (const method of ['put', 'putParts'] as const) {
      const original = blobs[method].bind(blobs);
      blobs[method] = async (key: string, ...rest: unknown[]) => {
        const fault = pick(`S3.${method}(${key.split('/')[0]})`);
        if (fault === 'fail') throw Object.assign(new Error('injected S3 outage'), { name: 'InternalError' });
        await original(key, ...rest);
        if (active) blobPuts.push(key);
        if (fault === 'lost') throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      };
    }
    const originalDelete = blobs.delete.bind(blobs);
    blobs.delete = async (key: string) => {
      await originalDelete(key);
      blobDeletes.push(key);
    };
  });
  afterAll(() => stack?.stop());

  async function query(pk: string, index?: 'gsi1'): Promise<Record<string, any>[]> {
    const out: Record<string, any>[] = [];
    let start: Record<string, any> | undefined;
    do {
      const page = await db.doc.send(
        new QueryCommand({
          TableName: db.table,
          IndexName: index,
          KeyConditionExpression: index ? 'gsi1pk = :pk' : 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ExclusiveStartKey: start,
          ConsistentRead: index ? undefined : true,
        }),
      );
      out.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return out;
  }

  async function stateOf(accountId: string): Promise<State> {
    const items = await query(keys.account(accountId).pk);
    const jobs = await Promise.all((await query(keys.jobsOfAccount(accountId), 'gsi1')).map(async (j) => (await query(keys.job(j.job_id).pk)).find((i) => i.sk === 'JOB')!));
    const events = new Map<string, Record<string, any>[]>();
    const files = new Map<string, Record<string, any>[]>();
    const starts: Record<string, any>[] = [];
    for (const job of jobs) {
      const all = await query(keys.job(job.job_id).pk);
      events.set(job.job_id, all.filter((i) => i.sk.startsWith('EVENT#')).sort((a, b) => a.event_id.localeCompare(b.event_id)));
      files.set(job.job_id, all.filter((i) => i.sk.startsWith('FILE#')));
      starts.push(...all.filter((i) => i.sk === 'START'));
    }
    return {
      account: items.find((i) => i.sk === 'ACCOUNT')!,
      charges: items.filter((i) => i.sk.startsWith('CHARGE#')),
      slots: items.filter((i) => i.sk.startsWith('SLOT#') && i.job_id),
      jobs,
      events,
      files,
      starts,
      items,
    };
  }

  /** Waits for the queues and workflows to have nothing left; false when they still work after `ms`. */
  async function settle(ms = 8000): Promise<boolean> {
    const done = (async () => {
      for (let i = 0; i < 3; i++) {
        await stack.workflows.idle();
        for (const q of stack.queues.values()) await q.drained();
      }
      return true;
    })();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const settled = await Promise.race([done, late]);
    clearTimeout(timer);
    return settled;
  }

  /** The sweepers, past the delays after which they act (a start after 2 minutes, a lease's end, a workflow watch). */
  async function sweepLater(): Promise<boolean> {
    let settled = false;
    for (const minutes of [3, 20, 40]) {
      ahead = minutes;
      await startSweep();
      await outboxSweep();
      settled = await settle();
    }
    ahead = 0;
    return settled;
  }

  const TERMINAL_EVENT: Record<string, string[]> = {
    completed: ['job.completed', 'bulk.job.completed'],
    partial_failed: ['bulk.job.partial'],
    failed: ['job.failed', 'bulk.job.failed'],
    timeout: ['job.failed'],
    cancelled: ['bulk.job.cancelled'],
  };

  /** What must hold after any run, whatever the answer. */
  function invariants(before: Record<string, any>, s: State, sc: Scenario): string[] {
    const problems: string[] = [];
    const live = s.charges.filter((c) => !c.refunded_at);
    const sum = (xs: Record<string, any>[], f: string) => xs.reduce((t, c) => t + Number(c[f] ?? 0), 0);
    const spent = (bucket: string) => sum(live.filter((c) => c.bucket === bucket), 'amount_micros');
    if (s.account.credits_micros !== before.credits_micros - spent('credits')) problems.push(`credits ${s.account.credits_micros} ≠ ${before.credits_micros} − ledger ${spent('credits')}`);
    if ((s.account.free_credits_micros ?? 0) !== (before.free_credits_micros ?? 0) - spent('free_credits')) problems.push('free credits ≠ ledger');
    if ((s.account.total_pdf_count ?? 0) - (before.total_pdf_count ?? 0) !== sum(live, 'pdf_count')) problems.push(`total_pdf_count moved ${(s.account.total_pdf_count ?? 0) - (before.total_pdf_count ?? 0)}, ledger ${sum(live, 'pdf_count')}`);
    if ((s.account.total_amount_micros ?? 0) - (before.total_amount_micros ?? 0) !== sum(live, 'amount_micros')) problems.push('total_amount ≠ ledger');
    if (s.account.credits_micros < 0) problems.push('negative credits');
    for (const job of s.jobs) {
      const charged = live.filter((c) => c.job_id === job.job_id);
      if (job.status === 'queued' || job.status === 'processing') problems.push(`job ${job.job_type} left ${job.status}`);
      if (job.status !== 'completed' && job.status !== 'partial_failed' && job.status !== 'cancelled' && charged.length > 0) problems.push(`${job.status} job charged`);
      if ((job.status === 'completed' || job.status === 'partial_failed') && charged.length === 0 && !(sc.store && job.job_type === 'quick' && !job.output)) problems.push(`${job.status} job not charged`);
      const names = (s.events.get(job.job_id) ?? []).map((e) => e.event);
      if (new Set(names).size !== names.length) problems.push(`duplicate events ${names.join(',')}`);
      const ends = names.filter((n) => Object.values(TERMINAL_EVENT).flat().includes(n));
      // Quick jobs emit no events: they have answered already.
      if (job.job_type !== 'quick' && (ends.length !== 1 || !TERMINAL_EVENT[job.status]?.includes(ends[0]))) problems.push(`${job.status} job's end events: [${names.join(',')}]`);
      const pending = (s.events.get(job.job_id) ?? []).filter((e) => e.gsi1pk);
      if (pending.length) problems.push(`events left pending: ${pending.map((e) => e.event).join(',')}`);
    }
    const ended = new Set(s.jobs.filter((j) => j.status !== 'queued' && j.status !== 'processing').map((j) => j.job_id));
    for (const slot of s.slots) if (ended.has(slot.job_id) || !s.jobs.some((j) => j.job_id === slot.job_id)) problems.push(`slot ${slot.sk} still held`);
    for (const st of s.starts) if (ended.has(st.job_id)) problems.push('start record/watch of an ended job left');
    if (Object.keys(s.account.commitments ?? {}).length) problems.push(`commitments left: ${Object.keys(s.account.commitments).join(',')}`);
    return problems;
  }

  /** Objects the run stored and did not remove, that no job which completed refers to. */
  function strayObjects(s: State): string[] {
    const kept = new Set<string>();
    for (const job of s.jobs) {
      if (job.output?.key) kept.add(job.output.key);
      for (const f of s.files.get(job.job_id) ?? []) if (f.output_key ?? f.output?.key) kept.add(f.output_key ?? f.output.key);
      if (job.status === 'completed' && job.s3_key) kept.add(job.s3_key);
    }
    const deleted = new Set(blobDeletes);
    return blobPuts.filter((k) => !deleted.has(k) && !k.startsWith('inputs/') && ![...kept].some((x) => k === x));
  }

  async function runOnce(sc: Scenario, plan: typeof target): Promise<{ status: number; problems: string[]; notes: string[]; fired: boolean; record: string[]; stray: string[] }> {
    const user = await stack.account({ credits_usd: sc.credits ?? 5 });
    const ctx = (await sc.setup?.(user)) ?? {};
    const before = (await stateOf(user.account_id)).account;
    [record, seen, target, fired, blobPuts, blobDeletes] = [[], new Map(), plan, false, [], []];
    active = true;
    let res: Response;
    let body: any;
    let settled = false;
    try {
      res = await sc.request(user, ctx);
      const text = await res.text();
      try {
        body = JSON.parse(text);
      } catch {
        body = text.slice(0, 5);
      }
      settled = await settle();
    } finally {
      active = false;
    }
    const settledLater = await sweepLater();
    const state = await stateOf(user.account_id);
    const problems = invariants(before, state, sc);
    if (!settled) problems.push(`background work still running 8 s after the answer${settledLater ? ' (it ended once the clock moved on)' : ''}`);
    if (!settledLater) problems.push('background work still running after the sweeps');
    if (res.status >= 500 && body?.error?.code !== 'INTERNAL_SERVER_ERROR' && !String(body?.error?.code ?? '').match(/UNAVAILABLE|TIMEOUT|FAILED/)) problems.push(`5xx ${body?.error?.code}`);
    problems.push(...(await (sc.agrees?.({ res, body, user, ctx }, state) ?? [])));
    const stale = problems.filter((p) => p.startsWith('slot '));
    const notes: string[] = [];
    if (stale.length && problems.length === stale.length) {
      // A slot its ended job could not give back harms only if it holds the account's next job back: send that now.
      await sc.request(user, await (sc.setup?.(user) ?? {}));
      const next = await settle();
      const after = await stateOf(user.account_id);
      if (next && invariants(before, after, sc).length === 0) {
        problems.length = 0;
        notes.push('slot of the ended job left held, given back by the next job');
      } else problems.push('the next job of the account did not end in time');
    }
    return { status: res.status, problems, notes, fired, record: [...record], stray: strayObjects(state) };
  }

  const results: string[] = [];
  afterAll(() => {
    // The table of combinations run, for the report.
    console.log(results.join('\n'));
  });

  async function sweep(sc: Scenario) {
    const clean = await runOnce(sc, null);
    const violations: string[] = [];
    results.push(`${sc.name} | clean | - | ${clean.status} | ${clean.problems.join('; ') || 'ok'}`);
    if (clean.problems.length) violations.push(`clean: ${clean.problems.join('; ')}`);
    const counts = new Map<string, number>();
    const plans: { label: string; n: number; fault: Fault; k: number }[] = [];
    const auth = new Set(['Query(APIKEY)', 'Update(KEY)']);
    clean.record.forEach((l, k) => {
      const n = (counts.get(l) ?? 0) + 1;
      counts.set(l, n);
      if (auth.has(l) && !sc.authToo) return;
      const write = WRITES.test(l);
      // Reads fail alike wherever they are: the first of each kind; every write, both faults.
      if (write || n === 1) plans.push({ label: l, n, fault: 'fail', k });
      if (write) plans.push({ label: l, n, fault: 'lost', k });
    });
    for (const p of plans) {
      const out = await runOnce(sc, p);
      const line = `${sc.name} | ${p.k} ${p.label}#${p.n} | ${p.fault} | ${out.status} | ${out.fired ? out.problems.join('; ') || ['ok', ...out.notes].join(': ') : 'not reached'}${out.stray.length ? ` (stray objects: ${out.stray.join(',')})` : ''}`;
      results.push(line);
      if (process.env.FAULT_SWEEP_VERBOSE) process.stderr.write(`${line}\n`);
      if (out.problems.length) violations.push(line);
    }
    expect(violations).toEqual([]);
  }

  const html = (u: TestAccount, extra: Record<string, unknown> = {}) => stack.request('POST', '/quickjob', { key: u.api_key, json: { input_type: 'html', html: '<h1>x</h1>', ...extra } });
  const pdfB64 = async (pages: number) => Buffer.from(await simplePdf(pages)).toString('base64');
  const completedCharged = (s: State) => s.jobs.filter((j) => j.status === 'completed');
  /** A success answer names a job that completed and was charged; a failure leaves none completed (a 5xx the client cannot connect to a job). */
  const syncJob = (ok: number) => (run: Run, s: State) => {
    const done = completedCharged(s);
    if (run.res.status === ok) return done.length === 1 && (!run.body?.job_id || done[0].job_id === run.body.job_id) ? [] : [`${ok} but ${done.length} completed jobs`];
    return done.length ? [`answered ${run.res.status} ${run.body?.error?.code} but a job completed and was charged`] : [];
  };
  /** An accepted background job exists and ended; a refused one left no job that ran. */
  const asyncJob = (run: Run, s: State) => {
    if (run.res.status === 202) return s.jobs.some((j) => j.job_id === run.body.job_id) ? [] : ['202 but no job'];
    return s.jobs.filter((j) => j.status === 'completed').length ? [`answered ${run.res.status} ${run.body?.error?.code} but a job ran and was charged`] : [];
  };

  const uploadPdf = async (u: TestAccount, pages: number) => {
    const bytes = await simplePdf(pages);
    const up = await (await stack.request('POST', '/pdf/upload-url', { key: u.api_key, json: { content_length_bytes: bytes.length } })).json();
    expect((await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(bytes) })).status).toBe(200);
    return up.s3_key as string;
  };

  const SCENARIOS: Scenario[] = [
    { name: 'POST /quickjob html', request: (u) => html(u), agrees: syncJob(200), authToo: true },
    { name: 'POST /quickjob store', request: (u) => html(u, { store: true }), agrees: syncJob(200), store: true },
    { name: 'POST /longjob', request: (u) => stack.request('POST', '/longjob', { key: u.api_key, json: { input_type: 'html', html: '<h1>x</h1>', email_notification: false } }), agrees: asyncJob },
    {
      name: 'POST /bulkjob',
      request: (u) =>
        stack.request('POST', '/bulkjob', { key: u.api_key, json: { zip_base64: rawZip([0, 1].map((i) => ({ name: `f${i}.html`, data: `<p>${i}</p>` }))).toString('base64') } }),
      agrees: asyncJob,
    },
    { name: 'POST /pdf/merge', request: async (u) => stack.request('POST', '/pdf/merge', { key: u.api_key, json: { inputs: [{ pdf_base64: await pdfB64(2) }, { pdf_base64: await pdfB64(1) }] } }), agrees: syncJob(200) },
    {
      name: 'POST /pdf/merge store',
      request: async (u) => stack.request('POST', '/pdf/merge', { key: u.api_key, json: { inputs: [{ pdf_base64: await pdfB64(2) }, { pdf_base64: await pdfB64(1) }], store: true } }),
      agrees: syncJob(200),
    },
    { name: 'POST /pdf/split', request: async (u) => stack.request('POST', '/pdf/split', { key: u.api_key, json: { input: { pdf_base64: await pdfB64(3) }, split: { mode: 'each_page' } } }), agrees: syncJob(200) },
    {
      name: 'POST /pdf/jobs merge',
      setup: async (u) => ({ a: await uploadPdf(u, 2), b: await uploadPdf(u, 1) }),
      request: (u, c) => stack.request('POST', '/pdf/jobs', { key: u.api_key, json: { operation: 'merge', inputs: [{ s3_key: c.a, filename: 'a.pdf' }, { s3_key: c.b, filename: 'b.pdf' }] } }),
      agrees: asyncJob,
    },
    {
      name: 'POST /pdf/jobs split',
      setup: async (u) => ({ a: await uploadPdf(u, 3) }),
      request: (u, c) => stack.request('POST', '/pdf/jobs', { key: u.api_key, json: { operation: 'split', input: { s3_key: c.a, filename: 'a.pdf' }, split: { mode: 'each_page' } } }),
      agrees: asyncJob,
    },
  ];

  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', (_name, sc) => sweep(sc), 300_000);
});
