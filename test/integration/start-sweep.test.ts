import { parseLongJobRequest, processLongJob, submitLongJob } from '../../functions/core/conversion/longjob';
import { markProcessing, submitPdfJob } from '../../functions/core/pdfops/background';
import { parsePdfJobRequest } from '../../functions/core/pdfops/requests';
import type { Renderer } from '../../functions/core/render/ports';
import { pdfJobDeps } from '../../functions/job-deps';
import { handler as sweep } from '../../functions/workers/jobs/start-sweep';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestStack, jobEventNames, startTestStack } from '../support/stack';

/**
 * A long job is stored as queued and then sent to the render queue. A submitter that dies in between (a Lambda
 * timing out right after the write) used to leave the job queued for ever; the start sweeper, a schedule, sends it.
 */
describe('the start sweeper', () => {
  let stack: TestStack;
  /** Minutes the service's clock is ahead of the test's (the sweeper waits two minutes before it steps in). */
  let ahead = 0;
  beforeAll(async () => {
    stack = await startTestStack({ LOCAL_SCHEDULE_INTERVAL_MS: '200' }, { clock: { now: () => new Date(Date.now() + ahead * 60_000) } });
  });
  afterAll(() => stack.stop());

  /** A new account with a dollar of credits, as the handlers read it. */
  async function dollarAccount() {
    const { api_key, account_id } = await stack.account({ credits_usd: 1 });
    const account = (await stack.services.accounts.get(account_id))!;
    return { api_key, account_id, account, plan: (await stack.services.plans.get(account.plan_id!))! };
  }

  it('renders and charges once a long job whose submitter died between storing it and queuing it', async () => {
    const { api_key, account_id, account, plan } = await dollarAccount();
    const svc = stack.services;
    // The submitter dies at the send: its message never reaches the queue.
    let died!: () => void;
    const atSend = new Promise<void>((resolve) => (died = resolve));
    const deadQueue = { send: () => (died(), new Promise<void>(() => undefined)) };
    void submitLongJob({ jobs: svc.jobs, blobs: svc.blobs, renderer: svc.renderer, clock: svc.clock, queue: deadQueue }, { account, plan, request: parseLongJobRequest({ input_type: 'html', html: '<h1>Left behind</h1>' }) });
    await atSend;
    const [job] = (await svc.jobs.list({ accountId: account_id, limit: 1 })).jobs;
    expect(job.status).toBe('queued');

    // A minute on, the sweeper leaves it to its (maybe slow) submitter. A pass of it (what the schedule runs) has
    // certainly run with that clock once this one has, and anything it sent has been rendered once the queue drains.
    ahead = 1;
    await sweep();
    await stack.queues.get('render')!.drained();
    expect((await svc.jobs.get(job.job_id))!.status).toBe('queued');

    ahead = 3;
    let seen: { status: string; pages?: number | null } = job;
    for (let i = 0; i < 200 && seen.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await (await stack.request('GET', `/jobs/${job.job_id}`, { key: api_key })).json();
    }
    expect(seen).toMatchObject({ status: 'completed', pages: 1 });
    await stack.queues.get('render')!.drained();
    expect((await svc.jobs.dueStartRecords(new Date(Date.now() + 3_600_000).toISOString(), 10)).map((s) => s.job_id)).not.toContain(job.job_id);
    expect((await svc.accounts.get(account_id))!.credits_micros).toBe(account.credits_micros - plan.price_per_pdf_micros);
  }, 60_000);

  it('ends as a timeout, uncharged and announced, a long job whose render worker was killed mid-render', async () => {
    ahead = 0;
    const { api_key, account_id, account, plan } = await dollarAccount();
    const svc = stack.services;
    // Submitted, with its message held back from the local worker (this test plays the worker).
    const heldQueue = { send: async () => undefined };
    const { job_id } = await submitLongJob(
      { jobs: svc.jobs, blobs: svc.blobs, renderer: svc.renderer, clock: svc.clock, queue: heldQueue },
      { account, plan, request: parseLongJobRequest({ input_type: 'html', html: '<h1>Killed</h1>' }) },
    );
    await svc.jobs.startSent(job_id);
    // The worker claims it and is printing when its process dies: no outcome is ever recorded.
    let printing!: () => void;
    const atPrinter = new Promise<void>((resolve) => (printing = resolve));
    const killed: Renderer = { render: () => (printing(), new Promise(() => undefined)) } as unknown as Renderer;
    const workerDeps = { jobs: svc.jobs, blobs: svc.blobs, renderer: killed, clock: svc.clock, accounts: svc.accounts, plans: svc.plans, billing: svc.billing, mailer: svc.mailer, slots: svc.jobSlots, queue: heldQueue };
    void processLongJob(workerDeps, { job_id }, 15 * 60_000);
    await atPrinter;
    const job = async () => (await stack.request('GET', `/jobs/${job_id}`, { key: api_key })).json();
    expect(await job()).toMatchObject({ status: 'processing' });

    // Within its 15 minutes (and the lease's minute) the sweeper leaves it alone.
    ahead = 15;
    await sweep(); // a whole pass with that clock (ending a job happens within it)
    expect(await job()).toMatchObject({ status: 'processing' });

    ahead = 19;
    let seen = await job();
    for (let i = 0; i < 100 && seen.status === 'processing'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await job();
    }
    expect(seen).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'RENDER_TIMEOUT', error_message: expect.stringMatching(/within 15 minutes .*nothing was charged/) });
    expect((await svc.accounts.get(account_id))!.credits_micros).toBe(account.credits_micros);
    expect(await jobEventNames(stack, job_id)).toEqual(['job.queued', 'job.processing', 'job.failed']);
  }, 60_000);

  it('ends, uncharged and announced, a merge job whose workflow execution ended without recording its failure, freeing its slot', async () => {
    ahead = 0;
    const { api_key, account_id, account, plan } = await dollarAccount();
    const svc = stack.services;
    const upload = async () => {
      const bytes = await simplePdf(2);
      const up = await (await stack.request('POST', '/pdf/upload-url', { key: api_key, json: { content_length_bytes: bytes.length } })).json();
      expect((await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(bytes) })).status).toBe(200);
      return up.s3_key as string;
    };
    const merge = async () => ({ operation: 'merge', inputs: [{ s3_key: await upload(), filename: 'a.pdf' }, { s3_key: await upload(), filename: 'b.pdf' }] });
    // Two jobs (the most an account may run at once) whose executions start and then fail while the table cannot be
    // written: the first state marked each job processing, and neither the Catch's RecordFailure nor the report of
    // the execution's end got through. No local execution runs them (this test played their first state).
    const lost = { start: async () => ({ executionId: 'lost' }), status: async () => null };
    const deps = { ...pdfJobDeps(svc), workflows: lost };
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { job_id } = await submitPdfJob(deps, { account, plan, request: parsePdfJobRequest(await merge()) });
      await markProcessing(deps, { job_id, account_id });
      ids.push(job_id);
    }
    const job = async (id: string) => (await stack.request('GET', `/jobs/${id}`, { key: api_key })).json();
    const submit = async () => stack.request('POST', '/pdf/jobs', { key: api_key, json: await merge() });
    expect(await job(ids[0])).toMatchObject({ status: 'processing' });
    expect((await (await submit()).json()).error.code).toBe('PDF_JOB_ALREADY_ACTIVE');

    // The sweeper looks after ten minutes (and its two of grace), not before.
    ahead = 11;
    await sweep();
    expect(await job(ids[0])).toMatchObject({ status: 'processing' });

    ahead = 13;
    await sweep();
    for (const id of ids) {
      expect(await job(id)).toMatchObject({ status: 'failed', error_code: 'INTERNAL_SERVER_ERROR', error_message: expect.stringContaining('nothing was charged') });
      expect(await jobEventNames(stack, id)).toEqual(['job.failed']);
    }
    expect((await svc.accounts.get(account_id))!.credits_micros).toBe(account.credits_micros);
    expect((await svc.jobs.dueStartRecords(new Date(Date.now() + 86_400_000).toISOString(), 100)).map((s) => s.job_id)).not.toEqual(expect.arrayContaining([ids[0]]));
    // Their slots and credit commitments are free again: a new job runs and is charged.
    ahead = 0;
    const res = await submit();
    expect(res.status).toBe(202);
    const { job_id } = await res.json();
    await stack.workflows.idle();
    expect(await job(job_id)).toMatchObject({ status: 'completed' });
    expect((await svc.accounts.get(account_id))!.credits_micros).toBeLessThan(account.credits_micros);
  }, 60_000);
});
