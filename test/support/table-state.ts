/** What the local table holds for an account, read directly (invariant checks after faults or load settle). */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type Dynamo, createDynamo } from '../../functions/adapters/dynamodb/client';
import { keys } from '../../functions/adapters/dynamodb/schema';
import type { TestStack } from './stack';

type Item = Record<string, any>;

/** The end event a job emits for each end status (one of these, per the event kinds of spec documents 1 and 2). */
export const TERMINAL_EVENT: Record<string, string[]> = {
  completed: ['job.completed', 'bulk.job.completed'],
  partial_failed: ['bulk.job.partial'],
  failed: ['job.failed', 'bulk.job.failed'],
  timeout: ['job.failed'],
  cancelled: ['bulk.job.cancelled'],
};

export interface AccountState {
  account: Item;
  charges: Item[];
  jobs: Item[];
  /** Each job's outbox events, by event id. */
  events: Map<string, Item[]>;
  /** Slots held (released ones keep no job id). */
  slots: Item[];
  starts: Item[];
  /** Each job's file rows. */
  files: Map<string, Item[]>;
  /** Everything in the account's partition. */
  items: Item[];
}

/** A client of the stack's table of its own (not the one the services share, which a test may intercept). */
export function tableReader(stack: TestStack) {
  const { config } = stack.services;
  const db: Dynamo = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });

  /** Every item of partition `pk` (of the table, consistently, or of the GSI), all pages. */
  async function query(pk: string, index?: 'gsi1'): Promise<Item[]> {
    const out: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await db.doc.send(
        new QueryCommand({
          TableName: db.table,
          IndexName: index,
          KeyConditionExpression: index ? 'gsi1pk = :pk' : 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ExclusiveStartKey: start,
          ConsistentRead: index ? undefined : true,
        }),
      );
      out.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return out;
  }

  async function stateOf(accountId: string): Promise<AccountState> {
    const items = await query(keys.account(accountId).pk);
    const jobs = await Promise.all((await query(keys.jobsOfAccount(accountId), 'gsi1')).map(async (j) => (await query(keys.job(j.job_id).pk)).find((i) => i.sk === 'JOB')!));
    const events = new Map<string, Item[]>();
    const files = new Map<string, Item[]>();
    const starts: Item[] = [];
    for (const job of jobs) {
      const all = await query(keys.job(job.job_id).pk);
      events.set(job.job_id, all.filter((i) => i.sk.startsWith('EVENT#')).sort((a, b) => a.event_id.localeCompare(b.event_id)));
      files.set(job.job_id, all.filter((i) => i.sk.startsWith('FILE#')));
      starts.push(...all.filter((i) => i.sk === 'START'));
    }
    return {
      account: items.find((i) => i.sk === 'ACCOUNT')!,
      charges: items.filter((i) => i.sk.startsWith('CHARGE#')),
      slots: items.filter((i) => i.sk.startsWith('SLOT#') && i.job_id),
      jobs,
      events,
      files,
      starts,
      items,
    };
  }

  return { db, query, stateOf };
}

/** Waits for the stack's queues and workflows to have nothing left to do; false when they still work after `ms`. */
export async function settled(stack: TestStack, ms: number): Promise<boolean> {
  const done = (async () => {
    for (let i = 0; i < 3; i++) {
      await stack.workflows.idle();
      for (const q of stack.queues.values()) await q.drained();
    }
    return true;
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const result = await Promise.race([done, late]);
  clearTimeout(timer);
  return result;
}
