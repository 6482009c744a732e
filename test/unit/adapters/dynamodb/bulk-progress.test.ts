import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoBulkProgress } from '../../../../functions/adapters/dynamodb/bulk-progress';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { putJobIf } from '../../../../functions/adapters/dynamodb/jobs';
import type { JobFileRow } from '../../../../functions/core/jobs/files';
import type { Job } from '../../../../functions/core/jobs/job';
import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/jobs';
import { newJob } from '../../../../functions/core/jobs/job';
import { withLocalTable } from '../../../support/local-table';
import { cancelled, ok, scriptedDynamo } from '../../../support/scripted-dynamo';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const row: JobFileRow = { index: 0, input: 'a.html', output: null, status: 'success', pages: 1, error_code: null, error_message: null, blocked_requests: 0, render_timeout: false, missing_assets: 0, key: 'k' };

/** Up to ten file renders of one bulk job commit on the same job item at once: DynamoDB then cancels some for conflicts. */
describe('DynamoBulkProgress.recordFile under contention', () => {
  it('records the row once a conflicting transaction has passed', async () => {
    const { db, sent } = scriptedDynamo([cancelled(['None', 'TransactionConflict']), ok]);
    await expect(new DynamoBulkProgress(db).recordFile('job1', row)).resolves.toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('fails (so the task is retried) rather than report a lasting conflict as "already recorded"', async () => {
    const { db } = scriptedDynamo([cancelled(['None', 'TransactionConflict'])]);
    await expect(new DynamoBulkProgress(db).recordFile('job1', row)).rejects.toMatchObject({ name: 'TransactionCanceledException' });
  });

  it('answers false when the row exists or the job stopped processing', async () => {
    for (const codes of [['ConditionalCheckFailed', 'None'], ['None', 'ConditionalCheckFailed']]) {
      // A success then tries to replace a CANCELLED skip, whose condition fails the same way.
      const { db } = scriptedDynamo([cancelled(codes), cancelled(codes)]);
      await expect(new DynamoBulkProgress(db).recordFile('job1', row)).resolves.toBe(false);
    }
  });
});

describe('putJobIf under contention', () => {
  const job = { job_id: 'job1', account_id: 'acc', status: 'completed', created_at: '2026-01-01T00:00:00.000Z' } as Job;
  const event = { event_id: 'ev01', job_id: 'job1', account_id: 'acc', type: 'job.completed', created_at: '2026-01-01T00:00:00.000Z' } as never;

  it('says the condition failed only when it did', async () => {
    const { db } = scriptedDynamo([cancelled(['ConditionalCheckFailed', 'None'])]);
    await expect(putJobIf(db, job, '#status = :s', { ':s': 'processing' }, [event])).resolves.toBe(false);
  });

  it('reports a lasting conflict as an error, not as "the job moved on"', async () => {
    const { db } = scriptedDynamo([cancelled(['TransactionConflict', 'None'])]);
    await expect(putJobIf(db, job, '#status = :s', { ':s': 'processing' }, [event])).rejects.toMatchObject({ name: 'TransactionCanceledException' });
  });
});

describe('DynamoBulkProgress against dynalite', () => {
  const table = withLocalTable('progress', (db) => ({ db, jobs: new DynamoJobRepository(db), progress: new DynamoBulkProgress(db) }));

  it('keeps the job counts in step with its rows while it runs: processed, and each a success or a failure', async () => {
    const { db, jobs, progress } = table;
    await jobs.put({ ...newJob({ job_id: 'job_b1', account_id: 'acct1', job_type: 'bulk', status: 'processing', now: new Date() }), success_count: 0, failure_count: 0 });
    expect(await progress.setCounts('job_b1', { file_count: 4, processed_count: 1, failure_count: 1 })).toBe(true);
    await progress.recordFile('job_b1', { ...row, index: 1 });
    await progress.recordFile('job_b1', { ...row, index: 2, status: 'failed', error_code: 'RENDER_FAILED' });
    await progress.recordFile('job_b1', { ...row, index: 3, status: 'skipped', error_code: 'CANCELLED' });
    // Recorded once: a second outcome of a file is not written, and counts nothing.
    expect(await progress.recordFile('job_b1', { ...row, index: 2 })).toBe(false);
    expect(await progress.recordFile('job_b1', { ...row, index: 1, status: 'failed', error_code: 'RENDER_FAILED' })).toBe(false);
    expect(await jobs.get('job_b1')).toMatchObject({ file_count: 4, processed_count: 4, success_count: 1, failure_count: 3 });
    // Except a made PDF over the CANCELLED skip a retry of its task wrote while it printed: it replaces the skip once.
    expect(await progress.recordFile('job_b1', { ...row, index: 3 })).toBe(true);
    expect(await progress.recordFile('job_b1', { ...row, index: 3 })).toBe(false);
    expect(await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.jobFile('job_b1', 3) }))).toMatchObject({ Item: { status: 'success', error_code: null } });
    expect(await jobs.get('job_b1')).toMatchObject({ file_count: 4, processed_count: 4, success_count: 2, failure_count: 2 });
  });

  it('never moves the counts back: a stale Prepare attempt that counted the rows before files were recorded changes nothing', async () => {
    const { jobs, progress } = table;
    await jobs.put({ ...newJob({ job_id: 'job_s1', account_id: 'acct1', job_type: 'bulk', status: 'processing', now: new Date() }), file_count: null, success_count: 0, failure_count: 0 });
    // Prepare: one of four files was too large (a failure row without a count step).
    const prepared = { file_count: 4, processed_count: 1, failure_count: 1 };
    expect(await progress.setCounts('job_s1', prepared)).toBe(true);
    await progress.recordFile('job_s1', { ...row, index: 1 });
    await progress.recordFile('job_s1', { ...row, index: 2, status: 'failed', error_code: 'RENDER_FAILED' });
    // An earlier attempt of the same Prepare (Step Functions retried it while it still ran) writes what it counted.
    expect(await progress.setCounts('job_s1', prepared)).toBe(true);
    expect(await jobs.get('job_s1')).toMatchObject({ file_count: 4, processed_count: 3, success_count: 1, failure_count: 2 });
    // A run started over after a crash between writing too-large rows and counting them does raise the counts.
    expect(await progress.setCounts('job_s1', { file_count: 4, processed_count: 4, failure_count: 3 })).toBe(true);
    expect(await jobs.get('job_s1')).toMatchObject({ file_count: 4, processed_count: 4, success_count: 1, failure_count: 3 });
    // A job that is no longer processing is not written, stale or not.
    await jobs.put({ ...(await jobs.get('job_s1'))!, status: 'completed' });
    expect(await progress.setCounts('job_s1', prepared)).toBe(false);
    expect(await progress.setCounts('job_s1', { file_count: 4, processed_count: 9, failure_count: 0 })).toBe(false);
    expect(await jobs.get('job_s1')).toMatchObject({ status: 'completed', processed_count: 4, failure_count: 3 });
  });

  it('finishes a job only over the cancel request Finish read: a cancel that arrived meanwhile survives', async () => {
    const { jobs, progress } = table;
    const running = newJob({ job_id: 'job_f1', account_id: 'acct1', job_type: 'bulk', status: 'processing', now: new Date() });
    await jobs.put(running);
    // Finish read no cancel request; one arrives before its write.
    expect(await progress.requestCancel('job_f1')).toBe(true);
    expect(await progress.finishJob({ ...running, status: 'completed' }, [], false)).toBe(false);
    expect(await jobs.get('job_f1')).toMatchObject({ status: 'processing', cancel_requested: true });
    // Finish read it: its write (the cancelled outcome) goes through.
    expect(await progress.finishJob({ ...running, status: 'cancelled' }, [], true)).toBe(true);
    expect(await jobs.get('job_f1')).toMatchObject({ status: 'cancelled' });
  });
});
