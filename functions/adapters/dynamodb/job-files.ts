import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { JobFileRepository, JobFileRow } from '../../core/jobs/files';
import { type Dynamo, queryAll, stripKeys } from './client';
import { keys } from './schema';

const BATCH = 25;

/** Per-file result rows: `JOB#<job_id>` / `FILE#<index>`, read back in index order with one query. */
export class DynamoJobFileRepository implements JobFileRepository {
  constructor(private readonly db: Dynamo) {}

  private async batch(requests: Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < requests.length; i += BATCH) {
      let pending: Record<string, unknown>[] | undefined = requests.slice(i, i + BATCH);
      for (let attempt = 0; pending && pending.length > 0; attempt++) {
        if (attempt > 8) throw new Error('job file rows: unprocessed items after retries');
        if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
        const res = await this.db.doc.send(new BatchWriteCommand({ RequestItems: { [this.db.table]: pending as never } }));
        pending = res.UnprocessedItems?.[this.db.table] as Record<string, unknown>[] | undefined;
      }
    }
  }

  async putAll(jobId: string, rows: JobFileRow[]): Promise<void> {
    await this.batch(rows.map((row) => ({ PutRequest: { Item: { ...keys.jobFile(jobId, row.index), job_id: jobId, ...row } } })));
  }

  async list(jobId: string): Promise<JobFileRow[]> {
    const items = await queryAll(this.db, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.jobFile(jobId, 0).pk, ':prefix': keys.jobFilePrefix },
      ConsistentRead: true,
    });
    return items.map((item) => {
      const { job_id: _jobId, ...row } = stripKeys<JobFileRow & { job_id: string }>(item);
      return row;
    });
  }

  async get(jobId: string, index: number): Promise<JobFileRow | null> {
    if (!Number.isSafeInteger(index) || index < 0 || index > 999_999) return null;
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.jobFile(jobId, index), ConsistentRead: true }));
    if (!Item) return null;
    const { job_id: _jobId, ...row } = stripKeys<JobFileRow & { job_id: string }>(Item);
    return row;
  }

  async deleteAll(jobId: string): Promise<void> {
    const rows = await this.list(jobId);
    await this.batch(rows.map((row) => ({ DeleteRequest: { Key: keys.jobFile(jobId, row.index) } })));
  }
}
