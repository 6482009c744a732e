import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo, type Dynamo } from '../../../../functions/adapters/dynamodb/client';
import { keys } from '../../../../functions/adapters/dynamodb/schema';
import { type LocalDynamo, startLocalDynamo } from '../../../../local/emulators/dynamodb';

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

  it('still reports other validation errors of a read (a key that does not match the schema)', async () => {
    await expect(db.doc.send(new GetCommand({ TableName: db.table, Key: { pk: 'x' } }))).rejects.toMatchObject({ name: 'ValidationException' });
  });
});
