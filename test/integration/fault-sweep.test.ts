import { keys } from '../../functions/adapters/dynamodb/schema';
import { handler as startSweep } from '../../functions/workers/jobs/start-sweep';
import { handler as outboxSweep } from '../../functions/workers/webhooks/sweep';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { type AccountState as State, TERMINAL_EVENT, settled, tableReader } from '../support/table-state';
import { PRICES, type StripeDouble, startStripeDouble } from '../support/stripe-double';
import { type TableCommand, interceptTable, tableError } from '../support/table-faults';
import { rawZip } from '../support/zips';

/**
 * A fault-injection sweep of the write paths. Each path runs once cleanly to list the commands it sends (DynamoDB
 * and S3 puts, named by kind: `TransactWrite[PCHARGE,UACCOUNT,PJOB:completed]`); then once per command with that
 * command failing, and once per write with the write going through and its reply lost. After the answer, the
 * background work (queues, workflows) and the sweepers (start, outbox; clock moved past their delays) settle, and
 * the table must hold what the service promises: balances and usage counters equal the ledger's non-refunded
 * entries, no charge for a job that did not complete, no job left queued or processing, each job's events once with
 * its end among them and none left pending, counts equal their items, no stored object that no job keeps, and the
 * answer agrees with what was kept. A slot or credit commitment an ended job could not give back passes only if the
 * account's next request (the same one again after a failure) is not held back by it. FAULT_SWEEP_VERBOSE=1 prints
 * each combination as it runs; the whole table is printed at the end.
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
    const listing = /#(APIKEYS|WEBHOOKS|JOBS)$/.exec(String(v[':pk']))?.[1];
    return `${n}(${kindOf(v[':pk'])}${v[':prefix'] ? `,${kindOf(v[':prefix'])}` : ''}${listing ? `,${listing}` : ''})`;
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
  /** The account to start with (POST /_local/accounts body) instead of one with `credits`. */
  account?: Record<string, unknown>;
  /** Balances move by Stripe's events, not by the ledger: the scenario's own check says what they must be. */
  payments?: boolean;
  /** The request asked to store its PDF: a completed job whose upload failed is answered with null links, uncharged (the spec's rule). */
  store?: boolean;
}

describe('fault sweep of the write paths', () => {
  let stack: TestStack;
  let double: StripeDouble;
  let ahead = 0;
  let stateOf: (accountId: string) => Promise<State>;
  let query: ReturnType<typeof tableReader>['query'];
  const settle = (ms = 8000) => settled(stack, ms);
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
    double = await startStripeDouble();
    stack = await startTestStack(
      { ...double.env(), LOCAL_SFN_RETRY_MS: '0', LOCAL_SCHEDULE_INTERVAL_MS: '3600000', LOCAL_QUEUE_RETRY_MS: '50', WEBHOOK_DEFER_SECONDS: '1', LONGJOB_DEFER_SECONDS: '1' },
      { clock: { now: () => new Date(Date.now() + ahead * 60_000) } },
    );
    ({ stateOf, query } = tableReader(stack));
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
  afterAll(async () => {
    await stack?.stop();
    await double?.stop();
  });

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

  /** What must hold after any run, whatever the answer. */
  function invariants(before: Record<string, any>, s: State, sc: Scenario): string[] {
    const problems: string[] = [];
    const live = s.charges.filter((c) => !c.refunded_at);
    const sum = (xs: Record<string, any>[], f: string) => xs.reduce((t, c) => t + Number(c[f] ?? 0), 0);
    const spent = (bucket: string) => sum(live.filter((c) => c.bucket === bucket), 'amount_micros');
    if (sc.payments) return problems.concat(s.jobs.length ? ['a job was made'] : []);
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
    const named = JSON.stringify(s.jobs.filter((j) => j.status === 'completed').map((j) => [j, s.files.get(j.job_id)]));
    const deleted = new Set(blobDeletes);
    const live = JSON.stringify(s.jobs.filter((j) => j.status === 'queued' || j.status === 'processing' || j.status === 'completed'));
    return blobPuts.filter((k) => !deleted.has(k) && !named.includes(k.split('/').pop()!) && !live.includes(k));
  }

  async function runOnce(sc: Scenario, plan: typeof target): Promise<{ status: number; problems: string[]; notes: string[]; fired: boolean; record: string[]; stray: string[] }> {
    const user = await stack.account(sc.account ?? { credits_usd: sc.credits ?? 5 });
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
    // A slot or credit commitment its ended job could not give back is dropped by the account's next submission
    // (acquireSlot, commitWholeJob): it harms only if it holds the next request back. The client's next step is
    // sent now: the same request again after a failure (same uploads), a new one after a success.
    const healable = (p: string) => p.startsWith('slot ') || p.startsWith('commitments left');
    const notes: string[] = [];
    if (problems.length && problems.every(healable)) {
      const next = await sc.request(user, res.status < 300 ? ((await sc.setup?.(user)) ?? {}) : ctx);
      const nextBody = await next.json().catch(() => null);
      const settledNext = await settle();
      const after = await stateOf(user.account_id);
      const open = after.jobs.filter((j) => j.status === 'queued' || j.status === 'processing');
      if (next.status < 300 && settledNext && open.length === 0) {
        notes.push(`${problems.join('; ')}: dropped by the next request`);
        problems.length = 0;
      } else problems.push(`the next request: ${next.status} ${nextBody?.error?.code ?? ''} ${open.length ? `${open.length} job(s) still running` : ''}`.trim());
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
    if (clean.problems.length || clean.status >= 300) violations.push(`clean: ${clean.status} ${clean.problems.join('; ')}`);
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
      // An object the run stored that no job kept (a failed store, a write whose reply was lost) is half-written work.
      if (out.stray.length) out.problems.push(`stray objects: ${out.stray.join(',')}`);
      const line = `${sc.name} | ${p.k} ${p.label}#${p.n} | ${p.fault} | ${out.status} | ${out.fired ? out.problems.join('; ') || ['ok', ...out.notes].join(': ') : 'not reached'}`;
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


  const DAY = 86_400_000;
  const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString();
  const cus = () => `cus_${Math.random().toString(36).slice(2, 12)}`;
  /** Stripe's delivery of one event: sent again (same id) after a 5xx, as Stripe retries, up to three times. */
  async function stripeDelivers(type: string, object: unknown): Promise<Response> {
    const id = `evt_${Math.random().toString(36).slice(2, 14)}`;
    let res!: Response;
    for (let i = 0; i < 3; i++) {
      const { payload, signature } = double.signedEvent(type, object, { id });
      res = await stack.request('POST', '/stripe/webhook', { body: payload, headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature } });
      if (res.status < 500) break;
      await res.arrayBuffer();
    }
    return res;
  }
  /** The key count item equals the account's keys. */
  async function keyCount(u: TestAccount, s: State): Promise<string[]> {
    const listed = await query(keys.apiKeysOfAccount(u.account_id), 'gsi1');
    const count = s.items.find((i) => i.sk === 'APIKEYS')?.key_count;
    return count === listed.length ? [] : [`key count ${count}, keys ${listed.length}`];
  }
  function webhookCount(s: State, listed: Record<string, any>[]): string[] {
    const count = s.items.find((i) => i.sk === 'WEBHOOKS')?.webhook_count;
    return (count ?? 0) === listed.length ? [] : [`webhook count ${count}, webhooks ${listed.length}`];
  }


  /** An account with a Starter subscription bought through checkout. */
  async function subscribed(u: TestAccount) {
    const customer = cus();
    const sub = double.subscription({ customer, price: PRICES.starter, periodStart: iso(Date.now() - DAY), periodEnd: iso(Date.now() + 29 * DAY) });
    expect((await stripeDelivers('checkout.session.completed', double.checkoutSession({ mode: 'subscription', accountId: u.account_id, customer, subscription: sub.id }))).status).toBe(200);
    return { sub };
  }
  /**
   * What the account shows agrees with Stripe once Stripe's own event about the change has come (it always follows a
   * change made through the API): the change answered 200 shows at once; after a 5xx the client may try again.
   */
  async function subscriptionAgrees(run: Run, changed: (sub: any) => boolean, retry: (u: TestAccount) => Promise<Response>): Promise<string[]> {
    const shown = async () => (await (await stack.request('GET', '/accounts/me/subscription', { token: run.user.id_token })).json()).subscription;
    if (run.res.status === 200) return changed(await shown()) ? [] : ['answered 200 but the account does not show the change'];
    // The client tries again: Stripe has the change already (the write after it failed); the retry must still end it.
    const again = await retry(run.user);
    const body = await again.json();
    if (again.status !== 200) return [`answered ${run.res.status}, and its retry ${again.status} ${body?.error?.code}`];
    return changed(await shown()) ? [] : [`answered ${run.res.status}; the retry answered 200 but the account does not show the change`];
  }

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
      request: (u, c) => stack.request('POST', '/pdf/jobs', { key: u.api_key, json: { operation: 'split', inputs: [{ s3_key: c.a, filename: 'a.pdf' }], split: { mode: 'each_page' } } }),
      agrees: asyncJob,
    },
    {
      name: 'POST /accounts/me/api-keys',
      request: (u) => stack.request('POST', '/accounts/me/api-keys', { token: u.id_token, json: { name: 'ci' } }),
      agrees: async (run, s) => {
        const problems = await keyCount(run.user, s);
        if (run.res.status === 201 && (await stack.request('GET', '/me', { key: run.body.api_key })).status !== 200) problems.push('the key answered is refused');
        return problems;
      },
    },
    {
      name: 'DELETE /accounts/me/api-keys/{id}',
      setup: async (u) => (await (await stack.request('POST', '/accounts/me/api-keys', { token: u.id_token, json: { name: 'old' } })).json()) as Record<string, any>,
      request: (u, c) => stack.request('DELETE', `/accounts/me/api-keys/${c.api_key_id}`, { token: u.id_token }),
      agrees: async (run, s) => {
        const problems = await keyCount(run.user, s);
        const works = (await stack.request('GET', '/me', { key: run.ctx.api_key })).status === 200;
        if (run.res.status === 200 && works) problems.push('revoked key still accepted');
        return problems;
      },
    },
    {
      name: 'POST /accounts/me/webhooks',
      request: (u) => stack.request('POST', '/accounts/me/webhooks', { token: u.id_token, json: { url: 'https://hooks.example.com/x' } }),
      agrees: async (run, s) => {
        const problems = webhookCount(s, await query(keys.webhooksOfAccount(run.user.account_id), 'gsi1'));
        if (run.res.status === 201 && (await stack.request('GET', `/accounts/me/webhooks/${run.body.webhook.webhook_id}`, { token: run.user.id_token })).status !== 200) problems.push('created webhook not found');
        return problems;
      },
    },
    {
      name: 'POST /accounts/me/webhooks/{id}/rotate-secret',
      setup: async (u) => (await (await stack.request('POST', '/accounts/me/webhooks', { token: u.id_token, json: { url: 'https://hooks.example.com/x' } })).json()).webhook,
      request: (u, c) => stack.request('POST', `/accounts/me/webhooks/${c.webhook_id}/rotate-secret`, { token: u.id_token, json: { grace_period_seconds: 3600 } }),
      agrees: async (run, s) => webhookCount(s, await query(keys.webhooksOfAccount(run.user.account_id), 'gsi1')),
    },
    {
      name: 'DELETE /accounts/me/webhooks/{id}',
      setup: async (u) => (await (await stack.request('POST', '/accounts/me/webhooks', { token: u.id_token, json: { url: 'https://hooks.example.com/x' } })).json()).webhook,
      request: (u, c) => stack.request('DELETE', `/accounts/me/webhooks/${c.webhook_id}`, { token: u.id_token }),
      agrees: async (run, s) => {
        const listed = await query(keys.webhooksOfAccount(run.user.account_id), 'gsi1');
        const problems = webhookCount(s, listed);
        if (run.res.status === 200 && listed.length) problems.push('deleted webhook still there');
        return problems;
      },
    },
    {
      name: 'Stripe checkout.session.completed (pack)',
      account: { plan_id: 'pending' },
      payments: true,
      setup: async (u) => ({ session: double.checkoutSession({ mode: 'payment', accountId: u.account_id, customer: cus(), items: [{ price: PRICES.pack10 }] }) }),
      request: (_u, c) => stripeDelivers('checkout.session.completed', c.session),
      agrees: (run, s) => {
        const purchases = s.items.filter((i) => i.sk.startsWith('PURCHASE#'));
        const problems = run.res.status === 200 ? [] : [`Stripe's retries ended with ${run.res.status}`];
        if (s.account.credits_micros !== 10_000_000 || purchases.length !== 1 || s.account.status !== 'active') problems.push(`credits ${s.account.credits_micros}, ${purchases.length} purchases, ${s.account.status}`);
        return problems;
      },
    },
    {
      name: 'Stripe charge.refunded (half a pack)',
      account: { plan_id: 'pending' },
      payments: true,
      setup: async (u) => {
        const session = double.checkoutSession({ mode: 'payment', accountId: u.account_id, customer: cus(), items: [{ price: PRICES.pack100 }] });
        expect((await stripeDelivers('checkout.session.completed', session)).status).toBe(200);
        return { session };
      },
      request: (_u, c) => stripeDelivers('charge.refunded', double.refundedCharge(c.session, 5_000)),
      agrees: (run, s) => {
        const purchases = s.items.filter((i) => i.sk.startsWith('PURCHASE#'));
        const problems = run.res.status === 200 ? [] : [`Stripe's retries ended with ${run.res.status}`];
        if (s.account.credits_micros !== 50_000_000 || purchases.length !== 1) problems.push(`credits ${s.account.credits_micros}, ${purchases.length} purchases`);
        return problems;
      },
    },
    {
      name: 'Stripe checkout.session.completed (subscription)',
      account: { plan_id: 'pending' },
      payments: true,
      setup: async (u) => {
        const customer = cus();
        const sub = double.subscription({ customer, price: PRICES.starter, periodStart: iso(Date.now() - DAY), periodEnd: iso(Date.now() + 29 * DAY) });
        return { session: double.checkoutSession({ mode: 'subscription', accountId: u.account_id, customer, subscription: sub.id }) };
      },
      request: (_u, c) => stripeDelivers('checkout.session.completed', c.session),
      agrees: (run, s) => {
        const problems = run.res.status === 200 ? [] : [`Stripe's retries ended with ${run.res.status}`];
        if (s.account.subscription?.allowance_micros !== 20_000_000 || s.account.plan_id !== 'starter') problems.push(`allowance ${s.account.subscription?.allowance_micros}, plan ${s.account.plan_id}`);
        return problems;
      },
    },
    {
      name: 'Stripe customer.subscription.updated (renewal)',
      account: { plan_id: 'pending' },
      payments: true,
      setup: async (u) => {
        const customer = cus();
        const periodEnd = iso(Date.now() + 60_000);
        const sub = double.subscription({ customer, price: PRICES.starter, periodStart: iso(Date.now() - 30 * DAY), periodEnd });
        expect((await stripeDelivers('checkout.session.completed', double.checkoutSession({ mode: 'subscription', accountId: u.account_id, customer, subscription: sub.id }))).status).toBe(200);
        const charge = { account_id: u.account_id, job_id: `job_spend_${Date.now()}`, unit: 'pdf', operation: 'pdf', amount_micros: 5_000_000, pdf_count: 500 } as const;
        await stack.services.billing.charge(charge);
        return { renewed: double.renew(sub.id, periodEnd, iso(Date.now() + 30 * DAY)) };
      },
      request: (_u, c) => stripeDelivers('customer.subscription.updated', c.renewed),
      agrees: (run, s) => {
        const problems = run.res.status === 200 ? [] : [`Stripe's retries ended with ${run.res.status}`];
        if (s.account.subscription?.allowance_micros !== 20_000_000) problems.push(`allowance ${s.account.subscription?.allowance_micros} after the renewal`);
        return problems;
      },
    },
    {
      name: 'POST /accounts/me/subscription/cancel',
      account: { plan_id: 'pending' },
      payments: true,
      setup: subscribed,
      request: (u) => stack.request('POST', '/accounts/me/subscription/cancel', { token: u.id_token }),
      agrees: async (run) => subscriptionAgrees(run, (sub) => sub.scheduled_change?.action === 'cancel', (u) => stack.request('POST', '/accounts/me/subscription/cancel', { token: u.id_token })),
    },
    {
      name: 'POST /accounts/me/subscription/change (upgrade)',
      account: { plan_id: 'pending' },
      payments: true,
      setup: subscribed,
      request: (u) => stack.request('POST', '/accounts/me/subscription/change', { token: u.id_token, json: { price_id: PRICES.business } }),
      agrees: async (run) =>
        subscriptionAgrees(run, (sub) => sub.price_id === PRICES.business, (u) => stack.request('POST', '/accounts/me/subscription/change', { token: u.id_token, json: { price_id: PRICES.business } })),
    },
  ];

  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', (_name, sc) => sweep(sc), 300_000);
});
