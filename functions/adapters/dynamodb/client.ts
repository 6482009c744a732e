import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ItemKey } from './schema';

export interface DynamoConfig {
  tableName: string;
  region: string;
  /** Local stand-in endpoint (dynalite); unset in AWS. */
  endpoint?: string;
  /** The local stand-in's in-process transport (see local/emulators/dynamodb.ts); unset in AWS. */
  requestHandler?: DynamoDBClientConfig['requestHandler'];
  /** How long to wait before retry `n` (1, 2, …) of a write that met a concurrent transaction; tests shorten it. */
  conflictPause?: (retry: number) => number;
}

export interface Dynamo {
  doc: DynamoDBDocumentClient;
  table: string;
}

export function createDynamo(config: DynamoConfig): Dynamo {
  const client = new DynamoDBClient({
    region: config.region,
    ...(config.endpoint
      ? { endpoint: config.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 3 }
      : {}),
    ...(config.requestHandler ? { requestHandler: config.requestHandler } : {}),
  });
  client.middlewareStack.add(unknowableKeysAreAbsent, { step: 'initialize', name: 'unknowableKeysAreAbsent' });
  client.middlewareStack.add(conflictsRetried(config.conflictPause ?? conflictPause), { step: 'initialize', name: 'conflictsRetried' });
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: false },
  });
  return { doc, table: config.tableName };
}

/** DynamoDB's refusal of a key larger than it can store (2048 bytes for a partition key, 1024 for a sort key). */
const KEY_TOO_LARGE = /size of (hash|range)key has exceeded|key .*exceed|aggregated size of all range keys/i;

/**
 * Ids come from the caller (paths, bodies). A GetItem with an id too long to be a key would be a ValidationException,
 * answered as a 500; no item can have such a key, so the read finds nothing instead, and the route says "not found".
 * (Routes read a parent item by id before they query its children.)
 */
const unknowableKeysAreAbsent = ((next: (args: unknown) => Promise<{ output: Record<string, unknown> }>, context: { commandName?: string }) =>
  async (args: unknown) => {
    try {
      return await next(args);
    } catch (err) {
      const e = err as { name?: string; message?: string; $metadata?: unknown };
      if (e?.name !== 'ValidationException' || !KEY_TOO_LARGE.test(e.message ?? '')) throw err;
      if (context.commandName === 'GetItemCommand') return { output: { $metadata: e.$metadata ?? {} } };
      throw err;
    }
  }) as never;

/** Retries after the first conflict: the pauses add up to about 2 seconds at most. */
const CONFLICT_RETRIES = 8;

/** Full jitter, doubling from 10 ms up to 400 ms: writers of one hot item spread out instead of colliding again. */
function conflictPause(retry: number): number {
  return Math.random() * Math.min(400, 10 * 2 ** retry);
}

/**
 * DynamoDB cancels a transaction that overlaps another one on the same item, and refuses a single-item write to an
 * item a transaction is writing; the SDK retries neither. Concurrent writers of one item are normal here (a bulk
 * job's file renders all count on the job item, one webhook's deliveries on its counters, one account's charges on
 * the account), so such a write is sent again after a jittered pause: it wrote nothing, and its conditions are
 * evaluated afresh. Only when conflicts persist does the caller see the error (the local emulator, which
 * serialises writes, never produces one).
 */
const conflictsRetried = (pause: (retry: number) => number) =>
  ((next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
    for (let retry = 1; ; retry++) {
      try {
        return await next(args);
      } catch (err) {
        if (retry > CONFLICT_RETRIES || !isTransactionConflict(err)) throw err;
        await new Promise((resolve) => setTimeout(resolve, pause(retry)));
      }
    }
  }) as never;

const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'ttl'];

/** The stored item without its key attributes: what domain code sees. */
export function stripKeys<T>(item: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!KEY_ATTRIBUTES.includes(k)) out[k] = v;
  return out as T;
}

/** The per-item reasons of a cancelled transaction (`ConditionalCheckFailed`, `None`, …), or null for any other error. */
export function cancellationCodes(err: unknown): string[] | null {
  if ((err as Error)?.name !== 'TransactionCanceledException') return null;
  return ((err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');
}

/**
 * True when a write met a concurrent transaction on one of its items: a transaction cancelled with reason
 * `TransactionConflict`, or a single-item write refused with `TransactionConflictException`. Nothing was written.
 */
export function isTransactionConflict(err: unknown): boolean {
  if ((err as Error)?.name === 'TransactionConflictException') return true;
  return cancellationCodes(err)?.includes('TransactionConflict') ?? false;
}

export function isConditionalCheckFailed(err: unknown): boolean {
  return (err as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** Runs a conditional write: its output, or null when its condition did not hold (any other failure is thrown). */
export async function conditional<T>(write: () => Promise<T>): Promise<T | null> {
  try {
    return await write();
  } catch (err) {
    if (isConditionalCheckFailed(err)) return null;
    throw err;
  }
}

const BATCH = 25;

/**
 * Puts and deletes in BatchWriteItem calls of 25 (DynamoDB's most), each sent again, after a doubling pause, with
 * the items DynamoDB left unprocessed (throttling does that without an error) until none is left; `what` names the
 * rows in the error thrown when some are still left after 8 retries.
 */
export async function writeBatches(db: Dynamo, requests: Record<string, unknown>[], what: string): Promise<void> {
  for (let i = 0; i < requests.length; i += BATCH) {
    let pending: Record<string, unknown>[] | undefined = requests.slice(i, i + BATCH);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error(`${what}: unprocessed items after retries`);
      if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const res = await db.doc.send(new BatchWriteCommand({ RequestItems: { [db.table]: pending as never } }));
      pending = res.UnprocessedItems?.[db.table] as Record<string, unknown>[] | undefined;
    }
  }
}

/** Every item a query matches, page after page (for access patterns bounded by design, e.g. one job's rows). */
export async function queryAll(db: Dynamo, input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(new QueryCommand({ ...input, TableName: db.table, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** One page of a newest-first query: the matching items, and the key to go on after when the query goes on. */
export interface NewestFirstPage {
  items: Record<string, unknown>[];
  /**
   * Where the next page starts: the last item returned when another match follows it, or the last item evaluated
   * when the page's read budget ran out first (every item up to it was read; the next page may find nothing more).
   */
  next?: Record<string, unknown>;
}

/**
 * Items one page may evaluate. Without it a filter that matches almost nothing read the whole partition in one
 * request (20,000 jobs at limit=1: 2,000 queries, past the list Lambda's 10 s timeout).
 */
export const MAX_EVALUATED_PER_PAGE = 2_000;

/**
 * Up to `limit` items of a newest-first query, starting after `start`. A filter can leave a DynamoDB page short, so
 * pages are read until `limit + 1` items match, the query ends, or `MAX_EVALUATED_PER_PAGE` items were evaluated:
 * `next` is set only when the extra item exists or the budget ran out with more to read. (A LastEvaluatedKey alone
 * does not say so: a page that stops at exactly the last item still has one, and the spec's `next_token` must be
 * null on the last page.)
 */
export async function queryNewestFirst(
  db: Dynamo,
  input: { index?: string; keyCondition: string; filters: string[]; names: Record<string, string>; values: Record<string, unknown> },
  limit: number,
  start?: Record<string, unknown>,
): Promise<NewestFirstPage> {
  const wanted = limit + 1;
  const items: Record<string, unknown>[] = [];
  let evaluated = 0;
  let requests = 0;
  do {
    // At least 10 evaluated per request, doubling while a filter leaves pages short: asking for the one missing item at
    // a time would crawl; never past the page's budget.
    const ask = Math.min(Math.max(wanted - items.length, 10 * 2 ** requests), MAX_EVALUATED_PER_PAGE - evaluated);
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        IndexName: input.index,
        KeyConditionExpression: input.keyCondition,
        FilterExpression: input.filters.length ? input.filters.join(' AND ') : undefined,
        ExpressionAttributeNames: Object.keys(input.names).length ? input.names : undefined,
        ExpressionAttributeValues: input.values,
        ScanIndexForward: false,
        ExclusiveStartKey: start,
        Limit: ask,
      }),
    );
    requests++;
    evaluated += ask;
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (items.length < wanted && start && evaluated < MAX_EVALUATED_PER_PAGE);
  if (items.length > limit) return { items: items.slice(0, limit), next: items[limit - 1] };
  return { items, next: start };
}

export type { ItemKey };
