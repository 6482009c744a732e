/**
 * Local DynamoDB: dynalite (persisted under the data dir) behind a small proxy that adds what dynalite
 * lacks and our code uses: TransactWriteItems and TransactGetItems.
 *
 * Every write (transactions and single-item writes alike) goes through one lock, so a transaction is
 * atomic and isolated relative to everything else; reads go straight to dynalite. A transaction applies its items one by
 * one as conditional single-item writes (dynalite evaluates the conditions), remembering each item's
 * previous state (returned by the write itself); if any condition fails it restores what it changed and answers
 * TransactionCanceledException with per-item CancellationReasons naming every item whose condition fails, as
 * DynamoDB does. Before the first write, the
 * items as they were go to a journal file beside the data; a process killed part-way leaves it behind, and the next
 * start puts those items back, so no half of a transaction (a charge without its job) survives a crash. Production
 * code keeps using real TransactWriteItems; only this emulator knows the difference.
 */
import { EventEmitter, once } from 'node:events';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../../functions/adapters/dynamodb/schema';
import { createLogger } from '../../functions/logger';
import { writeFileAtomic } from '../files';

type DynaliteCallback = (err: (Error & { statusCode?: number; body?: unknown }) | null, result?: unknown) => void;
type DynaliteAction = (store: unknown, data: unknown, cb: DynaliteCallback) => unknown;

/** Where a failure of the table store itself goes. */
const reportStoreFailure = (err: Error) => createLogger().error('local DynamoDB: the table store failed (is DATA_DIR full or read-only?)', err);

const GUARDED_ACTIONS = new WeakSet<DynaliteAction>();
/** True for a dynalite action that answers store failures (see answeringStoreFailures). */
export const answersStoreFailures = (action: unknown): boolean => GUARDED_ACTIONS.has(action as DynaliteAction);

/**
 * `action` answering a failure of the store itself (not a DynamoDB error: LevelDB's "IO error: No space left on
 * device", a store made read-only) as a 500 InternalServerError, which the SDK retries and the service's handlers
 * refuse as any failed write, and reporting it. dynalite ends its handler with `if (err) throw err` for such a failure,
 * thrown from LevelDB's callback: it ended the whole process, cutting every request and render in flight.
 */
export function answeringStoreFailures(action: DynaliteAction, report: (err: Error) => void = reportStoreFailure): DynaliteAction {
  const guarded: DynaliteAction = (store, data, cb) =>
    action(store, data, (err, result) => {
      if (!err || err.statusCode) return cb(err, result);
      report(err);
      const message = `The local table store failed (${err.message}); is DATA_DIR full or read-only?`;
      cb(Object.assign(new Error(message), { statusCode: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message } }));
    });
  GUARDED_ACTIONS.add(guarded);
  return guarded;
}

interface KeyElement {
  AttributeName: string;
}
interface DynaliteTable {
  KeySchema: KeyElement[];
  AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
  GlobalSecondaryIndexes?: { IndexName: string; KeySchema: KeyElement[] }[];
  LocalSecondaryIndexes?: { IndexName: string; KeySchema: KeyElement[] }[];
}
type DynaliteError = Error & { statusCode: number; body: unknown };
type AttributeValue = Record<string, any>;
/** The parts of dynalite's db module its actions call through it (looked up at each call, so they can be replaced). */
interface DynaliteDb {
  validateItem(item: Record<string, AttributeValue>, table: DynaliteTable): DynaliteError | undefined;
  validateKey(key: Record<string, AttributeValue>, table: DynaliteTable, keySchema?: KeyElement[]): DynaliteError | undefined;
  validateKeyPiece(key: Record<string, AttributeValue>, attr: string, type: string, isHash: boolean): DynaliteError | undefined;
  updateIndexes(store: unknown, table: DynaliteTable, existing: unknown, item: Record<string, AttributeValue> | null, cb: (err?: Error | null) => void): void;
  validationError(message: string): DynaliteError;
}

/** DynamoDB's key limits, in UTF-8 bytes of a string (decoded bytes of a binary), for a table's and an index's keys alike. */
const MAX_PARTITION_KEY_BYTES = 2048;
const MAX_SORT_KEY_BYTES = 1024;

/** The bytes DynamoDB counts of a key value against its limit; 0 for a number (never too large) or another type. */
function keyValueBytes(value: AttributeValue, type: string): number {
  if (type === 'S' && typeof value?.S === 'string') return Buffer.byteLength(value.S, 'utf8');
  if (type === 'B' && typeof value?.B === 'string') return Buffer.from(value.B, 'base64').length;
  return 0;
}

const attributeType = (table: DynaliteTable, attr: string) => table.AttributeDefinitions.find((d) => d.AttributeName === attr)?.AttributeType ?? 'S';

/** A key value over DynamoDB's limit, refused in its words (dynalite counted UTF-16 code units, not UTF-8 bytes). */
function keySizeError(db: DynaliteDb, value: AttributeValue, type: string, isHash: boolean): DynaliteError | undefined {
  const bytes = keyValueBytes(value, type);
  if (isHash && bytes > MAX_PARTITION_KEY_BYTES) {
    return db.validationError(`One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of${MAX_PARTITION_KEY_BYTES} bytes`);
  }
  if (!isHash && bytes > MAX_SORT_KEY_BYTES) {
    return db.validationError(`One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of ${MAX_SORT_KEY_BYTES} bytes`);
  }
  return undefined;
}

function tableKeySizeError(db: DynaliteDb, key: Record<string, AttributeValue>, table: DynaliteTable, keySchema: KeyElement[] = table.KeySchema): DynaliteError | undefined {
  for (const [i, { AttributeName: attr }] of keySchema.entries()) {
    const refused = keySizeError(db, key[attr], attributeType(table, attr), i === 0);
    if (refused) return refused;
  }
  return undefined;
}

const emptyIndexKeyError = (db: DynaliteDb, indexName: string, attr: string) =>
  db.validationError(
    `One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${indexName}, IndexKey: ${attr}`,
  );

/** An item's secondary index key that DynamoDB refuses: an empty string or binary, or a value over the key limits. */
function indexKeyError(db: DynaliteDb, item: Record<string, AttributeValue>, table: DynaliteTable): DynaliteError | undefined {
  for (const index of [...(table.GlobalSecondaryIndexes ?? []), ...(table.LocalSecondaryIndexes ?? [])]) {
    for (const [i, { AttributeName: attr }] of index.KeySchema.entries()) {
      const type = attributeType(table, attr);
      const value = item[attr]?.[type];
      // Absent: the item is not in the index (sparse). Another type is dynalite's own refusal.
      if (typeof value !== 'string') continue;
      if (value === '' && (type === 'S' || type === 'B')) return emptyIndexKeyError(db, index.IndexName, attr);
      const bytes = keyValueBytes(item[attr], type);
      const max = i === 0 ? MAX_PARTITION_KEY_BYTES : MAX_SORT_KEY_BYTES;
      if (bytes > max) {
        return db.validationError(`One or more parameter values were invalid: Size limit exceeded for Index Key ${attr} Actual Size: ${bytes} bytes Max Size: ${max} bytes IndexName: ${index.IndexName}`);
      }
    }
  }
  return undefined;
}

/** A Query's key condition value DynamoDB refuses: an empty partition key value, or a value over the key limits. */
function queryKeyError(db: DynaliteDb, data: { IndexName?: string; KeyConditions?: Record<string, { AttributeValueList?: AttributeValue[] }> }, table: DynaliteTable): DynaliteError | undefined {
  const index = data.IndexName ? [...(table.GlobalSecondaryIndexes ?? []), ...(table.LocalSecondaryIndexes ?? [])].find((i) => i.IndexName === data.IndexName) : undefined;
  // An unknown index is dynalite's own refusal.
  if (data.IndexName && !index) return undefined;
  const keySchema = index?.KeySchema ?? table.KeySchema;
  for (const [i, { AttributeName: attr }] of keySchema.entries()) {
    const type = attributeType(table, attr);
    for (const value of data.KeyConditions?.[attr]?.AttributeValueList ?? []) {
      if (i === 0 && value?.[type] === '') {
        return index
          ? emptyIndexKeyError(db, index.IndexName, attr)
          : db.validationError(`One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${attr}`);
      }
      const refused = keySizeError(db, value, type, i === 0);
      if (refused) return refused;
    }
  }
  return undefined;
}

/**
 * What real DynamoDB refuses about key values and dynalite takes, refused here too so that a code path doing it fails
 * locally as in AWS: an empty string as a secondary index key (a write, or a Query of the index), and key values over
 * DynamoDB's limits in UTF-8 bytes (dynalite counted UTF-16 code units, and looked at no Query key value). The checks
 * sit in dynalite's own validation, which every request reaches (the endpoint and the in-process client, transactions
 * as their single writes) with the table at hand. An update is checked on the item it results in, whatever expression
 * produced its index keys, before anything is written.
 */
function enforceDynamoKeyRules(): void {
  const dir = path.dirname(require.resolve('dynalite'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const db = require(path.join(dir, 'db')) as DynaliteDb;
  const { validateItem, validateKey, validateKeyPiece, updateIndexes } = db;
  db.validateItem = (item, table) => validateItem(item, table) ?? tableKeySizeError(db, item, table) ?? indexKeyError(db, item, table);
  db.validateKey = (key, table, keySchema) => validateKey(key, table, keySchema) ?? tableKeySizeError(db, key, table, keySchema);
  db.validateKeyPiece = (key, attr, type, isHash) => validateKeyPiece(key, attr, type, isHash) ?? keySizeError(db, key[attr], type, isHash);
  // Every write's resulting item passes here before it is stored (an update's only after its expression is applied).
  db.updateIndexes = (store, table, existing, item, cb) => {
    const refused = item ? indexKeyError(db, item, table) : undefined;
    if (refused) return cb(refused);
    return updateIndexes(store, table, existing, item, cb);
  };
  // A Query's key values are checked once its table is at hand: the action is given a store whose getTable checks them.
  const queryPath = path.join(dir, 'actions', 'query.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const query = require(queryPath) as DynaliteAction;
  type Store = { getTable(name: string, ...rest: unknown[]): void };
  require.cache[queryPath]!.exports = ((store, data, cb) => {
    const s = store as Store;
    const checking = Object.create(s, {
      getTable: {
        value: (name: string, ...rest: unknown[]) => {
          const done = rest.pop() as (err: Error | null, table?: DynaliteTable) => void;
          s.getTable(name, ...rest, (err: Error | null, table?: DynaliteTable) => done(err ?? (table && queryKeyError(db, data as never, table)) ?? null, table));
        },
      },
    });
    return query(checking, data, cb);
  }) satisfies DynaliteAction;
}
enforceDynamoKeyRules();

/** dynalite's actions, guarded before dynalite loads them (it takes them from the module cache). */
function guardDynaliteActions(): void {
  const actionsDir = path.join(path.dirname(require.resolve('dynalite')), 'actions');
  for (const file of readdirSync(actionsDir)) {
    if (!file.endsWith('.js')) continue;
    const modulePath = path.join(actionsDir, file);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const action = require(modulePath) as unknown;
    if (typeof action === 'function') require.cache[modulePath]!.exports = answeringStoreFailures(action as DynaliteAction);
  }
}
guardDynaliteActions();

// dynalite ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (opts: Record<string, unknown>) => http.Server;
// dynalite's own LevelDB binding, to see whether its store can be opened before dynalite opens it.
const levelPath = createRequire(require.resolve('dynalite')).resolve('level');
const { Level } = createRequire(levelPath)('level') as { Level: new (dir: string) => { open(): Promise<void>; close(): Promise<void> } };

/**
 * dynalite 4 ends a Query's or Scan's LevelDB cursor with `iterator.return()`, which the cursors of its abstract-level 3
 * do not have (they close with close()): every Query and Scan left its cursor open until the process ended, holding
 * ~10 KB of memory and the table files it read from (20,000 queries: 430 MB more, and every API-key request runs
 * one). Their common base gets the method dynalite calls.
 */
function closeCursorsOnReturn(): void {
  const classicLevelPath = createRequire(levelPath).resolve('classic-level');
  const { AbstractIterator } = createRequire(classicLevelPath)('abstract-level') as { AbstractIterator: { prototype: object } };
  const cursor = Object.getPrototypeOf(AbstractIterator.prototype) as { close(): Promise<void>; return?: () => Promise<void> };
  if (typeof cursor.close !== 'function') throw new Error('abstract-level changed: its iterators have no close(); check the local DynamoDB cursor fix');
  cursor.return ??= function (this: { close(): Promise<void> }) {
    return this.close();
  };
}
closeCursorsOnReturn();

/** How long a start waits for another process to let go of the store (one killed a moment ago may still hold it). */
const STORE_LOCK_WAIT_MS = 15_000;

/**
 * Waits until no other process holds the LevelDB store in `dir`. dynalite opens it lazily and, when it is locked,
 * throws "Database is closed" from a callback at the first request, killing the process; here the start waits for a
 * process that is still exiting (a restart right after a crash or a kill), or says which directory is in use.
 */
async function waitForFreeStore(dir: string, waitMs = STORE_LOCK_WAIT_MS): Promise<void> {
  const until = Date.now() + waitMs;
  for (;;) {
    const db = new Level(dir);
    try {
      await db.open();
      await db.close();
      return;
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      if (cause?.code !== 'LEVEL_LOCKED') {
        // LevelDB says only "Database failed to open"; why (a read-only or full DATA_DIR, a file in the way) is its cause.
        throw new Error(`The table store in ${dir} cannot be opened: ${cause?.message ?? (err as Error).message}. Check that DATA_DIR is writable and has free space.`, { cause: err });
      }
      if (Date.now() >= until) {
        throw new Error(`The table store in ${dir} is in use by another process (another \`npm start\` on the same DATA_DIR?). Stop it, or start this one with another DATA_DIR.`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

type Json = Record<string, any>;
interface Reply {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

const TARGET_PREFIX = 'DynamoDB_20120810.';
/** Beside the data dir: the items of the transaction being applied, as they were before it. */
const TRANSACTION_JOURNAL = 'transaction-journal.json';
/** What dynalite checks of a request's signature is its shape; the emulator's own requests carry this one. */
const INTERNAL_AUTH = { authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0', 'x-amz-date': '20200101T000000Z' };

interface JournalEntry {
  table: string;
  key: Json;
  before: Json | null;
}

/**
 * The entries of a journal left behind. One that does not read as entries (written atomically, it is torn only by a
 * machine that lost power before the disk had it, or by hand) stops the start: what its transaction changed cannot be
 * put back, and dropping it would keep half of that transaction without a word.
 */
function readJournal(file: string): JournalEntry[] {
  let why: string;
  try {
    const entries: unknown = JSON.parse(readFileSync(file, 'utf8'));
    const isEntry = (e: any) => typeof e?.table === 'string' && typeof e.key === 'object' && e.key !== null && typeof e.before === 'object';
    if (Array.isArray(entries) && entries.every(isEntry)) return entries;
    why = 'not a list of items';
  } catch (err) {
    why = (err as Error).message;
  }
  throw new Error(
    `The transaction journal ${file} cannot be read (${why}), so the transaction it holds cannot be put back and its items may be half written. Move the file aside to start with the table as it is.`,
  );
}

const SINGLE_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

/** What dynalite checks of a request's signature: that it is there. */
function authHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const auth: Record<string, string> = {};
  for (const h of ['authorization', 'x-amz-date', 'x-amz-security-token']) if (headers[h]) auth[h] = String(headers[h]);
  return auth;
}

function errorReply(type: string, message: string, extra: Json = {}): Reply {
  return { status: 400, body: JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra }) };
}

export interface LocalDynamo {
  endpoint: string;
  /**
   * For an SDK client in this process: the same emulator without the loopback HTTP round trip (which costs
   * the local stack a few percent of its CPU per request). The endpoint stays up for everything else.
   */
  requestHandler: DynamoDBClientConfig['requestHandler'];
  stop(): Promise<void>;
}

export async function startLocalDynamo(opts: { dataDir?: string; port?: number; tableName: string; storeLockWaitMs?: number }): Promise<LocalDynamo> {
  if (opts.dataDir) await waitForFreeStore(opts.dataDir, opts.storeLockWaitMs);
  // Beside dynalite's directory, not in it (that one is LevelDB's).
  const journal = opts.dataDir ? path.join(path.dirname(path.resolve(opts.dataDir)), `${path.basename(opts.dataDir)}-${TRANSACTION_JOURNAL}`) : null;
  // One that cannot be read stops the start before the store is opened (which the process would hold until it ends).
  if (journal && existsSync(journal)) readJournal(journal);
  const backend = dynalite({ path: opts.dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  // Requests that need no shim go straight to dynalite's own request handler, without a second HTTP hop.
  const dynaliteHandler = backend.listeners('request')[0] as http.RequestListener;
  // dynalite's server is never called over the network; it listens only so that close() shuts its store down cleanly.
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const lock = new Mutex();
  // Set by stop(): later calls are refused, and the store closes once the calls already in dynalite have answered.
  let closing = false;
  let inFlight = 0;
  const drained: (() => void)[] = [];
  const stoppedReply = (): Reply => ({ ...errorReply('InternalServerError', 'The local DynamoDB has stopped.'), status: 500 });
  const keySchemas = new Map<string, string[]>();
  // Set while a failed transaction's journal could not be put back (the store failed under the undo too).
  let unrecovered = false;

  /**
   * One call into dynalite's request handler in-process (no socket), with the caller's auth headers
   * (dynalite checks their presence, not the signature).
   */
  function call(target: string, payload: Json | string, auth: Record<string, string>): Promise<Reply> {
    // dynalite throws "Database is closed" from a callback once its store is shut, which would end the process.
    if (closing) return Promise.resolve(stoppedReply());
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    inFlight++;
    return new Promise<Reply>((resolve) => {
      const req = Object.assign(new EventEmitter(), {
        method: 'POST',
        url: '/',
        headers: { ...auth, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': TARGET_PREFIX + target, 'content-length': String(Buffer.byteLength(body)) },
      });
      const res = {
        statusCode: 200,
        contentType: '',
        setHeader: () => undefined,
        end: (data?: string | Buffer) => resolve({ status: res.statusCode, body: data ? data.toString() : '' }),
      };
      dynaliteHandler(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse);
      process.nextTick(() => {
        req.emit('data', Buffer.from(body));
        req.emit('end');
      });
    }).finally(() => {
      if (--inFlight === 0) for (const resolve of drained.splice(0)) resolve();
    });
  }

  async function keyAttributes(table: string, auth: Record<string, string>): Promise<string[]> {
    let names = keySchemas.get(table);
    if (!names) {
      const res = await call('DescribeTable', { TableName: table }, auth);
      if (res.status !== 200) throw Object.assign(new Error('describe failed'), { reply: res });
      names = (JSON.parse(res.body).Table.KeySchema as Json[]).map((k) => k.AttributeName as string);
      keySchemas.set(table, names);
    }
    return names;
  }

  async function getItem(table: string, key: Json, auth: Record<string, string>): Promise<Json | undefined> {
    const res = await call('GetItem', { TableName: table, Key: key, ConsistentRead: true }, auth);
    if (res.status !== 200) throw Object.assign(new Error('get failed'), { reply: res });
    return JSON.parse(res.body).Item;
  }

  async function restore(table: string, key: Json, before: Json | undefined, auth: Record<string, string>) {
    const res = before ? await call('PutItem', { TableName: table, Item: before }, auth) : await call('DeleteItem', { TableName: table, Key: key }, auth);
    // Not put back: the journal must stay for the next start, so the failure goes up.
    if (res.status !== 200) throw Object.assign(new Error('restore failed'), { reply: res });
  }

  /** Puts every item of an interrupted transaction back as it was before it (idempotent), then drops the journal. */
  async function recoverJournal(): Promise<number> {
    if (!journal || !existsSync(journal)) return 0;
    const entries = readJournal(journal);
    for (const e of [...entries].reverse()) await restore(e.table, e.key, e.before ?? undefined, INTERNAL_AUTH);
    rmSync(journal, { force: true });
    return entries.length;
  }

  /**
   * Under the lock, before a request is answered: a transaction that failed and could not be put back then is put
   * back first. Until it can be, the request is refused with the store's failure: it would see half a transaction,
   * and the next transaction would replace its journal, leaving that half for good.
   */
  async function recoveryRefusal(): Promise<Reply | undefined> {
    if (!unrecovered) return undefined;
    try {
      await recoverJournal();
      unrecovered = false;
      return undefined;
    } catch (err) {
      return failureReply(err);
    }
  }

  async function transactWrite(request: Json, auth: Record<string, string>): Promise<Reply> {
    const items: Json[] = request.TransactItems ?? [];
    if (!Array.isArray(items) || items.length === 0 || items.length > 100) {
      return errorReply('ValidationException', 'TransactItems must have between 1 and 100 items');
    }
    const ops: { kind: string; table: string; key: Json; body: Json; target: string }[] = [];
    for (const [index, item] of items.entries()) {
      const kind = Object.keys(item)[0];
      const body = { ...item[kind] };
      const table: string = body.TableName;
      const keyNames = await keyAttributes(table, auth);
      const key = kind === 'Put' ? Object.fromEntries(keyNames.map((n) => [n, body.Item?.[n]])) : body.Key;
      if (kind === 'Put') ops.push({ kind, table, key, body, target: 'PutItem' });
      else if (kind === 'Update') ops.push({ kind, table, key, body, target: 'UpdateItem' });
      else if (kind === 'Delete') ops.push({ kind, table, key, body, target: 'DeleteItem' });
      else if (kind === 'ConditionCheck') {
        // Without one it would be written as a plain no-op and pass; DynamoDB refuses the request (the member is required).
        if (typeof body.ConditionExpression !== 'string') {
          return errorReply(
            'ValidationException',
            `1 validation error detected: Value null at 'transactItems.${index + 1}.member.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null`,
          );
        }
        // Evaluated as a conditional no-op update; its item is put back exactly as it was afterwards.
        const names = { ...(body.ExpressionAttributeNames ?? {}), '#__txcc': '__tx_condition_check__' };
        ops.push({ kind, table, key, body: { ...body, ExpressionAttributeNames: names, UpdateExpression: 'REMOVE #__txcc' }, target: 'UpdateItem' });
      } else return errorReply('ValidationException', `Unsupported transaction item ${kind}`);
    }
    const seen = new Set(ops.map((o) => `${o.table}|${JSON.stringify(o.key)}`));
    if (seen.size !== ops.length) {
      return errorReply('ValidationException', 'Transaction request cannot include multiple operations on one item');
    }

    // The items as they are now, on disk before any is written: a crash part-way leaves the journal, and the next
    // start puts them back (recoverJournal), so a transaction is all or nothing across a crash too.
    if (journal) {
      const before: JournalEntry[] = [];
      for (const op of ops) before.push({ table: op.table, key: op.key, before: (await getItem(op.table, op.key, auth)) ?? null });
      writeFileAtomic(journal, JSON.stringify(before));
    }
    const applied: { table: string; key: Json; before: Json | undefined; kind: string }[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      const { ReturnValuesOnConditionCheckFailure, ...single } = op.body;
      // The write itself reports the item as it was (ALL_OLD), which is what undoing it needs: no read before it.
      const res = await call(op.target, { ...single, ReturnValues: 'ALL_OLD' }, auth);
      if (res.status !== 200) {
        for (const a of applied.reverse()) await restore(a.table, a.key, a.before, auth);
        const type = String(JSON.parse(res.body).__type ?? '');
        if (type.endsWith('ConditionalCheckFailedException')) {
          // A refused write changed nothing, and the lock keeps others out, so this read sees what the condition saw.
          const current = ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? await getItem(op.table, op.key, auth) : undefined;
          const failed = (item: Json | undefined) => ({ Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', ...(item ? { Item: item } : {}) });
          // DynamoDB evaluates every item's condition and names each one that failed (e.g. [None, ConditionalCheckFailed,
          // ConditionalCheckFailed]); callers that read a later position must see it too. The items before this one held;
          // those after it are checked against the items as they were (everything written is undone by now).
          const reasons: Json[] = [];
          for (let j = 0; j < ops.length; j++) {
            if (j < i) reasons.push({ Code: 'None' });
            else if (j === i) reasons.push(failed(current));
            else {
              const check = await conditionOf(ops[j], auth);
              if (check.reply) return check.reply;
              reasons.push(check.holds ? { Code: 'None' } : failed(check.item));
            }
          }
          return errorReply(
            'TransactionCanceledException',
            `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
            { CancellationReasons: reasons },
          );
        }
        return res;
      }
      applied.push({ table: op.table, key: op.key, before: JSON.parse(res.body).Attributes, kind: op.kind });
    }
    for (const a of applied) if (a.kind === 'ConditionCheck') await restore(a.table, a.key, a.before, auth);
    return { status: 200, body: '{}' };
  }

  /**
   * Whether a transaction item's condition holds on its item as it is now (true when it has none): the condition is
   * tried as a write that changes nothing (REMOVE of an attribute no item has), and the item is put back as it was.
   * `item` is the item as it is, when the condition failed and the item asked for it (ReturnValuesOnConditionCheckFailure).
   * A refusal other than the condition's is the transaction's answer (`reply`).
   */
  async function conditionOf(op: { table: string; key: Json; body: Json }, auth: Record<string, string>): Promise<{ holds: boolean; item?: Json; reply?: Reply }> {
    const condition: string | undefined = op.body.ConditionExpression;
    if (!condition) return { holds: true };
    // Only the names and values the condition uses: an Update's others belong to its UpdateExpression, and dynalite
    // (like DynamoDB) refuses ones no expression uses.
    const used = (map: Json | undefined, pattern: RegExp) => {
      const tokens = new Set(condition.match(pattern) ?? []);
      return Object.fromEntries(Object.entries(map ?? {}).filter(([k]) => tokens.has(k)));
    };
    const values = used(op.body.ExpressionAttributeValues, /:[A-Za-z0-9_]+/g);
    const res = await call(
      'UpdateItem',
      {
        TableName: op.table,
        Key: op.key,
        ConditionExpression: condition,
        UpdateExpression: 'REMOVE #__txcc',
        ExpressionAttributeNames: { ...used(op.body.ExpressionAttributeNames, /#[A-Za-z0-9_]+/g), '#__txcc': '__tx_condition_check__' },
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        ReturnValues: 'ALL_OLD',
      },
      auth,
    );
    if (res.status === 200) {
      await restore(op.table, op.key, JSON.parse(res.body).Attributes, auth);
      return { holds: true };
    }
    if (!String(JSON.parse(res.body).__type ?? '').endsWith('ConditionalCheckFailedException')) return { holds: false, reply: res };
    return { holds: false, item: op.body.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? await getItem(op.table, op.key, auth) : undefined };
  }

  async function transactGet(request: Json, auth: Record<string, string>): Promise<Reply> {
    const items: Json[] = request.TransactItems ?? [];
    const responses: Json[] = [];
    for (const item of items) {
      const get = item.Get;
      const found = await getItem(get.TableName, get.Key, auth);
      responses.push(found ? { Item: found } : {});
    }
    return { status: 200, body: JSON.stringify({ Responses: responses }) };
  }

  async function transaction(target: string, raw: string, auth: Record<string, string>): Promise<Reply> {
    try {
      return await lock.run(async () => {
        const refused = await recoveryRefusal();
        if (refused) return refused;
        if (target !== 'TransactWriteItems') return transactGet(JSON.parse(raw), auth);
        try {
          // Committed or rolled back: nothing to recover.
          const reply = await transactWrite(JSON.parse(raw), auth);
          if (journal) rmSync(journal, { force: true });
          return reply;
        } catch (err) {
          // Half applied and not rolled back (dynalite failed under it): put back what the journal holds, now, or
          // before the next request (recoveryRefusal).
          if (journal) {
            unrecovered = true;
            await recoverJournal();
            unrecovered = false;
          }
          throw err;
        }
      });
    } catch (err) {
      return failureReply(err);
    }
  }

  function failureReply(err: unknown): Reply {
    const inner = (err as { reply?: Reply }).reply;
    return inner ?? { status: 500, body: JSON.stringify({ __type: 'com.amazon.coral.service#InternalFailure', message: String(err) }) };
  }

  /** The same routing as the endpoint below, for a caller in this process. */
  function dispatch(target: string, raw: string, auth: Record<string, string>): Promise<Reply> {
    if (target === 'TransactWriteItems' || target === 'TransactGetItems') return transaction(target, raw, auth);
    if (SINGLE_WRITES.has(target) || unrecovered) return lock.run(async () => (await recoveryRefusal()) ?? call(target, raw, auth));
    return call(target, raw, auth);
  }

  await recoverJournal();

  function send(res: http.ServerResponse, reply: Reply) {
    res.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'local', 'content-length': Buffer.byteLength(reply.body) });
    res.end(reply.body);
  }
  /** A loopback request handed to dynalite as it is, counted like an in-process call so that a stop waits for it. */
  function passThrough(req: http.IncomingMessage, res: http.ServerResponse) {
    if (closing) return send(res, stoppedReply());
    inFlight++;
    let counted = true;
    const done = () => {
      if (!counted) return;
      counted = false;
      if (--inFlight === 0) for (const resolve of drained.splice(0)) resolve();
    };
    res.once('finish', done);
    res.once('close', done);
    dynaliteHandler(req, res);
  }

  const proxy = http.createServer((req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, '');
    if (target !== 'TransactWriteItems' && target !== 'TransactGetItems') {
      if (!SINGLE_WRITES.has(target) && !unrecovered) return passThrough(req, res);
      // Single-item writes queue behind transactions so a transaction is isolated from them (and reads too while one
      // waits to be put back).
      lock
        .run(async () => {
          const refused = await recoveryRefusal();
          if (refused) return send(res, refused);
          await new Promise<void>((resolve) => {
            res.once('finish', resolve);
            res.once('close', resolve);
            passThrough(req, res);
          });
        })
        .catch(() => undefined);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      send(res, await transaction(target, Buffer.concat(chunks).toString('utf8'), authHeaders(req.headers)));
    });
  });
  proxy.keepAliveTimeout = 60_000;
  proxy.listen(opts.port ?? 0, '127.0.0.1');
  await once(proxy, 'listening');
  const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  await ensureTable(endpoint, opts.tableName);

  // The AWS SDK's transport, replaced by a direct call: the request is still built, signed and parsed by the SDK.
  const requestHandler = {
    async handle(request: { headers: Record<string, string>; body?: unknown }) {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
      const body = request.body;
      // The SDK's body is a Uint8Array subclass that warns when read as a string; its bytes are read as they are.
      const raw = typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') : '';
      const reply = await dispatch(String(headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, ''), raw, authHeaders(headers));
      return {
        response: { statusCode: reply.status, reason: undefined, headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'local' }, body: Buffer.from(reply.body) },
      };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };

  return {
    endpoint,
    requestHandler: requestHandler as unknown as LocalDynamo['requestHandler'],
    async stop() {
      // A transaction under way finishes first (it holds the lock); reads in dynalite answer.
      await lock.run(async () => {
        closing = true;
      });
      if (inFlight > 0) await new Promise<void>((resolve) => drained.push(resolve));
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await new Promise<void>((resolve) => backend.close(() => resolve()));
    },
  };
}

/** Creates the table from the shared key schema unless it already exists (state survives restarts), and waits until it is ACTIVE. */
async function ensureTable(endpoint: string, tableName: string) {
  const { DynamoDBClient, CreateTableCommand, DescribeTableCommand } = await import('@aws-sdk/client-dynamodb');
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const status = async () => {
    try {
      return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus;
    } catch (err) {
      if ((err as Error).name === 'ResourceNotFoundException') return undefined;
      throw err;
    }
  };
  try {
    if ((await status()) === undefined) await client.send(new CreateTableCommand(createTableInput(tableName)));
    // dynalite answers CreateTable while the table is still CREATING and refuses item requests until it is ACTIVE.
    for (const deadline = Date.now() + 10_000; (await status()) !== 'ACTIVE'; ) {
      if (Date.now() > deadline) throw new Error(`local DynamoDB table ${tableName} did not become ACTIVE`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    client.destroy();
  }
}
