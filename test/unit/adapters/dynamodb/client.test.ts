import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { cancellationCodes, createDynamo, type Dynamo, isTransactionConflict, stripKeys } from '../../../../functions/adapters/dynamodb/client';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { type LocalDynamo, startLocalDynamo } from '../../../../local/emulators/dynamodb';
import { cancelled, conflictException, ok, scriptedDynamo as scripted } from '../../../support/scripted-dynamo';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** Against dynalite, which refuses oversized keys with the same ValidationException as DynamoDB. */
describe('createDynamo: ids too long to be keys', () => {
  let local: LocalDynamo;
  let db: Dynamo;
  beforeAll(async () => {
    local = await startLocalDynamo({ tableName: 'keysize' });
    db = createDynamo({ tableName: 'keysize', region: 'us-east-1', endpoint: local.endpoint, requestHandler: local.requestHandler });
  });
  afterAll(() => local.stop());

  const huge = 'j'.repeat(3000);

  it('reads nothing for a partition key over 2048 bytes (a 404 to the caller, not a 500)', async () => {
    const { Item } = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.job(huge) }));
    expect(Item).toBeUndefined();
  });

  it('still refuses to write such a key', async () => {
    await expect(db.doc.send(new PutCommand({ TableName: db.table, Item: { ...keys.job(huge), x: 1 } }))).rejects.toMatchObject({ name: 'ValidationException' });
  });

  // Over the limits in UTF-8 bytes, as DynamoDB counts them, though not in UTF-16 code units (which dynalite counted).
  const multiByte = '€'.repeat(700);

  it('reads nothing for a key over the limit in multi-byte characters, partition or sort key, and refuses to write it', async () => {
    for (const key of [keys.job(multiByte), keys.plan('€'.repeat(400))]) {
      expect((await db.doc.send(new GetCommand({ TableName: db.table, Key: key }))).Item).toBeUndefined();
      await expect(db.doc.send(new PutCommand({ TableName: db.table, Item: { ...key, x: 1 } }))).rejects.toMatchObject({ name: 'ValidationException' });
    }
  });

  it('still reports other validation errors of a read (a key that does not match the schema)', async () => {
    await expect(db.doc.send(new GetCommand({ TableName: db.table, Key: { pk: 'x' } }))).rejects.toMatchObject({ name: 'ValidationException' });
  });
});

/** DynamoDB's answers to writes that meet a concurrent transaction, through the SDK's real parsing. */
describe('createDynamo: writes that meet a concurrent transaction', () => {
  const transaction = () => new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 't', Item: { pk: 'a', sk: 'b' } } }, { Update: { TableName: 't', Key: { pk: 'c', sk: 'd' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } } }] });

  it('sends a transaction cancelled for TransactionConflict again until it commits', async () => {
    const { db, sent } = scripted([cancelled(['None', 'TransactionConflict']), cancelled(['TransactionConflict', 'None']), ok]);
    await expect(db.doc.send(transaction())).resolves.toBeDefined();
    expect(sent).toEqual(['TransactWriteItems', 'TransactWriteItems', 'TransactWriteItems']);
  });

  it('sends a single-item write refused with TransactionConflictException again', async () => {
    const { db, sent } = scripted([conflictException, ok]);
    await db.doc.send(new PutCommand({ TableName: 't', Item: { pk: 'a', sk: 'b' } }));
    expect(sent).toHaveLength(2);
  });

  it('pauses before each retry as configured, told which retry it is', async () => {
    const retries: number[] = [];
    const { db } = scripted([conflictException, conflictException, ok], (retry) => (retries.push(retry), 0));
    await db.doc.send(new PutCommand({ TableName: 't', Item: { pk: 'a', sk: 'b' } }));
    expect(retries).toEqual([1, 2]);
  });

  it('gives up after 8 retries and reports the conflict to the caller', async () => {
    const { db, sent } = scripted([cancelled(['TransactionConflict', 'None'])]);
    const err = await db.doc.send(transaction()).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TransactionCanceledException' });
    expect(isTransactionConflict(err)).toBe(true);
    expect(sent).toHaveLength(9);
  });

  it('does not retry a transaction whose condition failed: that answer is final', async () => {
    const { db, sent } = scripted([cancelled(['ConditionalCheckFailed', 'None'])]);
    const err = await db.doc.send(transaction()).catch((e: unknown) => e);
    expect(cancellationCodes(err)).toEqual(['ConditionalCheckFailed', 'None']);
    expect(sent).toHaveLength(1);
  });
});

describe('stripKeys', () => {
  it('leaves out the key, index and expiry attributes, and nothing else', () => {
    expect(stripKeys({ pk: 'A', sk: 'B', gsi1pk: 'C', gsi1sk: 'D', ttl: 1, id: 'x', key: 'k', pages: 0 })).toEqual({ id: 'x', key: 'k', pages: 0 });
  });
});
