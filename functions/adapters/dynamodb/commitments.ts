import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { JobCommitment } from '../../core/accounts/account';
import type { CommitmentStore } from '../../core/billing/commitments';
import { type Dynamo, conditional } from './client';
import { keys } from './schema';

/** Commitments as a map on the account item, guarded by `commitments_version` (charges do not touch either). */
export class DynamoCommitmentStore implements CommitmentStore {
  constructor(private readonly db: Dynamo) {}

  async replace(accountId: string, version: number, commitments: Record<string, JobCommitment>, at: Date): Promise<boolean> {
    const written = await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.account(accountId),
          UpdateExpression: 'SET commitments = :commitments, commitments_version = :next, updated_at = :at',
          ConditionExpression: `attribute_exists(pk) AND ${version === 0 ? 'attribute_not_exists(commitments_version)' : 'commitments_version = :version'}`,
          ExpressionAttributeValues: { ':commitments': commitments, ':next': version + 1, ':at': at.toISOString(), ...(version === 0 ? {} : { ':version': version }) },
        }),
      ),
    );
    return written !== null;
  }

  async release(accountId: string, jobId: string): Promise<void> {
    // Nothing to release when the job holds no commitment.
    await conditional(() =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.table,
          Key: keys.account(accountId),
          // The version moves too, so a check that read the commitment before this cannot write it back.
          UpdateExpression: 'REMOVE commitments.#job ADD commitments_version :one',
          ConditionExpression: 'attribute_exists(commitments.#job)',
          ExpressionAttributeNames: { '#job': jobId },
          ExpressionAttributeValues: { ':one': 1 },
        }),
      ),
    );
  }
}
