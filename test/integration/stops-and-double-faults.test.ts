import { parseLongJobRequest, submitLongJob } from '../../functions/core/conversion/longjob';
import { handler as sweep } from '../../functions/workers/jobs/start-sweep';
import { type TestStack, jobEventNames, startTestStack } from '../support/stack';
import { type TableFaults, interceptTable, putItems, tableError } from '../support/table-faults';

/**
 * A handler stopped part-way (a Lambda killed at its time limit between two writes: no catch runs) and double faults
 * (a write whose reply is lost, then a read-back that fails): what the client is told must agree with the job and the
 * ledger, and nothing may stay held for good.
 */
describe('stops and double faults', () => {
  let stack: TestStack;
  let table: TableFaults;
  let ahead = 0;
  beforeAll(async () => {
    stack = await startTestStack({}, { clock: { now: () => new Date(Date.now() + ahead * 60_000) } });
    table = interceptTable(stack);
  });
  afterEach(() => {
    table.hook = null;
    ahead = 0;
  });
  afterAll(() => stack.stop());
  const credits = async (accountId: string) => (await stack.services.accounts.get(accountId))!.credits_micros;

  it('POST /quickjob whose charge committed with its reply lost, while reads fail for a second: the PDF, charged once', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const before = await credits(user.account_id);
    let failReadsUntil = 0;
    let faulted = false;
    table.hook = (cmd, send) => {
      if (cmd.constructor.name === 'GetCommand' && Date.now() < failReadsUntil) return Promise.reject(tableError('read failed'));
      if (!faulted && putItems(cmd).some((i) => i.commit_token && i.account_id === user.account_id)) {
        faulted = true;
        // The write commits; its reply is lost; the table cannot be read for the next second.
        return send(cmd).then(() => {
          failReadsUntil = Date.now() + 1000;
          throw tableError('socket hang up', 'TimeoutError');
        });
      }
      return undefined;
    };
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<h1>Paid</h1>' } });
    const bytes = Buffer.from(await res.arrayBuffer());
    table.hook = null;
    expect(faulted).toBe(true);
    expect(res.status).toBe(200);
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const plan = (await stack.services.plans.get((await stack.services.accounts.get(user.account_id))!.plan_id!))!;
    expect(before - (await credits(user.account_id))).toBe(plan.price_per_pdf_micros);
    expect((await stack.services.jobs.list({ accountId: user.account_id, limit: 10 })).jobs.map((j) => j.status)).toEqual(['completed']);
  }, 60_000);

  it('POST /longjob whose queue send went through with its reply lost after a worker completed the job: accepted, completed, charged once', async () => {
    const { account_id } = await stack.account({ credits_usd: 1 });
    const svc = stack.services;
    const account = (await svc.accounts.get(account_id))!;
    const plan = (await svc.plans.get(account.plan_id!))!;
    // The message is sent; its reply is lost (the SDK gives up) only after the worker has rendered and charged the job.
    const lostReply = {
      send: async (m: { job_id: string }) => {
        await svc.renderQueue.send(m);
        for (let i = 0; i < 200 && (await svc.jobs.get(m.job_id))?.status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 50));
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      },
    };
    const job = await submitLongJob(
      { jobs: svc.jobs, blobs: svc.blobs, renderer: svc.renderer, clock: svc.clock, queue: lostReply },
      { account, plan, request: parseLongJobRequest({ input_type: 'html', html: '<h1>Sent</h1>' }) },
    );
    await stack.queues.get('render')!.drained();
    expect(await svc.jobs.get(job.job_id)).toMatchObject({ status: 'completed' });
    expect(account.credits_micros - (await credits(account_id))).toBe(plan.price_per_pdf_micros);
    expect(await jobEventNames(stack, job.job_id)).toEqual(['job.queued', 'job.processing', 'job.completed']);
  }, 60_000);

  it('POST /bulkjob stopped between taking a slot and writing its job: the slot is given back once no submission can still be running', async () => {
    const user = await stack.account({ credits_usd: 5 });
    const body = { bundle_type: 'html', files: [{ path: 'a.html', content_base64: Buffer.from('<p>a</p>').toString('base64') }] };
    // The submitter's Lambda is killed while it writes the job: that write never returns. Twice: both slots are taken.
    table.hook = (cmd) => (putItems(cmd).some((i) => i.job_type === 'bulk' && i.account_id === user.account_id && i.status === 'queued') ? new Promise(() => undefined) : undefined);
    for (let i = 0; i < 2; i++) {
      const headers = { 'X-API-Key': user.api_key, 'Content-Type': 'application/json' };
      await fetch(`${stack.baseUrl}/bulkjob`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(1500) }).catch(() => undefined);
    }
    table.hook = null;
    expect((await stack.services.jobs.list({ accountId: user.account_id, limit: 10 })).jobs).toEqual([]);
    // While such a submission could still be running, its slot stays held.
    const early = await stack.request('POST', '/bulkjob', { key: user.api_key, json: body });
    expect([early.status, (await early.json()).error?.code]).toEqual([409, 'BULK_JOB_ALREADY_ACTIVE']);
    // Later (the slots' leases would hold them two hours), the account can submit again.
    ahead = 11;
    await sweep();
    const res = await stack.request('POST', '/bulkjob', { key: user.api_key, json: body });
    expect(res.status).toBe(202);
    ahead = 0;
    await stack.workflows.idle();
  }, 60_000);
});
