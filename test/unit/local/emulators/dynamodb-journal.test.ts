import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type LocalDynamo, startLocalDynamo } from '../../../../local/emulators/dynamodb';
import { JOURNAL_IDS, journalKey, journalSeed, journalTransaction } from '../../../support/dynamo-journal-items';

/**
 * The stand-in applies a transaction's items one by one, after writing the items as they were to a journal. Whatever
 * stops it part-way (the store failing under it, the process killed, the process killed again while putting a
 * transaction back) must leave every item as it was before the transaction.
 */
const TABLE = 'journal-test';
const CHILD = path.resolve(__dirname, '../../../support/dynamo-journal-child.ts');

const journalOf = (dataDir: string) => `${dataDir}-transaction-journal.json`;

/** Runs the child (see dynamo-journal-child.ts) to its end: killed after its k-th item write, or finished. */
function runChild(mode: 'transact' | 'recover', dataDir: string, k: number): Promise<{ killed: boolean; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, mode, dataDir, TABLE, String(k)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // The SDK's warning about Node versions is not the child's failure.
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  child.stdout.resume();
  return new Promise((resolve) => child.once('exit', (_code, signal) => resolve({ killed: signal === 'SIGKILL', stderr })));
}

function clientOf(dynamo: LocalDynamo) {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, requestHandler: dynamo.requestHandler, maxAttempts: 1 }),
  );
}

/** Every item the transaction touches, as it is now (undefined: absent); the one put back last is read first. */
async function itemsNow(doc: DynamoDBDocumentClient, table = TABLE): Promise<Record<string, unknown>> {
  const found: Record<string, unknown> = {};
  for (const id of JOURNAL_IDS) found[id] = (await doc.send(new GetCommand({ TableName: table, Key: journalKey(id), ConsistentRead: true }))).Item;
  return found;
}

/** The items as they were before the transaction: the replaced one with its removed attribute, the created ones absent. */
const itemsBefore = (): Record<string, unknown> => {
  const seed = Object.fromEntries(journalSeed().map((item) => [item.pk.slice(2), item]));
  return Object.fromEntries(JOURNAL_IDS.map((id) => [id, seed[id]]));
};

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'ddb-journal-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
const freshDataDir = (name: string) => path.join(mkdtempSync(path.join(root, `${name}-`)), 'dynamodb');

describe('local DynamoDB: a process killed part-way through a transaction', () => {
  // 1: one item written; 4: the four kinds of write; 44: every item written, the journal not yet dropped.
  it.each([1, 2, 4, 44])('is put back whole at the next start, killed after item write %i', async (k) => {
    const dataDir = freshDataDir(`kill-${k}`);
    const run = await runChild('transact', dataDir, k);
    expect([run.killed, run.stderr]).toEqual([true, '']);
    expect(existsSync(journalOf(dataDir))).toBe(true);

    let dynamo = await startLocalDynamo({ dataDir, tableName: TABLE });
    let doc = clientOf(dynamo);
    try {
      // Read as soon as the start answers: no request may see the store before it is put back.
      expect(await itemsNow(doc)).toEqual(itemsBefore());
      expect(existsSync(journalOf(dataDir))).toBe(false);
      // A write after the recovery stays: the journal it came from does not put the item back again at the next start.
      await doc.send(new PutCommand({ TableName: TABLE, Item: { ...journalKey('a'), v: 3 } }));
      doc.destroy();
      await dynamo.stop();
      dynamo = await startLocalDynamo({ dataDir, tableName: TABLE });
      doc = clientOf(dynamo);
      expect((await doc.send(new GetCommand({ TableName: TABLE, Key: journalKey('a'), ConsistentRead: true }))).Item).toEqual({ ...journalKey('a'), v: 3 });
      // And transactions go on.
      await doc.send(new TransactWriteCommand({ TransactItems: journalTransaction(TABLE) }));
      expect((await itemsNow(doc)).b).toEqual({ ...journalKey('b'), v: 2 });
    } finally {
      doc.destroy();
      await dynamo.stop();
    }
  });

  it('is put back by a later start when the process putting it back was killed too, twice', async () => {
    const dataDir = freshDataDir('kill-recovery');
    expect((await runChild('transact', dataDir, 44)).killed).toBe(true);
    // Putting back writes the items in reverse: after 10, some created items are deleted; after 43, all but the first.
    for (const k of [10, 43]) expect(await runChild('recover', dataDir, k)).toEqual({ killed: true, stderr: '' });
    const dynamo = await startLocalDynamo({ dataDir, tableName: TABLE });
    const doc = clientOf(dynamo);
    try {
      expect(await itemsNow(doc)).toEqual(itemsBefore());
      expect(existsSync(journalOf(dataDir))).toBe(false);
    } finally {
      doc.destroy();
      await dynamo.stop();
    }
  });
});

/**
 * The journal is written whole or not at all (written beside, then renamed), so a killed process never tears it; a
 * machine that lost power before the disk had it, or an edit by hand, can. What its transaction changed can then not be
 * put back, and starting without it would keep half of that transaction without a word: the start stops and says so.
 */
describe('local DynamoDB: a journal that cannot be read', () => {
  it.each([
    ['empty', '', /Unexpected end of JSON input/],
    ['torn', '[{"table":"journal-test","key":{"pk":"J#a","sk":"X"},"before":{"pk":"J#a","sk":"X","v":1,"go', /JSON/],
    ['not a list of items', '{"table":"journal-test"}', /not a list of items/],
    ['a list of something else', '[1]', /not a list of items/],
  ])('stops the start, naming the file, when it is %s, and keeps it', async (_name, content, why) => {
    const dataDir = freshDataDir('torn');
    await (await startLocalDynamo({ dataDir, tableName: TABLE })).stop();
    const journal = journalOf(dataDir);
    writeFileSync(journal, content);
    const start = startLocalDynamo({ dataDir, tableName: TABLE, storeLockWaitMs: 300 });
    await expect(start).rejects.toThrow(`The transaction journal ${journal} cannot be read`);
    await expect(start).rejects.toThrow(why);
    await expect(start).rejects.toThrow(/Move the file aside/);
    expect(readFileSync(journal, 'utf8')).toBe(content);
    // Moved aside, the store starts (the refused start did not keep it open).
    renameSync(journal, `${journal}.aside`);
    await (await startLocalDynamo({ dataDir, tableName: TABLE, storeLockWaitMs: 300 })).stop();
  });
});

/**
 * A failure of the store itself (a full disk, a read-only DATA_DIR) injected where dynalite writes: LevelDB's put and
 * delete, as classic-level answers them when the disk is full.
 */
describe('local DynamoDB: the store failing part-way through a transaction', () => {
  type Write = (this: unknown, key: unknown, ...rest: unknown[]) => Promise<unknown>;
  const levelRequire = createRequire(createRequire(require.resolve('dynalite')).resolve('level'));
  const { ClassicLevel } = createRequire(levelRequire.resolve('classic-level'))('classic-level') as { ClassicLevel: { prototype: Record<'_put' | '_del', Write> } };
  const originals = { _put: ClassicLevel.prototype._put, _del: ClassicLevel.prototype._del };
  /** Decides, for each item write from now on (counted from 1), whether it fails. */
  let failing: ((write: number) => boolean) | null = null;
  let writes = 0;
  const failFrom = (decide: (write: number) => boolean) => {
    writes = 0;
    failing = decide;
  };
  beforeAll(() => {
    for (const method of ['_put', '_del'] as const) {
      ClassicLevel.prototype[method] = function (key, ...rest) {
        if (failing && String(key).startsWith('item-') && failing(++writes)) return Promise.reject(new Error('IO error: 000005.log: No space left on device'));
        return originals[method].call(this, key, ...rest);
      };
    }
  });
  afterAll(() => Object.assign(ClassicLevel.prototype, originals));
  afterEach(() => (failing = null));

  let dynamo: LocalDynamo;
  let doc: DynamoDBDocumentClient;
  let dataDir: string;
  beforeEach(async () => {
    dataDir = freshDataDir('store-failure');
    dynamo = await startLocalDynamo({ dataDir, tableName: TABLE });
    doc = clientOf(dynamo);
    for (const item of journalSeed()) await doc.send(new PutCommand({ TableName: TABLE, Item: item }));
  });
  afterEach(async () => {
    doc.destroy();
    await dynamo.stop();
  });

  const transact = () => doc.send(new TransactWriteCommand({ TransactItems: journalTransaction(TABLE) }));

  it('answers the transaction as failed and leaves every item as it was when one write fails', async () => {
    failFrom((write) => write === 3);
    await expect(transact()).rejects.toMatchObject({ name: 'InternalServerError', message: expect.stringContaining('No space left on device') });
    failing = null;
    expect(await itemsNow(doc)).toEqual(itemsBefore());
    expect(existsSync(journalOf(dataDir))).toBe(false);
    await transact();
    expect((await itemsNow(doc)).b).toEqual({ ...journalKey('b'), v: 2 });
  });

  it('puts the items back once the store can be written again, before any later request, when it stays failed for a while', async () => {
    // From the third write on, everything fails: undoing the first two in place fails too.
    failFrom((write) => write >= 3);
    await expect(transact()).rejects.toMatchObject({ name: 'InternalServerError' });
    const loopback = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 }));
    try {
      // Still failing, both ways in: no read sees half the transaction, and no later write takes the place of its journal.
      for (const client of [doc, loopback]) {
        await expect(client.send(new GetCommand({ TableName: TABLE, Key: journalKey('a') }))).rejects.toMatchObject({ name: 'InternalServerError' });
        await expect(client.send(new PutCommand({ TableName: TABLE, Item: { ...journalKey('other'), v: 1 } }))).rejects.toMatchObject({ name: 'InternalServerError' });
        await expect(client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...journalKey('other'), v: 1 } } }] }))).rejects.toMatchObject({
          name: 'InternalServerError',
        });
      }
      failing = null;
      // Room again: the first request, a read, already sees the item as it was.
      expect((await loopback.send(new GetCommand({ TableName: TABLE, Key: journalKey('a') }))).Item).toEqual(itemsBefore().a);
    } finally {
      loopback.destroy();
    }
    await doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...journalKey('other'), v: 1 } } }] }));
    expect(await itemsNow(doc)).toEqual(itemsBefore());
    expect((await doc.send(new GetCommand({ TableName: TABLE, Key: journalKey('other') }))).Item).toEqual({ ...journalKey('other'), v: 1 });
    expect(existsSync(journalOf(dataDir))).toBe(false);
    await transact();
    expect((await itemsNow(doc)).a).toEqual({ ...journalKey('a'), v: 2 });
  });

  it('puts the items back before the next transaction when the store stays failed for a while (no read comes first)', async () => {
    failFrom((write) => write >= 3);
    await expect(transact()).rejects.toMatchObject({ name: 'InternalServerError' });
    failing = null;
    // The journal it left would be replaced by this transaction's, leaving half of the first for good.
    await doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...journalKey('other'), v: 1 } } }] }));
    expect(await itemsNow(doc)).toEqual(itemsBefore());
  });

  it.each(['in-process', 'loopback'])('puts the items back before the next single write (%s), which stays', async (transport) => {
    failFrom((write) => write >= 3);
    await expect(transact()).rejects.toMatchObject({ name: 'InternalServerError' });
    failing = null;
    const client =
      transport === 'in-process'
        ? doc
        : DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 }));
    try {
      // Written before the transaction was put back, it would be undone by that.
      await client.send(new PutCommand({ TableName: TABLE, Item: { ...journalKey('a'), v: 5 } }));
    } finally {
      if (client !== doc) client.destroy();
    }
    expect(await itemsNow(doc)).toEqual({ ...itemsBefore(), a: { ...journalKey('a'), v: 5 } });
  });
});
