import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { JobFileRepository, JobFileRow } from '../../core/jobs/files';
import { type Dynamo, queryAll, stripKeys, writeBatches } from './client';
import { keys } from './schema';

/** Per-file result rows: `JOB#<job_id>` / `FILE#<index>`, read back in index order with one query. */
export class DynamoJobFileRepository implements JobFileRepository {
  constructor(private readonly db: Dynamo) {}

  private batch(requests: Record<string, unknown>[]): Promise<void> {
    return writeBatches(this.db, requests, 'job file rows');
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
