import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { newJob } from '../../../../functions/core/jobs/job';
import { withLocalTable } from '../../../support/local-table';

/** Against dynalite: a queued job's start record, written with the job and listed through the sparse index. */
describe('DynamoJobRepository: unsent starts', () => {
  const table = withLocalTable('starts', (db) => ({ jobs: new DynamoJobRepository(db) }));

  const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 10, minute));
  const queued = (id: string, minute: number) => newJob({ job_id: id, account_id: 'acct1', job_type: 'long', status: 'queued', now: at(minute) });

  it('lists the starts recorded before a time, oldest first across shards, until each is confirmed sent', async () => {
    // Ids ending in different characters fall into different shards.
    await table.jobs.put(queued('job_01ZZ', 3), [], { via: 'render-queue' });
    await table.jobs.put(queued('job_01A1', 1), [], { via: 'workflow', workflow: 'bulk' });
    await table.jobs.put(queued('job_01B7', 2), [], { via: 'render-queue' });
    await table.jobs.put(queued('job_01C4', 9), [], { via: 'render-queue' });
    await table.jobs.put(queued('job_plain', 0));

    const listed = await table.jobs.dueStartRecords(at(5).toISOString(), 10);
    expect(listed).toEqual([
      { job_id: 'job_01A1', account_id: 'acct1', created_at: at(1).toISOString(), due_at: at(1).toISOString(), start: { via: 'workflow', workflow: 'bulk' } },
      { job_id: 'job_01B7', account_id: 'acct1', created_at: at(2).toISOString(), due_at: at(2).toISOString(), start: { via: 'render-queue' } },
      { job_id: 'job_01ZZ', account_id: 'acct1', created_at: at(3).toISOString(), due_at: at(3).toISOString(), start: { via: 'render-queue' } },
    ]);
    expect((await table.jobs.dueStartRecords(at(5).toISOString(), 2)).map((s) => s.job_id)).toEqual(['job_01A1', 'job_01B7']);

    await table.jobs.startSent('job_01A1');
    await table.jobs.startSent('job_never_recorded');
    expect((await table.jobs.dueStartRecords(at(5).toISOString(), 10)).map((s) => s.job_id)).toEqual(['job_01B7', 'job_01ZZ']);
    // The job itself stays.
    expect(await table.jobs.get('job_01A1')).toMatchObject({ status: 'queued' });
  });

  it('re-arms the record as a watch due at the lease end when a worker claims the job, and removes only the watch it read', async () => {
    const job = queued('job_01W9', 0);
    await table.jobs.put(job, [], { via: 'render-queue' });
    await table.jobs.startSent(job.job_id);
    const lease = at(17).toISOString();
    const claimed = { ...job, status: 'processing' as const, started_at: at(1).toISOString(), lease_until: lease };
    expect(await table.jobs.putIf(claimed, ['queued'], [], at(1).toISOString(), { via: 'render-queue' })).toBe(true);
    expect((await table.jobs.dueStartRecords(at(16).toISOString(), 10)).map((s) => s.job_id)).not.toContain(job.job_id);
    expect((await table.jobs.dueStartRecords(at(18).toISOString(), 10)).find((s) => s.job_id === job.job_id)).toEqual({
      job_id: job.job_id,
      account_id: 'acct1',
      created_at: at(0).toISOString(),
      due_at: lease,
      start: { via: 'render-queue' },
    });

    // A second claim after the lease ran out moves the watch on; removing the first one's leaves it.
    const again = { ...claimed, lease_until: at(40).toISOString() };
    expect(await table.jobs.putIf(again, ['queued'], [], at(18).toISOString(), { via: 'render-queue' })).toBe(true);
    await table.jobs.startSent(job.job_id, lease);
    expect((await table.jobs.dueStartRecords(at(41).toISOString(), 10)).find((s) => s.job_id === job.job_id)?.due_at).toBe(at(40).toISOString());
    await table.jobs.startSent(job.job_id, at(40).toISOString());
    expect((await table.jobs.dueStartRecords(at(41).toISOString(), 10)).map((s) => s.job_id)).not.toContain(job.job_id);
  });

  it('moves a workflow job\'s record on as its watch, only from the due time it read, never bringing back one removed', async () => {
    const job = queued('job_01V5', 0);
    await table.jobs.put(job, [], { via: 'workflow', workflow: 'pdfop' });
    expect(await table.jobs.watchStart(job.job_id, at(0).toISOString(), at(10).toISOString())).toBe(true);
    expect((await table.jobs.dueStartRecords(at(9).toISOString(), 10)).map((s) => s.job_id)).not.toContain(job.job_id);
    expect((await table.jobs.dueStartRecords(at(11).toISOString(), 10)).find((s) => s.job_id === job.job_id)).toEqual({
      job_id: job.job_id,
      account_id: 'acct1',
      created_at: at(0).toISOString(),
      due_at: at(10).toISOString(),
      start: { via: 'workflow', workflow: 'pdfop' },
    });
    // Watches are listed apart from starts, each family up to the limit: a later lost start is not held back by them.
    // (Earlier tests of this file left older starts behind; this watch is the file's only one.)
    const [start, ...watches] = await table.jobs.dueStartRecords(at(11).toISOString(), 1);
    expect([start.job_id, start.due_at === start.created_at]).toEqual([expect.not.stringMatching('job_01V5'), true]);
    expect(watches.map((s) => s.job_id)).toEqual(['job_01V5']);
    // Another look moved it on meanwhile: this one's write does nothing.
    expect(await table.jobs.watchStart(job.job_id, at(0).toISOString(), at(30).toISOString())).toBe(false);
    expect((await table.jobs.dueStartRecords(at(11).toISOString(), 10)).find((s) => s.job_id === job.job_id)?.due_at).toBe(at(10).toISOString());
    // The job ended and its record went: a late look does not write it again.
    await table.jobs.startSent(job.job_id);
    expect(await table.jobs.watchStart(job.job_id, at(10).toISOString(), at(20).toISOString())).toBe(false);
    expect((await table.jobs.dueStartRecords(at(59).toISOString(), 10)).map((s) => s.job_id)).not.toContain(job.job_id);
  });

  it('writes over an expired lease alone when no status is given, and refuses to write with no condition at all', async () => {
    const job = { ...queued('job_01X2', 0), status: 'processing' as const, lease_until: at(5).toISOString() };
    await table.jobs.put(job);
    const ended = { ...job, status: 'timeout' as const, lease_until: null };
    expect(await table.jobs.putIf(ended, [], [], at(4).toISOString())).toBe(false);
    expect(await table.jobs.putIf(ended, [], [], at(6).toISOString())).toBe(true);
    await expect(table.jobs.putIf(ended, [])).rejects.toThrow(/needs a status/);
  });
});

describe('DynamoJobRepository: unsent starts across shards', () => {
  const table = withLocalTable('starts-order', (db) => ({ jobs: new DynamoJobRepository(db) }));
  const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 10, minute));
  const queued = (id: string, minute: number) => newJob({ job_id: id, account_id: 'acct1', job_type: 'long', status: 'queued', now: at(minute) });

  it('lists the oldest first also when a later shard holds it (the sweeper takes the longest-lost starts first)', async () => {
    // Shards are read in order 0…7: the older record sits in shard 7 (…ZZ), the newer in shard 1 (…A1).
    await table.jobs.put(queued('job_03ZZ', 1), [], { via: 'render-queue' });
    await table.jobs.put(queued('job_03A1', 2), [], { via: 'render-queue' });
    expect((await table.jobs.dueStartRecords(at(5).toISOString(), 10)).map((s) => s.job_id)).toEqual(['job_03ZZ', 'job_03A1']);
    expect((await table.jobs.dueStartRecords(at(5).toISOString(), 1)).map((s) => s.job_id)).toEqual(['job_03ZZ']);
  });
});
