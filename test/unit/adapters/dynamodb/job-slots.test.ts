import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobSlots } from '../../../../functions/adapters/dynamodb/job-slots';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { withLocalTable } from '../../../support/local-table';

/** Against dynalite: the conditional puts as DynamoDB evaluates them. */
describe('DynamoJobSlots', () => {
  const table = withLocalTable('slots', (db) => ({ db, slots: new DynamoJobSlots(db) }));

  const now = new Date('2026-11-22T10:00:00Z');
  const take = (accountId: string, jobId: string, at = now, kind = 'render') => table.slots.acquire({ accountId, kind, jobId, max: 2, now: at, leaseSeconds: 60 });

  it('gives at most `max` slots per account and kind, frees one on release, and lets an expired lease be taken over', async () => {
    expect([await take('acct_a', 'job_1'), await take('acct_a', 'job_2'), await take('acct_a', 'job_3')]).toEqual([true, true, false]);
    // Other accounts and other kinds count apart.
    expect([await take('acct_b', 'job_4'), await take('acct_a', 'job_5', now, 'bulk')]).toEqual([true, true]);
    await table.slots.release({ accountId: 'acct_a', kind: 'render', jobId: 'job_1' });
    expect(await take('acct_a', 'job_3')).toBe(true);
    // job_2 and job_3 hold both slots until their leases end; then a new job takes one over.
    expect(await take('acct_a', 'job_6', new Date(now.getTime() + 59_000))).toBe(false);
    expect(await take('acct_a', 'job_6', new Date(now.getTime() + 61_000))).toBe(true);
    // The late release of a job whose slot was taken over leaves the new holder's slot alone.
    await table.slots.release({ accountId: 'acct_a', kind: 'render', jobId: 'job_2' });
    await table.slots.release({ accountId: 'acct_a', kind: 'render', jobId: 'job_3' });
    const holders = await Promise.all([0, 1].map(async (n) => (await table.db.doc.send(new GetCommand({ TableName: table.db.table, Key: keys.jobSlot('acct_a', 'render', n) }))).Item?.job_id));
    expect(holders.filter(Boolean)).toEqual(['job_6']);
  });

  it('with a named holder, a late release by an attempt whose lease ran out leaves the slot of the attempt that took over', async () => {
    const attempt = (holder: string, at: Date) => table.slots.acquire({ accountId: 'acct_h', kind: 'render', jobId: 'job_h', holder, max: 1, now: at, leaseSeconds: 60 });
    expect(await attempt('first', now)).toBe(true);
    expect(await attempt('second', new Date(now.getTime() + 30_000))).toBe(false);
    expect(await attempt('second', new Date(now.getTime() + 61_000))).toBe(true);
    await table.slots.release({ accountId: 'acct_h', kind: 'render', jobId: 'job_h', holder: 'first' });
    const slot = await table.db.doc.send(new GetCommand({ TableName: table.db.table, Key: keys.jobSlot('acct_h', 'render', 0) }));
    expect(slot.Item).toMatchObject({ job_id: 'job_h', holder: 'second' });
    await table.slots.release({ accountId: 'acct_h', kind: 'render', jobId: 'job_h', holder: 'second' });
    expect(await table.slots.acquire({ accountId: 'acct_h', kind: 'render', jobId: 'job_other', max: 1, now: new Date(now.getTime() + 62_000), leaseSeconds: 60 })).toBe(true);
  });

  it('a release whose slot another attempt took over between its read and its delete leaves that slot (the condition, not the read, decides)', async () => {
    const attempt = (slots: DynamoJobSlots, holder: string, at: Date) => slots.acquire({ accountId: 'acct_r', kind: 'render', jobId: 'job_r', holder, max: 1, now: at, leaseSeconds: 60 });
    expect(await attempt(table.slots, 'first', now)).toBe(true);
    let tookOver = false;
    // The takeover lands just before the late release's delete reaches the table.
    const send = async (command: unknown) => {
      if (command instanceof DeleteCommand && !tookOver) tookOver = await attempt(table.slots, 'second', new Date(now.getTime() + 61_000));
      return table.db.doc.send(command as GetCommand);
    };
    const racing = new DynamoJobSlots({ table: table.db.table, doc: { send } as unknown as DynamoDBDocumentClient });
    await racing.release({ accountId: 'acct_r', kind: 'render', jobId: 'job_r', holder: 'first' });
    expect(tookOver).toBe(true);
    const slot = await table.db.doc.send(new GetCommand({ TableName: table.db.table, Key: keys.jobSlot('acct_r', 'render', 0) }));
    expect(slot.Item).toMatchObject({ job_id: 'job_r', holder: 'second' });
  });

  it('names the jobs holding a slot under a live lease, per account and kind', async () => {
    await take('acct_n', 'job_n1');
    await take('acct_n', 'job_n2', new Date(now.getTime() - 59_000));
    await take('acct_n', 'job_other_kind', now, 'bulk');
    await take('acct_m', 'job_other_account');
    expect((await table.slots.holders({ accountId: 'acct_n', kind: 'render', now })).sort()).toEqual(['job_n1', 'job_n2']);
    // job_n2's lease ran out a second ago.
    expect(await table.slots.holders({ accountId: 'acct_n', kind: 'render', now: new Date(now.getTime() + 2_000) })).toEqual(['job_n1']);
  });

  it('never hands out more than `max` slots to acquisitions at the same moment', async () => {
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => take('acct_burst', `job_b${i}`)));
    expect(outcomes.filter(Boolean)).toHaveLength(2);
  });

  it('names only the slots taken strictly before `takenBefore`', async () => {
    await take('acct_tb', 'job_early', new Date(now.getTime() - 1_000));
    await take('acct_tb', 'job_at', now);
    expect(await table.slots.holders({ accountId: 'acct_tb', kind: 'render', now, takenBefore: now })).toEqual(['job_early']);
  });

  /** The slot's put fails one of two ways: before it reaches the table (`failed`), or after it went through (`lost` reply). */
  function faultyOnPut(fault: 'failed' | 'lost') {
    let armed = true;
    const send = async (command: unknown) => {
      if (!armed || !(command instanceof PutCommand)) return table.db.doc.send(command as GetCommand);
      armed = false;
      if (fault === 'lost') await table.db.doc.send(command);
      throw Object.assign(new Error(fault === 'lost' ? 'socket hang up' : 'Rate exceeded'), { name: fault === 'lost' ? 'TimeoutError' : 'ThrottlingException' });
    };
    return new DynamoJobSlots({ table: table.db.table, doc: { send } as unknown as DynamoDBDocumentClient });
  }

  it('holds a slot whose put went through with its reply lost, and reports one that was not written', async () => {
    const acquire = (slots: DynamoJobSlots, at: Date) => slots.acquire({ accountId: 'acct_lost', kind: 'render', jobId: 'job_lost', max: 1, now: at, leaseSeconds: 60 });
    expect(await acquire(faultyOnPut('lost'), now)).toBe(true);
    expect(await table.slots.holders({ accountId: 'acct_lost', kind: 'render', now })).toEqual(['job_lost']);
    // Its lease ran out; the same job asks again and the put never reaches the table: the expired slot it still finds
    // (same holder, an older lease) is not the one this acquire would have written.
    const later = new Date(now.getTime() + 120_000);
    await expect(acquire(faultyOnPut('failed'), later)).rejects.toThrow('Rate exceeded');
    expect(await table.slots.holders({ accountId: 'acct_lost', kind: 'render', now: later })).toEqual([]);
  });
});
