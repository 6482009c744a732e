import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, ScanCommand, TransactGetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { answeringStoreFailures, answersStoreFailures, startLocalDynamo } from '../../../../local/emulators/dynamodb';
import { EMULATOR_TRANSPORTS, withLocalEmulator } from '../../../support/local-emulator';

const TABLE = 'emulator-test';
const emulator = withLocalEmulator(TABLE);

describe('local DynamoDB start-up', () => {
  it('waits for another holder of its store to let go (a process still exiting), and says which DATA_DIR is in use if it does not', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ddb-locked-'));
    const holder = await startLocalDynamo({ dataDir: dir, tableName: 'locked-test' });
    try {
      // dynalite used to throw "Database is closed" from a callback at the first request, killing the process.
      await expect(startLocalDynamo({ dataDir: dir, tableName: 'locked-test', storeLockWaitMs: 300 })).rejects.toThrow(/in use by another process .*another DATA_DIR/);
      const waiting = startLocalDynamo({ dataDir: dir, tableName: 'locked-test', storeLockWaitMs: 10_000 });
      await new Promise((r) => setTimeout(r, 400));
      await holder.stop();
      const next = await waiting;
      await next.stop();
    } finally {
      await holder.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says which store cannot be opened and why (LevelDB says only "Database failed to open")', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ddb-blocked-'));
    // A file where the store's directory should be: as a read-only or full DATA_DIR, the store cannot be opened.
    const store = path.join(dir, 'dynamodb');
    writeFileSync(store, 'not a directory');
    try {
      await expect(startLocalDynamo({ dataDir: store, tableName: 'blocked-test', storeLockWaitMs: 300 })).rejects.toThrow(
        new RegExp(`The table store in ${store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be opened: .+DATA_DIR is writable`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers only once its table is ACTIVE (dynalite creates tables asynchronously)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ddb-startup-'));
    const fresh = await startLocalDynamo({ dataDir: dir, tableName: 'startup-test' });
    const client = new DynamoDBClient({ endpoint: fresh.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      expect((await client.send(new DescribeTableCommand({ TableName: 'startup-test' }))).Table?.TableStatus).toBe('ACTIVE');
    } finally {
      client.destroy();
      await fresh.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('local DynamoDB stop', () => {
  it('lets a transaction under way finish, then refuses later requests with an error instead of ending the process', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ddb-stop-'));
    let stopping = await startLocalDynamo({ dataDir: dir, tableName: 'stop-test' });
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: stopping.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, requestHandler: stopping.requestHandler, maxAttempts: 1 }),
    );
    const item = (id: string) => ({ pk: `STOP#${id}`, sk: 'ITEM', v: 1 });
    try {
      // Sent together: the stop comes while the transaction holds the lock.
      const written = client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 'stop-test', Item: item('a') } }, { Put: { TableName: 'stop-test', Item: item('b') } }] }));
      await new Promise((resolve) => setImmediate(resolve));
      const stopped = stopping.stop();
      await written;
      await stopped;
      // dynalite threw "Database is closed" from a callback here, which no caller could catch.
      await expect(client.send(new GetCommand({ TableName: 'stop-test', Key: { pk: 'STOP#a', sk: 'ITEM' } }))).rejects.toMatchObject({ name: 'InternalServerError', message: expect.stringMatching(/stopped/) });
      stopping = await startLocalDynamo({ dataDir: dir, tableName: 'stop-test' });
      const again = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: stopping.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
      try {
        for (const id of ['a', 'b']) expect((await again.send(new GetCommand({ TableName: 'stop-test', Key: { pk: `STOP#${id}`, sk: 'ITEM' } }))).Item).toEqual(item(id));
      } finally {
        again.destroy();
      }
    } finally {
      client.destroy();
      await stopping.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Both ways in: the loopback endpoint (other tools) and the in-process transport (the local service).
describe.each(EMULATOR_TRANSPORTS)('local DynamoDB transactions %s', (_name, transport) => {
  let client: DynamoDBDocumentClient;
  beforeAll(() => {
    client = emulator.client(transport);
  });

  const key = (id: string) => ({ pk: `T#${transport}#${id}`, sk: 'ITEM' });
  const read = async (id: string) => (await client.send(new GetCommand({ TableName: TABLE, Key: key(id), ConsistentRead: true }))).Item;
  const put = (id: string, item: Record<string, unknown>) => client.send(new PutCommand({ TableName: TABLE, Item: { ...key(id), ...item } }));

  async function cancellation(send: Promise<unknown>) {
    const err = (await send.then(
      () => {
        throw new Error('the transaction went through');
      },
      (e: unknown) => e,
    )) as { name: string; CancellationReasons?: { Code: string; Item?: Record<string, unknown> }[] };
    expect(err.name).toBe('TransactionCanceledException');
    return err.CancellationReasons!;
  }

  it('answers a refused single write as DynamoDB does', async () => {
    await put('s0', { v: 1 });
    await expect(
      client.send(new PutCommand({ TableName: TABLE, Item: { ...key('s0'), v: 2 }, ConditionExpression: 'attribute_not_exists(pk)' })),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect((await read('s0'))?.v).toBe(1);
  });

  it('applies puts, updates and deletes together', async () => {
    await put('u1', { balance: 10 });
    await put('d1', { note: 'goes' });
    await client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: TABLE, Item: { ...key('p1'), v: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Update: { TableName: TABLE, Key: key('u1'), UpdateExpression: 'SET balance = balance - :n', ConditionExpression: 'balance >= :n', ExpressionAttributeValues: { ':n': 4 } } },
          { Delete: { TableName: TABLE, Key: key('d1') } },
        ],
      }),
    );
    expect(await read('p1')).toEqual({ ...key('p1'), v: 1 });
    expect((await read('u1'))?.balance).toBe(6);
    expect(await read('d1')).toBeUndefined();
  });

  it('undoes every earlier item exactly when a later condition fails', async () => {
    await put('u2', { balance: 10, history: ['a'] });
    await put('r2', { state: 'before' });
    await put('x2', { locked: true });
    const reasons = await cancellation(
      client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...key('new2'), v: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: TABLE, Item: { ...key('r2'), state: 'after' } } },
            { Update: { TableName: TABLE, Key: key('u2'), UpdateExpression: 'SET balance = balance - :n', ExpressionAttributeValues: { ':n': 3 } } },
            { Delete: { TableName: TABLE, Key: key('x2'), ConditionExpression: 'locked = :f', ExpressionAttributeValues: { ':f': false } } },
          ],
        }),
      ),
    );
    expect(reasons.map((r) => r.Code)).toEqual(['None', 'None', 'None', 'ConditionalCheckFailed']);
    expect(await read('new2')).toBeUndefined();
    expect(await read('r2')).toEqual({ ...key('r2'), state: 'before' });
    expect(await read('u2')).toEqual({ ...key('u2'), balance: 10, history: ['a'] });
    expect(await read('x2')).toEqual({ ...key('x2'), locked: true });
  });

  it('returns the refusing item when asked (ReturnValuesOnConditionCheckFailure: ALL_OLD)', async () => {
    await put('u3', { balance: 2 });
    const reasons = await cancellation(
      client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...key('l3'), v: 1 } } },
            {
              Update: {
                TableName: TABLE,
                Key: key('u3'),
                UpdateExpression: 'SET balance = balance - :n',
                ConditionExpression: 'balance >= :n',
                ExpressionAttributeValues: { ':n': 5 },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      ),
    );
    expect(reasons[1]).toMatchObject({ Code: 'ConditionalCheckFailed', Item: { pk: { S: `T#${transport}#u3` }, balance: { N: '2' } } });
    expect(reasons[0].Item).toBeUndefined();
    expect(await read('l3')).toBeUndefined();
  });

  it('names every item whose condition fails, not only the first, as DynamoDB does', async () => {
    // DynamoDB evaluates all conditions: a charge whose bucket no longer covers it AND whose job finished meanwhile is
    // cancelled with [None, ConditionalCheckFailed, ConditionalCheckFailed] (charges.ts reads position 2 as job_finished).
    await put('b6', { balance: 1 });
    await put('j6', { status: 'completed' });
    await put('k6', { state: 'open' });
    const reasons = await cancellation(
      client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...key('l6'), v: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Update: { TableName: TABLE, Key: key('b6'), UpdateExpression: 'SET balance = balance - :n, note = :why', ConditionExpression: 'balance >= :n', ExpressionAttributeValues: { ':n': 5, ':why': 'debit' } } },
            {
              Put: {
                TableName: TABLE,
                Item: { ...key('j6'), status: 'failed' },
                ConditionExpression: 'attribute_not_exists(pk) OR #s IN (:q, :p)',
                ExpressionAttributeNames: { '#s': 'status' },
                ExpressionAttributeValues: { ':q': 'queued', ':p': 'processing' },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            { Update: { TableName: TABLE, Key: key('k6'), UpdateExpression: 'SET #st = :closed', ConditionExpression: '#st = :open', ExpressionAttributeNames: { '#st': 'state' }, ExpressionAttributeValues: { ':open': 'open', ':closed': 'closed' } } },
            { Delete: { TableName: TABLE, Key: key('absent6'), ConditionExpression: 'attribute_exists(pk)' } },
          ],
        }),
      ),
    );
    expect(reasons.map((r) => r.Code)).toEqual(['None', 'ConditionalCheckFailed', 'ConditionalCheckFailed', 'None', 'ConditionalCheckFailed']);
    expect(reasons[2].Item).toMatchObject({ status: { S: 'completed' } });
    expect(reasons[1].Item).toBeUndefined();
    // Checking the later conditions wrote nothing.
    expect(await read('l6')).toBeUndefined();
    expect(await read('b6')).toEqual({ ...key('b6'), balance: 1 });
    expect(await read('j6')).toEqual({ ...key('j6'), status: 'completed' });
    expect(await read('k6')).toEqual({ ...key('k6'), state: 'open' });
    expect(await read('absent6')).toBeUndefined();
  });

  it('leaves a condition-checked item exactly as it was, present or absent', async () => {
    await put('c4', { status: 'active' });
    await client.send(
      new TransactWriteCommand({
        TransactItems: [
          { ConditionCheck: { TableName: TABLE, Key: key('c4'), ConditionExpression: '#s = :a', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':a': 'active' } } },
          { ConditionCheck: { TableName: TABLE, Key: key('absent4'), ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: TABLE, Item: { ...key('w4'), v: 1 } } },
        ],
      }),
    );
    expect(await read('c4')).toEqual({ ...key('c4'), status: 'active' });
    expect(await read('absent4')).toBeUndefined();
    expect(await read('w4')).toEqual({ ...key('w4'), v: 1 });
  });

  it('refuses two operations on one item, as DynamoDB does', async () => {
    await expect(
      client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...key('same'), v: 1 } } },
            { Delete: { TableName: TABLE, Key: key('same') } },
          ],
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    await client.send(new DeleteCommand({ TableName: TABLE, Key: key('same') }));
  });

  it('refuses a ConditionCheck without a condition and a later invalid update, as DynamoDB does, writing nothing', async () => {
    await put('cc9', { v: 1 });
    const noCondition = { ConditionCheck: { TableName: TABLE, Key: key('cc9') } } as unknown as { ConditionCheck: { TableName: string; Key: Record<string, string>; ConditionExpression: string } };
    await expect(
      client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...key('w9'), v: 1 } } }, noCondition] })),
    ).rejects.toMatchObject({ name: 'ValidationException', message: expect.stringContaining('conditionExpression') });
    await expect(
      client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...key('w9'), v: 1 } } },
            { Update: { TableName: TABLE, Key: key('cc9'), UpdateExpression: 'SET ### = :one', ExpressionAttributeValues: { ':one': 1 } } },
          ],
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    expect(await read('w9')).toBeUndefined();
    expect(await read('cc9')).toEqual({ ...key('cc9'), v: 1 });
  });

  it('reads items together in the order asked, an absent one as an empty response (TransactGetItems)', async () => {
    await put('g1', { v: 1 });
    await put('g2', { v: 2 });
    const { Responses } = await client.send(
      new TransactGetCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: key('g2') } }, { Get: { TableName: TABLE, Key: key('absentg') } }, { Get: { TableName: TABLE, Key: key('g1') } }] }),
    );
    expect(Responses).toEqual([{ Item: { ...key('g2'), v: 2 } }, {}, { Item: { ...key('g1'), v: 1 } }]);
  });

  it('refuses a transaction of no items or of more than 100, as DynamoDB does, writing none of them', async () => {
    await expect(client.send(new TransactWriteCommand({ TransactItems: [] }))).rejects.toMatchObject({ name: 'ValidationException' });
    const many = Array.from({ length: 101 }, (_, i) => ({ Put: { TableName: TABLE, Item: { ...key(`many${i}`), v: i } } }));
    await expect(client.send(new TransactWriteCommand({ TransactItems: many }))).rejects.toMatchObject({ name: 'ValidationException' });
    expect(await read('many0')).toBeUndefined();
    // 100 is the limit itself.
    await client.send(new TransactWriteCommand({ TransactItems: many.slice(0, 100) }));
    expect(await read('many99')).toEqual({ ...key('many99'), v: 99 });
  });

  it('names a later item that has no condition None when an earlier condition fails', async () => {
    await put('f7', { v: 1 });
    const reasons = await cancellation(
      client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...key('f7'), v: 2 }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: TABLE, Item: { ...key('n7'), v: 1 } } },
          ],
        }),
      ),
    );
    expect(reasons.map((r) => r.Code)).toEqual(['ConditionalCheckFailed', 'None']);
    expect(await read('n7')).toBeUndefined();
  });

  it('answers a later item whose condition is invalid with ValidationException, not a cancellation (DynamoDB validates every item)', async () => {
    await put('f8', { v: 1 });
    await expect(
      client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...key('f8'), v: 2 }, ConditionExpression: 'attribute_not_exists(pk)' } },
            // #undefined has no ExpressionAttributeNames entry.
            { Delete: { TableName: TABLE, Key: key('n8'), ConditionExpression: 'attribute_exists(#undefined)' } },
          ],
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    expect((await read('f8'))?.v).toBe(1);
  });

  it('isolates a transaction from single writes: a write made while one rolls back is not undone by it', async () => {
    // Unisolated, a put landing between the transaction's write and its rollback was erased by the rollback (a lost write).
    const ids = Array.from({ length: 40 }, (_, i) => `i9-${i}`);
    for (const id of ids) await put(id, { v: 'start' });
    const tx = client
      .send(
        new TransactWriteCommand({
          TransactItems: [
            ...ids.map((id) => ({ Update: { TableName: TABLE, Key: key(id), UpdateExpression: 'SET v = :tx', ExpressionAttributeValues: { ':tx': 'tx' } } })),
            { ConditionCheck: { TableName: TABLE, Key: key('absent9'), ConditionExpression: 'attribute_exists(pk)' } },
          ],
        }),
      )
      .catch((e: Error) => e);
    // Once the transaction has written its first item (reads are not held back), a single write to each of its items.
    while ((await read(ids[0]))?.v !== 'tx') await new Promise((r) => setImmediate(r));
    await Promise.all(ids.map((id) => put(id, { v: 'single' })));
    expect(await tx).toMatchObject({ name: 'TransactionCanceledException' });
    const lost = [];
    for (const id of ids) if ((await read(id))?.v !== 'single') lost.push(id);
    expect(lost).toEqual([]);
  });
});

describe('local DynamoDB cursors', () => {
  // The LevelDB store dynalite uses keeps every open cursor attached to it until the cursor closes.
  const levelRequire = createRequire(createRequire(require.resolve('dynalite')).resolve('level'));
  const { AbstractLevel } = createRequire(levelRequire.resolve('classic-level'))('abstract-level') as {
    AbstractLevel: { prototype: { attachResource(r: object): void; detachResource(r: object): void } };
  };

  it('closes the cursor of every Query and Scan once it is answered (they stayed open until the process ended)', async () => {
    const client = emulator.client('direct');
    for (let i = 0; i < 12; i++) await client.send(new PutCommand({ TableName: TABLE, Item: { pk: 'CURSORS', sk: `ITEM#${String(i).padStart(2, '0')}` } }));
    const open = new Set<object>();
    let attached = 0;
    const originalAttach = AbstractLevel.prototype.attachResource;
    const originalDetach = AbstractLevel.prototype.detachResource;
    AbstractLevel.prototype.attachResource = function (resource) {
      attached++;
      open.add(resource);
      return originalAttach.call(this, resource);
    };
    AbstractLevel.prototype.detachResource = function (resource) {
      open.delete(resource);
      return originalDetach.call(this, resource);
    };
    try {
      for (let i = 0; i < 20; i++) {
        const page = await client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'CURSORS' }, Limit: 5 }));
        expect(page.Items).toHaveLength(5);
        const all = await client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'CURSORS' } }));
        expect(all.Items).toHaveLength(12);
        await client.send(new ScanCommand({ TableName: TABLE, Limit: 3 }));
      }
      expect(attached).toBeGreaterThanOrEqual(60);
      // A cursor closes a moment after its answer (the stream ends, then closes it).
      for (let i = 0; i < 50 && open.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(open.size).toBe(0);
    } finally {
      AbstractLevel.prototype.attachResource = originalAttach;
      AbstractLevel.prototype.detachResource = originalDetach;
    }
  });
});

describe('a failure of the table store itself (a full or read-only DATA_DIR)', () => {
  it('answers that request 500 InternalServerError and reports it, where dynalite threw and ended the process', () => {
    const reported: Error[] = [];
    const failing = answeringStoreFailures((_store, _data, cb) => cb(new Error('IO error: 000005.log: No space left on device')), (err) => reported.push(err));
    let answer: any;
    failing({}, {}, (err) => (answer = err));
    expect(answer).toMatchObject({ statusCode: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: expect.stringContaining('No space left on device') } });
    expect(reported.map((e) => e.message)).toEqual(['IO error: 000005.log: No space left on device']);
    // DynamoDB's own errors (a failed condition) and results pass as they are.
    const conditional = Object.assign(new Error('The conditional request failed'), { statusCode: 400 });
    answeringStoreFailures((_s, _d, cb) => cb(conditional))({}, {}, (err) => (answer = err));
    expect(answer).toBe(conditional);
    answeringStoreFailures((_s, _d, cb) => cb(null, { Item: 1 }))({}, {}, (err, result) => (answer = [err, result]));
    expect(answer).toEqual([null, { Item: 1 }]);
  });

  it("guards every action dynalite runs (it takes them from the module cache, where they were replaced before it loaded)", () => {
    const fromDynalite = createRequire(require.resolve('dynalite'));
    for (const action of ['putItem', 'updateItem', 'deleteItem', 'getItem', 'query', 'scan', 'batchWriteItem', 'createTable']) {
      expect([action, answersStoreFailures(fromDynalite(`./actions/${action}`))]).toEqual([action, true]);
    }
  });
});
