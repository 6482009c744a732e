/**
 * The service's ASL files run as they are (through the local runner), each task bound to a scripted handler: what
 * each state is given, where a failure goes, and how the execution ends. The handlers' own logic is tested elsewhere.
 */
import path from 'node:path';
import { createLogger } from '../../../functions/logger';
import { WORKFLOWS } from '../../../functions/workflows';
import { LocalWorkflowRunner } from '../../../local/emulators/stepfunctions';
import { rendering, scripts, type Step, taskCalls } from '../../support/workflow-fixtures/scripted';

const ROOT = path.resolve(__dirname, '../../..');
const SUPPORT = path.resolve(__dirname, '../../support');

const runner = new LocalWorkflowRunner({
  workflows: WORKFLOWS.map((w) => ({
    ...w,
    tasks: Object.fromEntries(Object.entries(w.tasks).map(([state, task]) => [state, { ...task, ref: `workflow-fixtures/scripted#${task.ref.split('#')[1]}` }])),
  })),
  log: createLogger('silent'),
  retryIntervalMs: 0,
  handlersDir: SUPPORT,
  rootDir: ROOT,
});
afterAll(() => runner.stop());

let n = 0;
async function run(workflow: 'bulk' | 'pdfop', script: Record<string, Step[]>) {
  const job_id = `job-${++n}`;
  scripts.set(job_id, script);
  const input = { job_id, account_id: 'acct-1' };
  await runner.start(workflow, input, { name: job_id });
  await runner.idle();
  const mine = taskCalls.filter((c) => c.input?.job_id === job_id);
  return {
    input,
    status: await runner.status(workflow, job_id),
    states: mine.map((c) => c.state),
    inputsOf: (state: string) => mine.filter((c) => c.state === state).map((c) => c.input),
    // The ASL's Catch hands RecordFailure the execution's input with the error; the runner's ending event comes after.
    caught: mine.filter((c) => c.state === 'RecordFailure' && c.input.error).map((c) => c.input),
  };
}

const processing = (items: number[]) => ({ Prepare: [{ status: 'processing', items }] });

describe('bulk.asl.json', () => {
  it('renders every listed item with the job, then finishes with the input and what Prepare answered', async () => {
    const r = await run('bulk', { ...processing([0, 1, 2]), Finish: [{ status: 'completed' }] });
    expect(r.status).toBe('SUCCEEDED');
    expect(r.inputsOf('RenderFile').sort((a, b) => a.index - b.index)).toEqual([0, 1, 2].map((index) => ({ ...r.input, index })));
    expect(r.inputsOf('Finish')).toEqual([{ ...r.input, prepared: { status: 'processing', items: [0, 1, 2] } }]);
    expect(r.caught).toEqual([]);
  });

  it('ends a job Prepare ended without rendering: failed fails the execution, any other status succeeds', async () => {
    const failed = await run('bulk', { Prepare: [{ status: 'failed', items: [] }] });
    expect([failed.status, failed.states]).toEqual(['FAILED', ['Prepare']]);
    expect(failed.caught).toEqual([]);
    for (const status of ['cancelled', 'completed']) {
      const ended = await run('bulk', { Prepare: [{ status, items: [] }] });
      expect([ended.status, ended.states]).toEqual(['SUCCEEDED', ['Prepare']]);
    }
  });

  it('fails the execution when Finish answers failed, without RecordFailure (Finish recorded it)', async () => {
    const r = await run('bulk', { ...processing([0]), Finish: [{ status: 'failed' }] });
    expect(r.status).toBe('FAILED');
    expect(r.caught).toEqual([]);
  });

  it('retries a transient failure of Prepare twice and of Finish three times, then records the job failed', async () => {
    const prep = await run('bulk', { Prepare: [{ throws: 'TransientTaskError' }] });
    expect(prep.states.filter((s) => s === 'Prepare')).toHaveLength(3);
    expect(prep.status).toBe('FAILED');
    expect(prep.caught).toEqual([{ ...prep.input, error: { Error: 'TransientTaskError', Cause: expect.any(String) } }]);

    const fin = await run('bulk', { ...processing([0]), Finish: [{ throws: 'TransientTaskError' }] });
    expect(fin.states.filter((s) => s === 'Finish')).toHaveLength(4);
    expect(fin.status).toBe('FAILED');
    expect(fin.caught).toEqual([{ ...fin.input, prepared: { status: 'processing', items: [0] }, error: { Error: 'TransientTaskError', Cause: expect.any(String) } }]);
  });

  it('succeeds after the last retry, and retries Lambda throttling longer (eight times)', async () => {
    const fin = await run('bulk', { ...processing([0]), Finish: [{ throws: 'TransientTaskError' }, { throws: 'TransientTaskError' }, { throws: 'TransientTaskError' }, { status: 'completed' }] });
    expect(fin.status).toBe('SUCCEEDED');
    const throttled = await run('bulk', { Prepare: [...Array(8).fill({ throws: 'Lambda.TooManyRequestsException' }), { status: 'processing', items: [] }], Finish: [{ status: 'completed' }] });
    expect(throttled.status).toBe('SUCCEEDED');
  });

  it('abandons a file whose render keeps failing (three tries) and still finishes the job', async () => {
    const r = await run('bulk', { ...processing([0]), RenderFile: [{ throws: 'TransientTaskError' }], Finish: [{ status: 'completed' }] });
    expect(r.states.filter((s) => s === 'RenderFile')).toHaveLength(3);
    expect(r.inputsOf('Finish')).toEqual([{ ...r.input, prepared: { status: 'processing', items: [0] } }]);
    expect(r.status).toBe('SUCCEEDED');
  });

  it('renders 10 files at once, not more', async () => {
    rendering.holdMs = 50;
    try {
      rendering.most = 0;
      const r = await run('bulk', { ...processing(Array.from({ length: 14 }, (_, i) => i)), Finish: [{ status: 'completed' }] });
      expect(r.status).toBe('SUCCEEDED');
      expect(rendering.most).toBe(10);
    } finally {
      rendering.holdMs = 0;
    }
  });
});

describe('pdfop.asl.json', () => {
  it('marks the job processing, then processes it with the input unchanged; completed succeeds', async () => {
    const r = await run('pdfop', { Process: [{ status: 'completed' }] });
    expect(r.states).toEqual(['MarkProcessing', 'Process']);
    expect(r.inputsOf('Process')).toEqual([r.input]);
    expect(r.status).toBe('SUCCEEDED');
  });

  it('fails the execution when Process answers failed, without RecordFailure (Process recorded it)', async () => {
    const r = await run('pdfop', { Process: [{ status: 'failed' }] });
    expect(r.status).toBe('FAILED');
    expect(r.caught).toEqual([]);
  });

  it('retries a transient failure of Process twice, then records the job failed', async () => {
    const once = await run('pdfop', { Process: [{ throws: 'TransientTaskError' }, { status: 'completed' }] });
    expect(once.status).toBe('SUCCEEDED');
    const always = await run('pdfop', { Process: [{ throws: 'TransientTaskError' }] });
    expect(always.states.filter((s) => s === 'Process')).toHaveLength(3);
    expect(always.caught).toEqual([{ ...always.input, error: { Error: 'TransientTaskError', Cause: expect.any(String) } }]);
    expect(always.status).toBe('FAILED');
  });

  it('records a failure of MarkProcessing or Process for the job, and processes nothing after MarkProcessing failed', async () => {
    const mark = await run('pdfop', { MarkProcessing: [{ throws: 'BadInput' }] });
    expect(mark.states).not.toContain('Process');
    expect(mark.caught).toEqual([{ ...mark.input, error: { Error: 'BadInput', Cause: expect.any(String) } }]);
    expect(mark.status).toBe('FAILED');
    // Process runs the whole job: only errors named transient are run again.
    const proc = await run('pdfop', { Process: [{ throws: 'BadInput' }] });
    expect(proc.states.filter((s) => s === 'Process')).toHaveLength(1);
    expect(proc.caught).toEqual([{ ...proc.input, error: { Error: 'BadInput', Cause: expect.any(String) } }]);
    expect(proc.status).toBe('FAILED');
  });
});
