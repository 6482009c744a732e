import type { Context, SQSEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../../functions/composition';
import { handler } from '../../../../functions/workers/longjob/render';
import { newJob } from '../../../../functions/core/jobs/job';
import { MemoryJobs } from '../../../support/memory';

afterEach(() => setServices(null));

describe('long-job render worker', () => {
  it('finishes the message of a job that no longer exists, touching nothing else', async () => {
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const svc = { jobs: new MemoryJobs(), clock: { now: () => new Date() }, config: {}, log };
    for (const name of ['blobs', 'renderer', 'accounts', 'plans', 'billing', 'mailer', 'jobSlots', 'renderQueue']) Object.defineProperty(svc, name, { get: () => ({}) });
    setServices(svc as unknown as Services);
    const event = { Records: [{ messageId: 'm1', body: JSON.stringify({ job_id: 'job_gone' }), attributes: { ApproximateReceiveCount: '1' } }] } as unknown as SQSEvent;
    // A job that no longer exists is skipped: the message is done, not failed back for redelivery.
    expect(await handler(event)).toEqual({ batchItemFailures: [] });
    expect(log.error).not.toHaveBeenCalled();
  });

  it('drops a message that names no job (it would fail on every delivery), logging it', async () => {
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const redelivery = { after: jest.fn(async () => undefined) };
    setServices({ jobs: new MemoryJobs(), clock: { now: () => new Date() }, config: {}, log, redelivery } as unknown as Services);
    const event = { Records: ['not json', '{}', '{"job_id":""}'].map((body, i) => ({ messageId: `m${i}`, body, attributes: { ApproximateReceiveCount: '1' } })) } as unknown as SQSEvent;
    expect(await handler(event)).toEqual({ batchItemFailures: [] });
    expect(redelivery.after).not.toHaveBeenCalled();
    expect(log.error.mock.calls.map((c) => c[0])).toEqual(['m0', 'm1', 'm2'].map((id) => `render message ${id} is not a job message; dropped`));
  });

  it('gives a job up on its last delivery, and hands the message back when even that cannot be recorded', async () => {
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const jobs = new MemoryJobs();
    await jobs.put(newJob({ job_id: 'job_stuck', account_id: 'acct1', job_type: 'long', status: 'processing', mode: 'html', now: new Date() }));
    const redelivery = { after: jest.fn(async () => undefined) };
    const svc = { jobs, clock: { now: () => new Date() }, config: {}, log, redelivery };
    // Every render dependency fails: the unexpected failure path.
    for (const name of ['blobs', 'renderer', 'accounts', 'plans', 'billing', 'mailer', 'jobSlots', 'renderQueue']) Object.defineProperty(svc, name, { get: () => { throw new Error(`${name} down`); } });
    setServices(svc as unknown as Services);
    const delivery = (count: number) => ({ Records: [{ messageId: 'm1', body: JSON.stringify({ job_id: 'job_stuck' }), attributes: { ApproximateReceiveCount: String(count) } }] }) as unknown as SQSEvent;
    expect(await handler(delivery(1))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect((await jobs.get('job_stuck'))!.status).toBe('processing');
    // It comes back after the queue's first backoff, not after the 90-minute visibility timeout.
    expect(redelivery.after).toHaveBeenLastCalledWith(expect.objectContaining({ messageId: 'm1' }), 60);
    redelivery.after.mockRejectedValueOnce(new Error('sqs throttled'));
    expect(await handler(delivery(2))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(redelivery.after).toHaveBeenLastCalledWith(expect.anything(), 300);

    const putIf = jobs.putIf.bind(jobs);
    jobs.putIf = async () => {
      throw new Error('table throttled');
    };
    expect(await handler(delivery(3))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    jobs.putIf = putIf;
    expect(await handler(delivery(3))).toEqual({ batchItemFailures: [] });
    expect(await jobs.get('job_stuck')).toMatchObject({ status: 'failed', error_code: 'PDF_GENERATION_FAILED', error_message: expect.stringMatching(/Submit it again/) });
  });

  it('renders within what is left of the Lambda run less the margin to record the outcome (at least a second), not the whole job limit', async () => {
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const jobs = new MemoryJobs();
    await jobs.put(newJob({ job_id: 'job_q', account_id: 'acct1', job_type: 'long', status: 'queued', mode: 'html', now: new Date() }));
    // The slot is full, so the job is deferred; the lease it asked for (budget + 60 s) shows the budget it was given.
    const leases: number[] = [];
    const jobSlots = { acquire: async (a: { leaseSeconds: number }) => (leases.push(a.leaseSeconds), false) };
    const renderQueue = { send: jest.fn(async () => undefined) };
    setServices({ jobs, jobSlots, renderQueue, clock: { now: () => new Date() }, config: {}, log } as unknown as Services);
    const event = { Records: [{ messageId: 'm1', body: JSON.stringify({ job_id: 'job_q' }), attributes: { ApproximateReceiveCount: '1' } }] } as unknown as SQSEvent;
    const context = (ms: number) => ({ getRemainingTimeInMillis: () => ms }) as unknown as Context;
    expect(await handler(event, context(100_000))).toEqual({ batchItemFailures: [] });
    expect(await handler(event, context(10_000))).toEqual({ batchItemFailures: [] });
    // 100 s left: 70 s to render; 10 s left: the one-second floor.
    expect(leases).toEqual([130, 61]);
    expect(renderQueue.send).toHaveBeenCalledTimes(2);
  });
});
