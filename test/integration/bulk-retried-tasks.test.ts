/**
 * Step Functions may run a bulk task again while (or after) its first invocation ran: a Retry after a Lambda timeout
 * or a lost reply. Each task must then be idempotent, also when the two invocations overlap. These tests run the
 * workflow of the local stack and invoke its task handlers a second time with the very input the workflow gave them
 * (captured by wrapping the local runner's task handlers), one after the other and at once.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../../functions/adapters/dynamodb/client';
import { keys } from '../../functions/adapters/dynamodb/schema';
import { bulkKeys } from '../../functions/core/bulk/storage';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { rawZip, unzip } from '../support/zips';

type Handler = (input: unknown) => Promise<unknown>;
type TaskInput = { job_id: string; account_id?: string; index?: number };

let stack: TestStack;
/** The real task handlers of the bulk workflow (as the runner binds them), by state name. */
const handlers: Record<string, Handler> = {};
/** Every input the workflow gave each task, by state name. */
const seen: Record<string, TaskInput[]> = {};
/** Per state: how the workflow's own invocation runs (default: as it is). */
let around: Record<string, (run: Handler, input: TaskInput) => Promise<unknown>> = {};

beforeAll(async () => {
  stack = await startTestStack({ LOCAL_SFN_RETRY_MS: '0' });
  type Machine = { run: (input: unknown, options: { overrides: { taskResourceLocalHandlers: Record<string, Handler> } }) => unknown };
  const runner = stack.workflows as unknown as { machine: (def: { name: string }) => Machine };
  const machine = runner.machine.bind(runner);
  jest.spyOn(runner, 'machine').mockImplementation((def) => {
    const m = machine(def);
    if (def.name !== 'bulk') return m;
    return {
      run: (input, options) => {
        const wrapped: Record<string, Handler> = {};
        for (const [state, run] of Object.entries(options.overrides.taskResourceLocalHandlers)) {
          handlers[state] = run;
          wrapped[state] = async (i) => {
            const task = JSON.parse(JSON.stringify(i)) as TaskInput;
            (seen[state] ??= []).push(task);
            return around[state] ? around[state](run, task) : run(i);
          };
        }
        return m.run(input, { ...options, overrides: { ...options.overrides, taskResourceLocalHandlers: wrapped } });
      },
    };
  });
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(() => {
  around = {};
});

/** Both invocations at once; the workflow gets the first one's answer (or error), as when a reply is lost. */
const twiceAtOnce = async (run: Handler, input: TaskInput) => {
  const [first, second] = await Promise.allSettled([run(input), run(input)]);
  secondOutcomes.push(second);
  if (first.status === 'rejected') throw first.reason;
  return first.value;
};
const secondOutcomes: PromiseSettledResult<unknown>[] = [];

const inputOf = (state: string, jobId: string, index?: number) => {
  const input = (seen[state] ?? []).find((i) => i.job_id === jobId && (index === undefined || i.index === index));
  if (!input) throw new Error(`the workflow never ran ${state} for ${jobId}`);
  return input;
};

async function submit(user: TestAccount, count: number): Promise<string> {
  const zip = rawZip(Array.from({ length: count }, (_, i) => ({ name: `f${i}.html`, data: `<h1>File ${i}</h1>` })));
  const res = await stack.request('POST', '/bulkjob', { key: user.api_key, json: { zip_base64: zip.toString('base64') } });
  const body = await res.json();
  if (res.status !== 202) throw new Error(`bulkjob ${res.status}: ${JSON.stringify(body)}`);
  return body.job_id;
}

const credits = async (user: TestAccount) => (await stack.services.accounts.get(user.account_id))!.credits_micros;

async function ledger(user: TestAccount, jobId: string) {
  const db = createDynamo({ tableName: stack.services.config.tableName, region: 'us-east-1', endpoint: stack.services.config.dynamodbEndpoint });
  const prefix = keys.charge(user.account_id, jobId, '');
  const { Items = [] } = await db.doc.send(
    new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)', ExpressionAttributeValues: { ':pk': prefix.pk, ':sk': prefix.sk } }),
  );
  return Items.map((i) => ({ unit: String(i.sk).slice(prefix.sk.length), refunded: !!i.refunded_at })).sort((a, b) => a.unit.localeCompare(b.unit));
}

async function outbox(jobId: string) {
  const db = createDynamo({ tableName: stack.services.config.tableName, region: 'us-east-1', endpoint: stack.services.config.dynamodbEndpoint });
  const { Items = [] } = await db.doc.send(
    new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)', ExpressionAttributeValues: { ':pk': keys.job(jobId).pk, ':e': 'EVENT#' } }),
  );
  return Items.map((i) => i.event as string);
}

/** Everything a finished job shows: the job, its rows, its output ZIP's entries, its events, its charges, the balance. */
async function snapshot(user: TestAccount, jobId: string) {
  const job = (await stack.services.jobs.get(jobId))!;
  const zip = job.output ? await stack.services.blobs.get(job.output.key) : null;
  const entries = zip ? await unzip(new Uint8Array(zip)) : null;
  return {
    job,
    rows: await stack.services.jobFiles.list(jobId),
    zipSize: zip?.length ?? null,
    entries: entries ? Object.fromEntries([...entries].map(([name, data]) => [name, name === 'manifest.json' ? JSON.parse(data.toString()) : data.length])) : null,
    events: await outbox(jobId),
    ledger: await ledger(user, jobId),
    credits: await credits(user),
    slots: await stack.services.jobSlots.holders({ accountId: user.account_id, kind: 'bulk', now: new Date() }),
    commitments: Object.keys((await stack.services.accounts.get(user.account_id))!.commitments ?? {}),
  };
}

const PRICE = 10_000;

describe('Finish run again', () => {
  it('twice at once with a balance exactly enough for the files, then again after it completed: one charge per file, all files delivered, nothing changes', async () => {
    const user = await stack.account({ credits_usd: 0.03 });
    around.Finish = twiceAtOnce;
    const jobId = await submit(user, 3);
    await stack.workflows.idle();
    const first = await snapshot(user, jobId);
    expect(secondOutcomes.at(-1)).toMatchObject({ status: 'fulfilled' });
    expect(first.job).toMatchObject({ status: 'completed', file_count: 3, processed_count: 3, success_count: 3, failure_count: 0, pages_total: 3 });
    expect(first.rows.map((r) => [r.index, r.status, r.error_code])).toEqual([[0, 'success', null], [1, 'success', null], [2, 'success', null]]);
    expect(first.ledger).toEqual([0, 1, 2].map((i) => ({ unit: `file#${i}`, refunded: false })));
    expect(first.credits).toBe(0);
    expect(Object.keys(first.entries!)).toEqual(['f0.pdf', 'f1.pdf', 'f2.pdf', 'manifest.json']);
    expect(first.entries!['manifest.json'].files.map((f: { status: string }) => f.status)).toEqual(['success', 'success', 'success']);
    expect(first.events).toEqual(['bulk.job.completed']);
    expect(first.slots).toEqual([]);
    expect(first.commitments).toEqual([]);

    const input = inputOf('Finish', jobId);
    await expect(handlers.Finish(input)).resolves.toEqual({ job_id: jobId, status: 'completed' });
    await expect(Promise.all([handlers.Finish(input), handlers.Finish(input)])).resolves.toEqual([
      { job_id: jobId, status: 'completed' },
      { job_id: jobId, status: 'completed' },
    ]);
    // RecordFailure after a completed Finish (a late Catch, or the ending of the execution) changes nothing either.
    await expect(handlers.RecordFailure({ ...input, error: { Error: 'States.Timeout', Cause: 'late' } })).resolves.toEqual({ job_id: jobId, status: 'completed' });
    expect(await snapshot(user, jobId)).toEqual(first);
  });
});

describe('Finish run again', () => {
  it('a second Finish that read the ledger before the first one charged, and charges once that one has completed, finds the files paid (balance exactly enough)', async () => {
    const user = await stack.account({ credits_usd: 0.02 });
    const progress = stack.services.bulkProgress;
    const realCharged = progress.chargedUnits.bind(progress);
    let finishing = false;
    let calls = 0;
    const spy = jest.spyOn(progress, 'chargedUnits').mockImplementation(async (accountId, jobId) => {
      const units = await realCharged(accountId, jobId);
      // The later of the two Finish invocations goes on with what it read only after the other one has ended the job.
      if (finishing && accountId === user.account_id && ++calls === 2) {
        for (let i = 0; i < 300 && (await stack.services.jobs.get(jobId))?.status === 'processing'; i++) await new Promise((r) => setTimeout(r, 50));
      }
      return units;
    });
    let second: Promise<unknown> = Promise.resolve();
    around.Finish = (run, input) => {
      finishing = true;
      const first = run(input);
      second = run(input).then((v) => ({ ok: v }), (err) => ({ err: String(err) }));
      return first;
    };
    try {
      const jobId = await submit(user, 2);
      await stack.workflows.idle();
      const outcome = await second;
      const after = await snapshot(user, jobId);
      expect(outcome).toBeDefined();
      expect(after.job).toMatchObject({ status: 'completed', success_count: 2, failure_count: 0 });
      expect(after.rows.map((r) => r.status)).toEqual(['success', 'success']);
      expect(after.entries!['manifest.json'].files.map((f: { status: string }) => f.status)).toEqual(['success', 'success']);
      expect(after.ledger).toEqual([0, 1].map((i) => ({ unit: `file#${i}`, refunded: false })));
      expect(after.credits).toBe(0);
      expect(after.events).toEqual(['bulk.job.completed']);
    } finally {
      spy.mockRestore();
    }
  });

  it('a cancel between a Finish that failed after charging and its retry is honoured: cancelled, the made PDFs kept and charged once', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const blobs = stack.services.blobs;
    const putParts = blobs.putParts.bind(blobs);
    let failed = false;
    const spy = jest.spyOn(blobs, 'putParts').mockImplementation(async (key, parts, type) => {
      if (key.startsWith('outputs/') && !failed) {
        failed = true;
        throw new Error('storage unavailable');
      }
      return putParts(key, parts, type);
    });
    around.Finish = async (run, input) => {
      try {
        return await run(input);
      } catch (err) {
        // Between the two runs: the customer cancels (202, the job is still processing).
        const res = await stack.request('POST', `/jobs/${input.job_id}/cancel`, { key: user.api_key });
        expect(res.status).toBe(202);
        throw err;
      }
    };
    try {
      const jobId = await submit(user, 2);
      await stack.workflows.idle();
      const after = await snapshot(user, jobId);
      expect(failed).toBe(true);
      expect(after.job).toMatchObject({ status: 'cancelled', success_count: 2, processed_count: 2, cancel_requested: true });
      expect(after.ledger).toEqual([0, 1].map((i) => ({ unit: `file#${i}`, refunded: false })));
      expect(after.credits).toBe(1_000_000 - 2 * PRICE);
      expect(Object.keys(after.entries!)).toEqual(['f0.pdf', 'f1.pdf', 'manifest.json']);
      expect(after.events).toEqual(['bulk.job.cancelled']);
      expect(after.slots).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('RenderFile run again', () => {
  it('twice at once for every file: one row and one staged PDF per file, never a failed row, counters right', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const results: unknown[] = [];
    around.RenderFile = async (run, input) => {
      const [a, b] = await Promise.allSettled([run(input), run(input)]);
      results.push(a, b);
      if (a.status === 'rejected') throw a.reason;
      return a.value;
    };
    let staged: (number | null)[] = [];
    around.Finish = async (run, input) => {
      staged = await Promise.all([0, 1, 2].map(async (i) => (await stack.services.blobs.head(bulkKeys.pdf(user.account_id, input.job_id, i)))?.size_bytes ?? null));
      const mid = (await stack.services.jobs.get(input.job_id))!;
      expect(mid).toMatchObject({ processed_count: 3, success_count: 3, failure_count: 0 });
      return run(input);
    };
    const jobId = await submit(user, 3);
    await stack.workflows.idle();
    expect(results.every((r) => (r as PromiseSettledResult<unknown>).status === 'fulfilled')).toBe(true);
    expect(staged.every((s) => typeof s === 'number' && s > 0)).toBe(true);
    const after = await snapshot(user, jobId);
    expect(after.rows.map((r) => [r.index, r.status])).toEqual([[0, 'success'], [1, 'success'], [2, 'success']]);
    expect(after.job).toMatchObject({ status: 'completed', processed_count: 3, success_count: 3, failure_count: 0 });
    expect(after.ledger).toHaveLength(3);
    expect(after.credits).toBe(1_000_000 - 3 * PRICE);

    // Once more after the job completed: nothing changes.
    const again = await Promise.all([0, 1, 2].map((i) => handlers.RenderFile(inputOf('RenderFile', jobId, i))));
    expect(again).toEqual([0, 1, 2].map((index) => ({ index, status: 'not_processing' })));
    expect(await snapshot(user, jobId)).toEqual(after);
  });

  it('a cancel between a finished render and its retry keeps the printed file; a file not yet rendered is skipped', async () => {
    const user = await stack.account({ credits_usd: 1 });
    around.RenderFile = async (run, input) => {
      if (input.index !== 0) return run(input);
      const first = await run(input);
      const res = await stack.request('POST', `/jobs/${input.job_id}/cancel`, { key: user.api_key });
      expect(res.status).toBe(202);
      const second = await run(input);
      expect(second).toEqual(first);
      return second;
    };
    const jobId = await submit(user, 1);
    await stack.workflows.idle();
    const after = await snapshot(user, jobId);
    expect(after.rows.map((r) => [r.index, r.status])).toEqual([[0, 'success']]);
    expect(after.job).toMatchObject({ status: 'cancelled', success_count: 1 });
    expect(after.ledger).toHaveLength(1);
  });
});

describe('RenderFile overlapping a cancel', () => {
  it('a retry that starts after a cancel while the first invocation still prints does not drop the PDF that printing made', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const blobs = stack.services.blobs;
    const put = blobs.put.bind(blobs);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let arrive!: () => void;
    const reached = new Promise<void>((r) => (arrive = r));
    const spy = jest.spyOn(blobs, 'put').mockImplementation(async (key, body, type) => {
      if (key.includes('/pdf/')) {
        arrive();
        await gate;
      }
      return put(key, body, type);
    });
    let second: unknown;
    around.RenderFile = async (run, input) => {
      const first = run(input);
      await reached;
      expect((await stack.request('POST', `/jobs/${input.job_id}/cancel`, { key: user.api_key })).status).toBe(202);
      second = await run(input);
      open();
      return first;
    };
    try {
      const jobId = await submit(user, 1);
      await stack.workflows.idle();
      const after = await snapshot(user, jobId);
      // The retry found the cancel and skipped the file; the first invocation's print, started before the cancel, wins.
      expect(second).toEqual({ index: 0, status: 'skipped' });
      expect(after.rows.map((r) => [r.index, r.status, r.error_code])).toEqual([[0, 'success', null]]);
      expect(after.job).toMatchObject({ status: 'cancelled', success_count: 1, failure_count: 0, processed_count: 1 });
      expect(Object.keys(after.entries!)).toEqual(['f0.pdf', 'manifest.json']);
      expect(after.ledger).toEqual([{ unit: 'file#0', refunded: false }]);
      expect(after.events).toEqual(['bulk.job.cancelled']);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('Prepare run again', () => {
  it('twice at once, then again before the files render: no duplicate rows, one slot, one commitment, counters right', async () => {
    const user = await stack.account({ credits_usd: 1 });
    let during: Awaited<ReturnType<typeof snapshot>> | null = null;
    around.Prepare = async (run, input) => {
      const [a, b] = await Promise.allSettled([run(input), run(input)]);
      expect(b).toMatchObject({ status: 'fulfilled' });
      if (a.status === 'rejected') throw a.reason;
      const again = await run(input);
      expect(again).toEqual(a.value);
      during = await snapshot(user, input.job_id);
      return a.value;
    };
    const jobId = await submit(user, 2);
    await stack.workflows.idle();
    expect(during!.job).toMatchObject({ status: 'processing', file_count: 2, processed_count: 0 });
    expect(during!.rows).toEqual([]);
    expect(during!.slots).toEqual([jobId]);
    expect(during!.commitments).toEqual([jobId]);
    const after = await snapshot(user, jobId);
    expect(after.job).toMatchObject({ status: 'completed', file_count: 2, processed_count: 2, success_count: 2, failure_count: 0 });
    expect(after.rows.map((r) => r.index)).toEqual([0, 1]);
    expect(after.slots).toEqual([]);
    expect(after.commitments).toEqual([]);
    expect(after.credits).toBe(1_000_000 - 2 * PRICE);

    // Prepare again after the job completed: nothing changes.
    await expect(handlers.Prepare(inputOf('Prepare', jobId))).resolves.toMatchObject({ status: 'completed', items: [] });
    expect(await snapshot(user, jobId)).toEqual(after);
  });
});
