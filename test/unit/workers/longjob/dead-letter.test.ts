import type { SQSEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../../functions/composition';
import { newAccount } from '../../../../functions/core/accounts/account';
import { newJob } from '../../../../functions/core/jobs/job';
import { handler } from '../../../../functions/workers/longjob/dead-letter';
import { MemoryJobs } from '../../../support/memory';

afterEach(() => setServices(null));

const event = (...bodies: string[]) => ({ Records: bodies.map((body, i) => ({ messageId: `m${i}`, body })) }) as unknown as SQSEvent;

describe('render dead-letter worker', () => {
  it('fails the job of a dead letter, and drops (and reports) a message that names no job', async () => {
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const jobs = new MemoryJobs();
    await jobs.put(newJob({ job_id: 'job_dead', account_id: 'acct1', job_type: 'long', status: 'queued', mode: 'html', now: new Date() }));
    const account = newAccount({ account_id: 'acct1', email: 'owner@example.com', plan_id: 'standard', now: new Date() });
    const mails: { to: string }[] = [];
    const accounts = { get: async (id: string) => (id === 'acct1' ? account : null) };
    const mailer = { send: async (m: { to: string }) => void mails.push(m) };
    setServices({ jobs, accounts, mailer, clock: { now: () => new Date() }, config: {}, log } as unknown as Services);

    expect(await handler(event(JSON.stringify({ job_id: 'job_dead' }), 'not json', '{}', 'null', JSON.stringify({ job_id: 7 })))).toEqual({ batchItemFailures: [] });
    expect(await jobs.get('job_dead')).toMatchObject({ status: 'failed', error_code: 'PDF_GENERATION_FAILED' });
    // With the failure email the worker would have sent.
    expect(mails.map((m) => m.to)).toEqual(['owner@example.com']);
    // Every body that is not a job message is said to be one, not passed over in silence.
    expect(log.error.mock.calls.map(([m]) => m)).toEqual(['m1', 'm2', 'm3', 'm4'].map((id) => `render dead letter ${id} is not a job message; dropped`));
  });

  it('reports a dead letter back when its job cannot be ended now (the table fails), so it comes again', async () => {
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const jobs = new MemoryJobs();
    await jobs.put(newJob({ job_id: 'job_stuck', account_id: 'acct1', job_type: 'long', status: 'processing', mode: 'html', now: new Date() }));
    const failing = Object.assign(Object.create(jobs), { get: async () => Promise.reject(new Error('table unavailable')) });
    setServices({ jobs: failing, accounts: { get: async () => null }, mailer: { send: async () => undefined }, clock: { now: () => new Date() }, config: {}, log } as unknown as Services);

    // Dropped, it would leave the job processing for ever: nothing else ends a job whose every delivery died.
    expect(await handler(event(JSON.stringify({ job_id: 'job_stuck' })))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }] });
    expect(await jobs.get('job_stuck')).toMatchObject({ status: 'processing' });
  });
});
