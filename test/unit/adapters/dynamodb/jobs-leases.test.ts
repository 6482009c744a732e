import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { completed, newJob } from '../../../../functions/core/jobs/job';
import { withLocalTable } from '../../../support/local-table';

/** Against dynalite: a worker's writes under its lease, as DynamoDB evaluates the conditions. */
describe('DynamoJobRepository: writes under a lease', () => {
  const table = withLocalTable('leases', (db) => ({ jobs: new DynamoJobRepository(db) }));

  const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 10, minute));

  it('putIfLeaseHeld writes only while the job is processing under that very lease: a worker taken over cannot complete it', async () => {
    const job = newJob({ job_id: 'job_L1', account_id: 'acct1', job_type: 'long', status: 'queued', now: at(0) });
    await table.jobs.put(job);
    const first = { ...job, status: 'processing' as const, started_at: at(1).toISOString(), lease_until: at(5).toISOString() };
    expect(await table.jobs.putIf(first, ['queued'])).toBe(true);
    // The first worker's lease ran out; a second worker takes the job over under a new lease.
    const second = { ...first, lease_until: at(20).toISOString() };
    expect(await table.jobs.putIf(second, [], [], at(6).toISOString())).toBe(true);

    expect(await table.jobs.putIfLeaseHeld(completed(first, at(7)), first.lease_until)).toBe(false);
    expect(await table.jobs.get(job.job_id)).toMatchObject({ status: 'processing', lease_until: second.lease_until, completed_at: null });

    expect(await table.jobs.putIfLeaseHeld(completed(second, at(8)), second.lease_until)).toBe(true);
    // Finished: not even the lease that finished it writes again.
    expect(await table.jobs.putIfLeaseHeld(completed(second, at(9)), second.lease_until)).toBe(false);
    expect(await table.jobs.get(job.job_id)).toMatchObject({ status: 'completed', completed_at: at(8).toISOString() });
  });

  it('a takeover needs the lease to have ended before its time: a lease ending at that very instant is still held', async () => {
    const job = { ...newJob({ job_id: 'job_L2', account_id: 'acct1', job_type: 'long', status: 'processing', now: at(0) }), lease_until: at(5).toISOString() };
    await table.jobs.put(job);
    const takeover = { ...job, lease_until: at(20).toISOString() };
    expect(await table.jobs.putIf(takeover, [], [], at(5).toISOString())).toBe(false);
    expect(await table.jobs.putIf(takeover, [], [], new Date(at(5).getTime() + 1).toISOString())).toBe(true);
  });
});
