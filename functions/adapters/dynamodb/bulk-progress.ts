import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BulkProgress, PreparedCounts } from '../../core/bulk/ports';
import type { OutboxEvent } from '../../core/events/events';
import type { JobFileRow } from '../../core/jobs/files';
import type { Job } from '../../core/jobs/job';
import { ledgerOfJob } from './charges';
import { type Dynamo, cancellationCodes, conditional } from './client';
import { putJobIf } from './jobs';
import { keys } from './schema';

const PROCESSING = { '#status': 'status' };

/**
 * Bulk job writes that concurrent file renders make to one job item: attribute updates (never whole-item
 * puts, which would overwrite each other's counts or a cancel request), each conditional on the job still
 * processing. A file's row and its count steps (`processed_count`, and `success_count` or `failure_count`) are one
 * transaction, so a retried render adds nothing.
 * Finish's whole-item put is conditional on the cancel request it read, so a cancel arriving meanwhile survives.
 */
export class DynamoBulkProgress implements BulkProgress {
  constructor(private readonly db: Dynamo) {}

  async recordFile(jobId: string, row: JobFileRow): Promise<boolean> {
    // The job's counts follow its rows while it runs; Finish writes the final ones.
    const counted = row.status === 'success' ? 'success_count' : 'failure_count';
    if (await this.writeRow(jobId, row, { condition: 'attribute_not_exists(pk)' }, `ADD processed_count :one, ${counted} :one`, { ':one': 1 })) return true;
    // A PDF made by a render whose printing started before the cancel wins over the CANCELLED skip a retry of the same
    // task wrote meanwhile (Step Functions may run it again while the first invocation still prints): the made PDF is
    // kept and charged, as the 202 promised. Only that skip is replaced, only while the job is processing.
    if (row.status !== 'success') return false;
    const cancelSkip = { condition: '#status = :skipped AND error_code = :cancelled', values: { ':skipped': 'skipped', ':cancelled': 'CANCELLED' } };
    return this.writeRow(jobId, row, cancelSkip, 'ADD success_count :one, failure_count :less', { ':one': 1, ':less': -1 });
  }

  /**
   * The file's row (under `row.condition`) and the job's counts (`counts`, while it is processing) in one transaction.
   * False when a condition failed (the row is not the one expected, or the job is no longer processing); anything
   * else (a conflict that outlasted the retries) must fail the task, which is retried, not lose the file's result.
   */
  private async writeRow(
    jobId: string,
    row: JobFileRow,
    rowIf: { condition: string; values?: Record<string, unknown> },
    counts: string,
    countValues: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.db.table,
                Item: { ...keys.jobFile(jobId, row.index), job_id: jobId, ...row },
                ConditionExpression: rowIf.condition,
                ...(rowIf.values ? { ExpressionAttributeNames: PROCESSING, ExpressionAttributeValues: rowIf.values } : {}),
              },
            },
            {
              Update: {
                TableName: this.db.table,
                Key: keys.job(jobId),
                ConditionExpression: '#status = :processing',
                UpdateExpression: counts,
                ExpressionAttributeNames: PROCESSING,
                ExpressionAttributeValues: { ':processing': 'processing', ...countValues },
              },
            },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (cancellationCodes(err)?.includes('ConditionalCheckFailed')) return false;
      throw err;
    }
  }

  /** `SET set` on the job while it is processing and `also` (a further condition) holds; false when either does not. */
  private async update(jobId: string, set: string, values: Record<string, unknown>, also?: string): Promise<boolean> {
    const written = await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.job(jobId),
          ConditionExpression: also ? `#status = :processing AND (${also})` : '#status = :processing',
          UpdateExpression: `SET ${set}`,
          ExpressionAttributeNames: PROCESSING,
          ExpressionAttributeValues: { ':processing': 'processing', ...values },
        }),
      ),
    );
    return written !== null;
  }

  async setCounts(jobId: string, counts: PreparedCounts): Promise<boolean> {
    // Only forward: a stale attempt counted fewer rows than the renders have recorded since (file_count is null until
    // the first Prepare counts, and the same for every attempt after).
    const values = { ':file_count': counts.file_count, ':processed_count': counts.processed_count, ':failure_count': counts.failure_count };
    const forward = 'NOT file_count = :file_count OR attribute_not_exists(processed_count) OR processed_count < :processed_count';
    if (await this.update(jobId, 'file_count = :file_count, processed_count = :processed_count, failure_count = :failure_count', values, forward)) return true;
    // Not written: the counts were already ahead (true, nothing to do) or the job is no longer processing.
    const stored = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.job(jobId), ProjectionExpression: '#status', ExpressionAttributeNames: PROCESSING, ConsistentRead: true }));
    return stored.Item?.status === 'processing';
  }

  requestCancel(jobId: string): Promise<boolean> {
    return this.update(jobId, 'cancel_requested = :yes', { ':yes': true });
  }

  async finishJob(job: Job, events: OutboxEvent[], cancelSeen: boolean): Promise<boolean> {
    // cancel_requested only ever goes from absent/false to true, so "not true" is "unchanged since Finish read it".
    if (cancelSeen) return putJobIf(this.db, job, '#status = :processing', { ':processing': 'processing' }, events);
    const unchanged = '#status = :processing AND (attribute_not_exists(cancel_requested) OR cancel_requested <> :yes)';
    return putJobIf(this.db, job, unchanged, { ':processing': 'processing', ':yes': true }, events);
  }

  async chargedUnits(accountId: string, jobId: string): Promise<Set<string>> {
    const prefix = keys.charge(accountId, jobId, '').sk;
    const items = await ledgerOfJob(this.db, accountId, jobId, 'sk');
    return new Set(items.map((item) => String(item.sk).slice(prefix.length)));
  }
}
