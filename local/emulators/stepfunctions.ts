/**
 * Local Step Functions: the ASL files of functions/workflows.ts run in-process through aws-local-stepfunctions,
 * with each Task state bound to the same handler module its Lambda runs in AWS. Retry and Catch behave as the
 * ASL says (errors are matched by name, as Lambda reports `errorType`); executions run in the background like
 * real ones, and `idle()` lets tests and shutdown wait for them.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'aws-lambda';
import type { ExecutionEndedEvent } from '../../functions/core/workflows/ended';
import type { ExecutionStatus, WorkflowStarter } from '../../functions/core/workflows/ports';
import type { Logger } from '../../functions/logger';
import { functionTimeoutSeconds } from '../../functions/profiles';
import { FAILURE_RECORDER, type WorkflowDef } from '../../functions/workflows';
import { readJsonFile, writeFileAtomic } from '../files';
import { lambdaContext, loadHandler } from '../handlers';

/** A running execution as the journal records it. */
interface Interrupted {
  workflow: string;
  name: string;
  input: Record<string, unknown>;
}

/** An ended execution as the history records it (one JSON line each). */
interface Ended {
  workflow: string;
  name: string;
  status: ExecutionStatus;
  ended_at: string;
}

/** Beside the records of running executions (which are `*.json`), so that resuming never reads it. */
const HISTORY_FILE = 'ended-executions.jsonl';
/** How long Step Functions keeps a closed execution (and refuses its name to a new one). */
const HISTORY_MS = 90 * 24 * 3600_000;

// aws-local-stepfunctions 3 targets Node 22; Node 20 lacks Promise.withResolvers.
type Resolvers<T> = { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };
const P = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
P.withResolvers ??= <T>() => {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

// Loaded after the polyfill (the library reads Promise.withResolvers when a Task runs).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { StateMachine, ExecutionAbortedError, ExecutionTimeoutError } = require('aws-local-stepfunctions') as typeof import('aws-local-stepfunctions');

const ROOT = path.resolve(__dirname, '../..');
const FUNCTIONS_DIR = path.join(ROOT, 'functions');

type TaskHandler = (input: unknown, context: Context) => Promise<unknown>;
type Machine = InstanceType<typeof StateMachine>;

export interface LocalWorkflowOptions {
  workflows: readonly WorkflowDef[];
  log: Logger;
  /** Overrides every Retry interval (ms), e.g. 0 in tests; by default the ASL's own intervals apply. */
  retryIntervalMs?: number;
  /** Where handler modules live (tests may point at fixtures). Default: functions/. */
  handlersDir?: string;
  /** Where ASL paths are resolved from. Default: the repository root. */
  rootDir?: string;
  /**
   * Where running executions are recorded (one file each, removed when it ends). Step Functions keeps an execution
   * through anything that happens to a Lambda; locally, one that a stop or a crash interrupted is started again from
   * this record by `resumeInterrupted()` (every task is idempotent), instead of leaving its job processing for ever.
   */
  journalDir?: string;
}

/** The ASL with every `${Name}` substitution replaced by a local Lambda ARN (what the CDK substitutes in AWS). */
export function localDefinition(def: WorkflowDef, rootDir = ROOT): Record<string, unknown> {
  const text = readFileSync(path.join(rootDir, def.definition), 'utf8').replace(/\$\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    if (!def.tasks[name]) throw new Error(`${def.definition}: no task handler declared for \${${name}}`);
    return `arn:aws:lambda:us-east-1:000000000000:function:${def.name}-${name}`;
  });
  return JSON.parse(text);
}

function localExecutionArn(workflow: string, name: string): string {
  return `arn:aws:states:us-east-1:000000000000:execution:${workflow}:${name}`;
}

export class LocalWorkflowRunner implements WorkflowStarter {
  private readonly machines = new Map<string, Machine>();
  private readonly running = new Map<string, { abort: () => void; done: Promise<void> }>();
  /** Ended executions by ARN, with their status: as in AWS, a name is not run again once its execution ended. */
  private readonly ended = new Map<string, ExecutionStatus>();
  /**
   * Task handlers still running. Aborting an execution does not stop the handler it was waiting for (a Lambda runs
   * to its end too): a stop waits for them before the services they use close.
   */
  private readonly tasks = new Set<Promise<unknown>>();
  private stopped = false;
  /** Set once stop() aborts what is left: those executions keep their journal records. */
  private aborting = false;

  constructor(private readonly opts: LocalWorkflowOptions) {
    if (opts.journalDir) {
      mkdirSync(opts.journalDir, { recursive: true });
      this.loadHistory(opts.journalDir);
    }
  }

  /** The ended executions of earlier runs still within Step Functions' 90 days; older lines are dropped from the file. */
  private loadHistory(dir: string) {
    const file = path.join(dir, HISTORY_FILE);
    if (!existsSync(file)) return;
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const kept: string[] = [];
    for (const line of lines) {
      let entry: Ended;
      try {
        entry = JSON.parse(line) as Ended;
      } catch {
        // A line cut short by a crash while it was written: that execution may run again if started, as before.
        continue;
      }
      if (!(Date.parse(entry.ended_at) > Date.now() - HISTORY_MS)) continue;
      this.ended.set(localExecutionArn(entry.workflow, entry.name), entry.status);
      kept.push(line);
    }
    if (kept.length < lines.length) writeFileAtomic(file, kept.map((l) => `${l}\n`).join(''));
  }

  /** Remembers an ended execution (in the history file too, before its running record goes). */
  private recordEnded(workflow: string, name: string, status: ExecutionStatus) {
    this.ended.set(localExecutionArn(workflow, name), status);
    if (!this.opts.journalDir) return;
    const entry: Ended = { workflow, name, status, ended_at: new Date().toISOString() };
    try {
      appendFileSync(path.join(this.opts.journalDir, HISTORY_FILE), `${JSON.stringify(entry)}\n`);
    } catch (err) {
      // Only the next process loses it (a start of that name would run again there): not worth failing the ending.
      this.opts.log.warn(`workflow ${workflow} execution ${name}: its ending could not be kept in the history`, err);
    }
  }

  private machine(def: WorkflowDef): Machine {
    let m = this.machines.get(def.name);
    if (!m) {
      m = new StateMachine(localDefinition(def, this.opts.rootDir) as never, { validationOptions: { checkArn: true, checkPaths: true } });
      this.machines.set(def.name, m);
    }
    return m;
  }

  async start(workflow: string, input: Record<string, unknown>, opts: { name?: string } = {}): Promise<{ executionId: string }> {
    if (this.stopped) throw new Error('the local workflow runner is stopped');
    const def = this.opts.workflows.find((w) => w.name === workflow);
    if (!def) throw new Error(`no workflow named ${workflow}`);
    const name = opts.name ?? `${Date.now()}-${Math.random().toString(36).slice(2, 10)}`;
    const executionId = localExecutionArn(workflow, name);
    // Running, or ended: Step Functions refuses the name (ExecutionAlreadyExists), which the AWS adapter answers as
    // started. Nothing runs again.
    if (this.running.has(executionId) || this.ended.has(executionId)) return { executionId };

    const taskResourceLocalHandlers: Record<string, (i: unknown) => Promise<unknown>> = {};
    const retryIntervalOverrides: Record<string, number> = {};
    for (const [state, task] of Object.entries(def.tasks)) {
      // A JSON round trip, as across the Lambda boundary: handlers never share objects with the runner.
      taskResourceLocalHandlers[state] = (taskInput) => {
        // aws-local-stepfunctions ends a retry's wait when the execution is aborted and runs the task again at once,
        // then its Catch: after a stop, no handler runs again (the next start resumes the execution).
        if (this.aborting) return Promise.reject(new Error(`the local workflow runner stopped; ${def.name} execution ${name} resumes at the next start`));
        return this.tracked(async () =>
          JSON.parse(JSON.stringify((await loadHandler<TaskHandler>(task.ref, this.opts.handlersDir ?? FUNCTIONS_DIR)(JSON.parse(JSON.stringify(taskInput)), lambdaContext(`${def.name}-${state}`, functionTimeoutSeconds(task.profile, task.timeoutSeconds) * 1000))) ?? null)),
        );
      };
      if (this.opts.retryIntervalMs !== undefined) retryIntervalOverrides[state] = this.opts.retryIntervalMs;
    }
    const execution = this.machine(def).run(input as never, {
      overrides: { taskResourceLocalHandlers: taskResourceLocalHandlers as never, retryIntervalOverrides },
      noThrowOnAbort: true,
      context: { Execution: { Id: executionId, Name: name, Input: input as never, StartTime: new Date().toISOString() } },
    });
    const record = this.opts.journalDir ? path.join(this.opts.journalDir, `${encodeURIComponent(workflow)}--${encodeURIComponent(name)}.json`) : null;
    if (record) writeFileAtomic(record, JSON.stringify({ workflow, name, input } satisfies Interrupted));
    const done = execution.result
      .then(
        // An abort by stop() resolves too (noThrowOnAbort): not ended, the next start resumes it.
        () => {
          if (!this.aborting) this.recordEnded(workflow, name, 'SUCCEEDED');
        },
        async (err: unknown) => {
          this.opts.log.info(`workflow ${workflow} execution ${name} failed`, err);
          // Aborted by stop(): not ended, the next start resumes it.
          if (this.aborting) return;
          // As the EventBridge rule does in AWS: the ending goes to the failure recorder, which ends a job the
          // execution left unfinished (a whole-execution timeout has no Catch) and leaves a finished one as it is.
          await this.reportEnding(def, name, input, err);
          this.recordEnded(workflow, name, endingStatus(err));
        },
      )
      // Ended: its record goes. Aborted by stop(): the record stays, so the next start resumes it.
      .finally(() => record && !this.aborting && rmSync(record, { force: true }));
    this.running.set(executionId, { abort: execution.abort, done });
    void done.finally(() => this.running.delete(executionId));
    return { executionId };
  }

  async status(workflow: string, name: string): Promise<ExecutionStatus | null> {
    const arn = localExecutionArn(workflow, name);
    return this.running.has(arn) ? 'RUNNING' : (this.ended.get(arn) ?? null);
  }

  private async reportEnding(def: WorkflowDef, name: string, input: Record<string, unknown>, err: unknown) {
    const recorder = def.tasks[FAILURE_RECORDER];
    if (!recorder) return;
    const status = endingStatus(err);
    const caught = (err as { cause?: { name?: string; message?: string } }).cause;
    const event: ExecutionEndedEvent = { detail: { status, input: JSON.stringify(input), error: caught?.name ?? null, cause: caught?.message ?? null } };
    try {
      await loadHandler<TaskHandler>(recorder.ref, this.opts.handlersDir ?? FUNCTIONS_DIR)(event, lambdaContext(`${def.name}-${FAILURE_RECORDER}`, functionTimeoutSeconds(recorder.profile, recorder.timeoutSeconds) * 1000));
    } catch (recordErr) {
      this.opts.log.error(`workflow ${def.name} execution ${name}: recording its ending failed`, recordErr);
    }
  }

  private tracked<T>(run: () => Promise<T>): Promise<T> {
    const call = run();
    const settled = call.then(
      () => undefined,
      () => undefined,
    );
    this.tasks.add(settled);
    void settled.finally(() => this.tasks.delete(settled));
    return call;
  }

  /**
   * Resolves once no task handler is running (those of aborted executions included), or after `maxMs`. Answers
   * whether they all ended.
   */
  async tasksSettled(maxMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), maxMs)));
    const settled = (async () => {
      while (this.tasks.size > 0) await Promise.all([...this.tasks]);
      return true as const;
    })();
    try {
      return await Promise.race([settled, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves once no execution is running. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /**
   * Stops accepting executions and lets running ones finish (up to `graceMs`), then aborts the rest; with a
   * journal, those are started again by the next runner's `resumeInterrupted()`.
   */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopped = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.aborting = true;
    for (const r of this.running.values()) r.abort();
    await this.idle();
  }

  /** Starts again every execution the journal holds (a stop or a crash interrupted it); answers how many. */
  async resumeInterrupted(): Promise<number> {
    const dir = this.opts.journalDir;
    if (!dir) return 0;
    let resumed = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const record = readJsonFile<Interrupted | null>(path.join(dir, file), null, (m) => this.opts.log.warn(m));
      if (!record || !this.opts.workflows.some((w) => w.name === record.workflow)) continue;
      // Ended after all (a crash between its history line and the removal of its record): nothing to resume.
      if (this.ended.has(localExecutionArn(record.workflow, record.name))) {
        rmSync(path.join(dir, file), { force: true });
        continue;
      }
      this.opts.log.warn(`resuming workflow ${record.workflow} execution ${record.name}, interrupted when the service last stopped`);
      await this.start(record.workflow, record.input, { name: record.name });
      resumed++;
    }
    return resumed;
  }
}

/** How an execution that did not succeed ended, in Step Functions' words. */
function endingStatus(err: unknown): 'TIMED_OUT' | 'ABORTED' | 'FAILED' {
  return err instanceof ExecutionTimeoutError ? 'TIMED_OUT' : err instanceof ExecutionAbortedError ? 'ABORTED' : 'FAILED';
}
