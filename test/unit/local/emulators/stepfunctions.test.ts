import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StateMachine } from 'aws-local-stepfunctions';
import { failureTaskInput } from '../../../../functions/core/workflows/ended';
import { createLogger } from '../../../../functions/logger';
import { WORKFLOWS } from '../../../../functions/workflows';
import { LocalWorkflowRunner, localDefinition } from '../../../../local/emulators/stepfunctions';
import { calls, gate } from '../../../support/workflow-fixtures/handlers';

const SUPPORT = path.resolve(__dirname, '../../../support');

/** A runner of one fixture workflow: its ASL under workflow-fixtures/, each task bound to a handler of handlers.ts. */
function fixtureRunner(name: string, tasks: Record<string, string>, extra: { retryIntervalMs?: number; journalDir?: string } = {}) {
  const bound = Object.fromEntries(Object.entries(tasks).map(([state, handler]) => [state, { ref: `workflow-fixtures/handlers#${handler}`, profile: 'light' as const, permissions: [] }]));
  return new LocalWorkflowRunner({ workflows: [{ name, definition: `workflow-fixtures/${name}.asl.json`, tasks: bound }], log: createLogger('silent'), handlersDir: SUPPORT, rootDir: SUPPORT, ...extra });
}

const runner = fixtureRunner('retry', { Flaky: 'flaky', Recover: 'recover' }, { retryIntervalMs: 0 });

afterAll(() => runner.stop());

async function run(input: Record<string, unknown>) {
  await runner.start('retry', input, { name: String(input.id) });
  await runner.idle();
  return calls.filter((c) => (c.input as { id?: string }).id === input.id || (c.input as { id?: string })?.id === undefined);
}

describe('local Step Functions runner', () => {
  it('retries a task that throws a retryable error, as the ASL says', async () => {
    await run({ id: 'once', failTimes: 1 });
    expect(calls.filter((c) => c.input.id === 'once').map((c) => c.task)).toEqual(['flaky', 'flaky']);
  });

  it('catches a task that keeps failing after its retries and runs the Catch target with the error', async () => {
    await run({ id: 'always', failTimes: 99 });
    const mine = calls.filter((c) => c.input.id === 'always');
    expect(mine.map((c) => c.task)).toEqual(['flaky', 'flaky', 'flaky', 'recover']); // 1 try + MaxAttempts 2
    expect(mine[3].input.error).toEqual({ Error: 'TransientTaskError', Cause: 'attempt 3 failed' });
  });

  it('does not retry errors the Retry does not name, but still catches them', async () => {
    await run({ id: 'fatal', failTimes: 1, errorName: 'BadInput' });
    const mine = calls.filter((c) => c.input.id === 'fatal');
    expect(mine.map((c) => c.task)).toEqual(['flaky', 'recover']);
    expect(mine[1].input.error.Error).toBe('BadInput');
  });

  it('gives each task the Lambda deadline its function has in AWS: its profile\'s, or its own when longer', async () => {
    const remainingOf = async (task: { profile: 'light' | 'worker'; timeoutSeconds?: number }, id: string) => {
      const timedRunner = new LocalWorkflowRunner({
        workflows: [{ name: 'retry', definition: 'workflow-fixtures/retry.asl.json', tasks: { Flaky: { ref: 'workflow-fixtures/handlers#timed', permissions: [], ...task }, Recover: { ref: 'workflow-fixtures/handlers#recover', profile: 'light', permissions: [] } } }],
        log: createLogger('silent'),
        handlersDir: SUPPORT,
        rootDir: SUPPORT,
      });
      try {
        await timedRunner.start('retry', { id }, { name: id });
        await timedRunner.idle();
      } finally {
        await timedRunner.stop();
      }
      return calls.find((c) => c.task === 'timed' && c.input.id === id)!.input.remainingMs as number;
    };
    const light = await remainingOf({ profile: 'light' }, 'light-deadline');
    expect(light).toBeGreaterThan(9_000);
    expect(light).toBeLessThanOrEqual(10_000); // a light function has 10 s in AWS
    expect(await remainingOf({ profile: 'light', timeoutSeconds: 120 }, 'own-deadline')).toBeGreaterThan(110_000);
    expect(await remainingOf({ profile: 'worker' }, 'worker-deadline')).toBeGreaterThan(890_000);
  });

  it('starts an execution once per name', async () => {
    const first = await runner.start('retry', { id: 'dup', failTimes: 0 }, { name: 'dup' });
    const second = await runner.start('retry', { id: 'dup', failTimes: 0 }, { name: 'dup' });
    await runner.idle();
    expect(second.executionId).toBe(first.executionId);
    expect(calls.filter((c) => c.input.id === 'dup')).toHaveLength(1);
  });

  it('tells an execution running (RUNNING) from one that ended (its status) and one never started (none)', async () => {
    const slow = fixtureRunner('retry', { Flaky: 'flaky', Recover: 'recover' }, { retryIntervalMs: 60_000 });
    try {
      await slow.start('retry', { id: 'watched', failTimes: 1 }, { name: 'watched' });
      expect(await slow.status('retry', 'watched')).toBe('RUNNING');
      expect(await slow.status('retry', 'never')).toBeNull();
    } finally {
      await slow.stop(0);
    }
    expect(await runner.start('retry', { id: 'quick', failTimes: 0 }, { name: 'quick' })).toBeDefined();
    await runner.idle();
    expect(await runner.status('retry', 'quick')).toBe('SUCCEEDED');
    const failing = fixtureRunner('gated', { Gated: 'flaky' });
    try {
      await failing.start('gated', { id: 'fails', failTimes: 1, errorName: 'Broken' }, { name: 'fails' });
      await failing.idle();
      expect(await failing.status('gated', 'fails')).toBe('FAILED');
    } finally {
      await failing.stop();
    }
  });

  it('does not run an ended execution again when its name is started again (Step Functions refuses the name for 90 days)', async () => {
    const first = await runner.start('retry', { id: 'ended-once', failTimes: 0 }, { name: 'ended-once' });
    await runner.idle();
    const again = await runner.start('retry', { id: 'ended-once', failTimes: 0 }, { name: 'ended-once' });
    await runner.idle();
    expect(again.executionId).toBe(first.executionId);
    expect(calls.filter((c) => c.input.id === 'ended-once')).toHaveLength(1);
  });

  it('loads every workflow of the service: each placeholder bound to a task handler, the ASL valid', () => {
    for (const wf of WORKFLOWS) {
      const def = localDefinition(wf);
      expect(JSON.stringify(def)).not.toMatch(/\$\{/);
      expect(() => new StateMachine(def as never, { validationOptions: { checkArn: true, checkPaths: true } })).not.toThrow();
      for (const task of Object.values(wf.tasks)) {
        const [file, name] = task.ref.split('#');
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        expect(typeof require(path.resolve(__dirname, '../../../../functions', file))[name]).toBe('function');
      }
    }
  });
});

describe('local Step Functions runner across a stop or a crash', () => {
  const journalDir = mkdtempSync(path.join(os.tmpdir(), 'sfn-journal-'));
  afterAll(() => rmSync(journalDir, { recursive: true, force: true }));
  const make = () => fixtureRunner('gated', { Gated: 'gated' }, { journalDir });
  /** The records of running executions (the history of ended ones lies beside them). */
  const records = () => readdirSync(journalDir).filter((f) => f.endsWith('.json'));

  it('records a running execution until it ends, and resumes one that a stop interrupted', async () => {
    gate.open = false;
    const first = make();
    await first.start('gated', { id: 'interrupted' }, { name: 'job_1' });
    await new Promise((r) => setTimeout(r, 30));
    expect(readdirSync(journalDir)).toEqual(['gated--job_1.json']);
    await first.stop(0);
    // Aborted, not ended: the record stays for the next start.
    expect(readdirSync(journalDir)).toEqual(['gated--job_1.json']);

    gate.open = true;
    const second = make();
    try {
      expect(await second.resumeInterrupted()).toBe(1);
      await second.idle();
      expect(calls.filter((c) => c.task === 'gated' && c.input.id === 'interrupted')).toHaveLength(2);
      expect(records()).toEqual([]);
      // Nothing left to resume.
      expect(await make().resumeInterrupted()).toBe(0);
    } finally {
      await second.stop();
    }
  });

  it('remembers ended executions across a restart: their status, and a start of their name runs nothing', async () => {
    gate.open = true;
    const first = make();
    await first.start('gated', { id: 'ended-before' }, { name: 'job_2' });
    await first.idle();
    await first.stop();
    const second = make();
    try {
      expect(await second.status('gated', 'job_2')).toBe('SUCCEEDED');
      await second.start('gated', { id: 'ended-before' }, { name: 'job_2' });
      await second.idle();
      expect(calls.filter((c) => c.task === 'gated' && c.input.id === 'ended-before')).toHaveLength(1);
      expect(records()).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});

describe('local Step Functions runner: the history of ended executions', () => {
  it('keeps an ended execution for 90 days, as Step Functions does, and drops older ones from the file', async () => {
    const journalDir = mkdtempSync(path.join(os.tmpdir(), 'sfn-history-'));
    const day = 24 * 3600_000;
    const line = (name: string, endedDaysAgo: number) => JSON.stringify({ workflow: 'gated', name, status: 'SUCCEEDED', ended_at: new Date(Date.now() - endedDaysAgo * day).toISOString() });
    const kept = [line('job_89', 89), line('job_10', 10)];
    try {
      writeFileSync(path.join(journalDir, 'ended-executions.jsonl'), [line('job_91', 91), kept[0], line('job_120', 120), kept[1]].map((l) => `${l}\n`).join(''));
      const runner = fixtureRunner('gated', { Gated: 'gated' }, { journalDir });
      const statuses = await Promise.all(['job_89', 'job_10', 'job_91', 'job_120'].map((name) => runner.status('gated', name)));
      expect(statuses).toEqual(['SUCCEEDED', 'SUCCEEDED', null, null]);
      expect(readFileSync(path.join(journalDir, 'ended-executions.jsonl'), 'utf8')).toBe(kept.map((l) => `${l}\n`).join(''));
      await runner.stop();
    } finally {
      rmSync(journalDir, { recursive: true, force: true });
    }
  });
});

describe('local Step Functions runner: task handlers of aborted executions', () => {
  it('tells when the handler an aborted execution was waiting for has ended (it runs on, as a Lambda would)', async () => {
    gate.open = false;
    const gated = fixtureRunner('gated', { Gated: 'gated' });
    await gated.start('gated', { id: 'abandoned' }, { name: 'abandoned' });
    while (!calls.some((c) => c.task === 'gated' && c.input.id === 'abandoned')) await new Promise((r) => setImmediate(r));
    await gated.stop(0);
    // Aborted, yet its handler still waits at the gate.
    expect(await gated.tasksSettled(50)).toBe(false);
    gate.open = true;
    expect(await gated.tasksSettled(5_000)).toBe(true);
    expect(await gated.tasksSettled(0)).toBe(true);
  });

  it('runs no task handler of an execution once a stop aborted it (the library retried it at once, then ran its Catch)', async () => {
    const stopping = fixtureRunner('retry', { Flaky: 'flaky', Recover: 'recover' });
    await stopping.start('retry', { id: 'stopped-mid-retry', failTimes: 5 }, { name: 'stopped-mid-retry' });
    const callsOf = () => calls.filter((c) => c.input?.id === 'stopped-mid-retry').map((c) => c.task);
    // The first attempt failed; the retry waits its 5 s when the stop comes.
    while (callsOf().length === 0) await new Promise((r) => setImmediate(r));
    await stopping.stop(0);
    expect(await stopping.tasksSettled(1_000)).toBe(true);
    expect(callsOf()).toEqual(['flaky']);
  });
});

describe('local Step Functions runner: an execution that ends without reaching its failure recorder', () => {
  const timed = fixtureRunner('slow', { Sleepy: 'sleepy', RecordFailure: 'ended' });
  afterAll(() => timed.stop());

  it('hands its ending to the recorder, as the EventBridge rule does in AWS (a whole-execution timeout has no Catch)', async () => {
    const input = { job_id: 'job_slow', account_id: 'acct1', sleepMs: 2500 };
    await timed.start('slow', input, { name: 'slow_1' });
    await timed.idle();
    const recorded = calls.filter((c) => c.task === 'ended');
    expect(recorded).toHaveLength(1);
    expect(recorded[0].input).toMatchObject({ detail: { status: 'TIMED_OUT', input: JSON.stringify(input) } });
    // What the service's recorders make of it: the job, with a timeout named as a timed-out task's.
    expect(failureTaskInput(recorded[0].input)).toEqual({ job_id: 'job_slow', account_id: 'acct1', error: { Error: 'States.Timeout' } });
  });
});

describe('local Step Functions runner: endings the recorder gets, and those it does not', () => {
  it('names the error an uncaught failure ended the execution with, as the EventBridge event does', async () => {
    const failing = fixtureRunner('gated', { Gated: 'flaky', RecordFailure: 'ended' });
    try {
      await failing.start('gated', { id: 'uncaught', failTimes: 1, errorName: 'JobBroken' }, { name: 'uncaught' });
      await failing.idle();
      const recorded = calls.filter((c) => c.task === 'ended' && c.input?.detail?.input?.includes('uncaught'));
      expect(recorded).toEqual([{ task: 'ended', input: { detail: expect.objectContaining({ status: 'FAILED', error: 'JobBroken', cause: 'attempt 1 failed for good' }) } }]);
    } finally {
      await failing.stop();
    }
  });

  it('does not record an execution a stop aborted as ended: the next start resumes it, its job stays processing', async () => {
    const journalDir = mkdtempSync(path.join(os.tmpdir(), 'sfn-aborted-'));
    const stopping = fixtureRunner('slow', { Sleepy: 'sleepy', RecordFailure: 'ended' }, { journalDir });
    try {
      await stopping.start('slow', { job_id: 'job_aborted', sleepMs: 300 }, { name: 'aborted_1' });
      while (!calls.some((c) => c.task === 'sleepy' && c.input.job_id === 'job_aborted')) await new Promise((r) => setImmediate(r));
      await stopping.stop(0);
      expect(await stopping.tasksSettled(2_000)).toBe(true);
      expect(calls.filter((c) => c.task === 'ended' && c.input?.detail?.input?.includes('job_aborted'))).toEqual([]);
      expect(readdirSync(journalDir)).toHaveLength(1);
    } finally {
      rmSync(journalDir, { recursive: true, force: true });
    }
  });
});
