import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { GSI1 } from '../../../../functions/adapters/dynamodb/schema';
import { EMULATOR_TRANSPORTS, withLocalEmulator } from '../../../support/local-emulator';

/**
 * What real DynamoDB refuses about key values and dynalite let through: an empty string as a secondary index key,
 * and keys over DynamoDB's limits counted in UTF-8 bytes (dynalite counted UTF-16 code units, and did not look at a
 * Query's key values at all). A code path doing either must fail locally as it would in AWS.
 */
const TABLE = 'key-rules-test';
const emulator = withLocalEmulator(TABLE);

/** `bytes` UTF-8 bytes in a third as many UTF-16 code units ('€' is 3 bytes, 1 code unit). */
const euros = (bytes: number) => '€'.repeat(Math.floor(bytes / 3)) + 'a'.repeat(bytes % 3);

const EMPTY_INDEX_KEY = (attr: string) =>
  `One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${GSI1}, IndexKey: ${attr}`;
const HASH_KEY_TOO_LARGE = 'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes';
const RANGE_KEY_TOO_LARGE = 'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes';

describe.each(EMULATOR_TRANSPORTS)('local DynamoDB key rules %s', (_name, transport) => {
  let client: DynamoDBDocumentClient;
  beforeAll(() => {
    client = emulator.client(transport, { maxAttempts: 1 });
  });

  const key = (id: string) => ({ pk: `K#${transport}#${id}`, sk: 'ITEM' });
  const read = async (k: { pk: string; sk: string }) => (await client.send(new GetCommand({ TableName: TABLE, Key: k, ConsistentRead: true }))).Item;
  const refusal = (message: string) => ({ name: 'ValidationException', message });

  describe('an empty string as a secondary index key', () => {
    it.each(['gsi1pk', 'gsi1sk'])('refuses a PutItem whose %s is empty, writing nothing', async (attr) => {
      const item = { ...key(`put-${attr}`), gsi1pk: 'LIST#1', gsi1sk: '2024-01-01#a', [attr]: '' };
      await expect(client.send(new PutCommand({ TableName: TABLE, Item: item }))).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY(attr)));
      expect(await read(key(`put-${attr}`))).toBeUndefined();
    });

    it('refuses it before the condition is evaluated, as DynamoDB validates the request first', async () => {
      await client.send(new PutCommand({ TableName: TABLE, Item: { ...key('put-cond'), v: 1 } }));
      const put = new PutCommand({ TableName: TABLE, Item: { ...key('put-cond'), gsi1pk: '', gsi1sk: 'x' }, ConditionExpression: 'attribute_not_exists(pk)' });
      await expect(client.send(put)).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY('gsi1pk')));
    });

    it('refuses a BatchWriteItem with one such item, writing none of its items', async () => {
      const batch = new BatchWriteCommand({
        RequestItems: {
          [TABLE]: [{ PutRequest: { Item: { ...key('batch-ok'), gsi1pk: 'LIST#1', gsi1sk: 'b' } } }, { PutRequest: { Item: { ...key('batch-bad'), gsi1pk: 'LIST#1', gsi1sk: '' } } }],
        },
      });
      await expect(client.send(batch)).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY('gsi1sk')));
      expect(await read(key('batch-ok'))).toBeUndefined();
    });

    it.each(['gsi1pk', 'gsi1sk'])('refuses an UpdateItem that sets %s to an empty string, leaving the item as it was', async (attr) => {
      const before = { ...key(`update-${attr}`), gsi1pk: 'LIST#1', gsi1sk: 'c', v: 1 };
      await client.send(new PutCommand({ TableName: TABLE, Item: before }));
      const update = new UpdateCommand({ TableName: TABLE, Key: key(`update-${attr}`), UpdateExpression: 'SET v = :v, #k = :k', ExpressionAttributeNames: { '#k': attr }, ExpressionAttributeValues: { ':v': 2, ':k': '' } });
      await expect(client.send(update)).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY(attr)));
      expect(await read(key(`update-${attr}`))).toEqual(before);
    });

    it('refuses an UpdateItem whose index key comes out empty from an expression (the result is checked, not only the values)', async () => {
      await client.send(new PutCommand({ TableName: TABLE, Item: { ...key('update-copy'), gsi1pk: 'LIST#1', gsi1sk: 'd', blank: '' } }));
      const update = new UpdateCommand({ TableName: TABLE, Key: key('update-copy'), UpdateExpression: 'SET gsi1sk = blank' });
      await expect(client.send(update)).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY('gsi1sk')));
      expect((await read(key('update-copy')))?.gsi1sk).toBe('d');
    });

    it('refuses a transaction with such a Put or Update, undoing the items before it', async () => {
      await client.send(new PutCommand({ TableName: TABLE, Item: { ...key('tx-u'), gsi1pk: 'LIST#1', gsi1sk: 'e' } }));
      const put = new TransactWriteCommand({
        TransactItems: [{ Put: { TableName: TABLE, Item: { ...key('tx-ok'), v: 1 } } }, { Put: { TableName: TABLE, Item: { ...key('tx-bad'), gsi1pk: '', gsi1sk: 'e' } } }],
      });
      await expect(client.send(put)).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY('gsi1pk')));
      const update = new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: TABLE, Item: { ...key('tx-ok'), v: 1 } } },
          { Update: { TableName: TABLE, Key: key('tx-u'), UpdateExpression: 'SET gsi1sk = :sk', ExpressionAttributeValues: { ':sk': '' } } },
        ],
      });
      await expect(client.send(update)).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY('gsi1sk')));
      expect(await read(key('tx-ok'))).toBeUndefined();
      expect(await read(key('tx-bad'))).toBeUndefined();
      expect((await read(key('tx-u')))?.gsi1sk).toBe('e');
    });

    it('refuses a Query with an empty partition key value, of the index or of the table', async () => {
      const query = new QueryCommand({ TableName: TABLE, IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': '' } });
      await expect(client.send(query)).rejects.toMatchObject(refusal(EMPTY_INDEX_KEY('gsi1pk')));
      await expect(client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': '' } }))).rejects.toMatchObject(
        refusal('One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk'),
      );
    });

    it('still takes items outside the index (no index key), index keys set or removed by an update, and an empty non-key attribute', async () => {
      await client.send(new PutCommand({ TableName: TABLE, Item: { ...key('ok-sparse'), note: '' } }));
      await client.send(new PutCommand({ TableName: TABLE, Item: { ...key('ok-indexed'), gsi1pk: `LIST#${transport}`, gsi1sk: '2024-01-01#f' } }));
      await client.send(
        new UpdateCommand({ TableName: TABLE, Key: key('ok-sparse'), UpdateExpression: 'SET gsi1pk = :pk, gsi1sk = :sk', ExpressionAttributeValues: { ':pk': `LIST#${transport}`, ':sk': '2024-01-02#g' } }),
      );
      await client.send(new UpdateCommand({ TableName: TABLE, Key: key('ok-indexed'), UpdateExpression: 'REMOVE gsi1pk, gsi1sk' }));
      await client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...key('ok-tx'), gsi1pk: `LIST#${transport}`, gsi1sk: '2024-01-03#h' } } }] }));
      const listed = await client.send(new QueryCommand({ TableName: TABLE, IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': `LIST#${transport}` } }));
      expect(listed.Items?.map((i) => i.pk)).toEqual([key('ok-sparse').pk, key('ok-tx').pk]);
    });
  });

  describe('key sizes in UTF-8 bytes (partition key 2048, sort key 1024; dynalite counted UTF-16 code units)', () => {
    it('takes keys of exactly the limits in multi-byte characters', async () => {
      const item = { pk: euros(2048), sk: euros(1024), gsi1pk: euros(2048), gsi1sk: euros(1024), transport };
      await client.send(new PutCommand({ TableName: TABLE, Item: item }));
      expect(await read({ pk: item.pk, sk: item.sk })).toEqual(item);
      const listed = await client.send(
        new QueryCommand({ TableName: TABLE, IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk', ExpressionAttributeValues: { ':pk': item.gsi1pk, ':sk': item.gsi1sk } }),
      );
      expect(listed.Items?.length).toBeGreaterThan(0);
    });

    it('refuses a PutItem, BatchWriteItem or transaction Put whose table key is one byte over', async () => {
      const tooLongPk = { pk: euros(2049), sk: 'ITEM' };
      const tooLongSk = { pk: key('big-sk').pk, sk: euros(1025) };
      await expect(client.send(new PutCommand({ TableName: TABLE, Item: tooLongPk }))).rejects.toMatchObject(refusal(HASH_KEY_TOO_LARGE));
      await expect(client.send(new PutCommand({ TableName: TABLE, Item: tooLongSk }))).rejects.toMatchObject(refusal(RANGE_KEY_TOO_LARGE));
      await expect(client.send(new BatchWriteCommand({ RequestItems: { [TABLE]: [{ PutRequest: { Item: tooLongSk } }] } }))).rejects.toMatchObject(refusal(RANGE_KEY_TOO_LARGE));
      await expect(client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: tooLongPk } }] }))).rejects.toMatchObject(refusal(HASH_KEY_TOO_LARGE));
    });

    it.each([
      ['gsi1pk', 2049, 2048],
      ['gsi1sk', 1025, 1024],
    ])('refuses a write whose %s is over its limit, put or set by an update', async (attr, bytes, max) => {
      const message = `One or more parameter values were invalid: Size limit exceeded for Index Key ${attr} Actual Size: ${bytes} bytes Max Size: ${max} bytes IndexName: ${GSI1}`;
      const item = { ...key(`big-${attr}`), gsi1pk: 'LIST#2', gsi1sk: 'i' };
      await expect(client.send(new PutCommand({ TableName: TABLE, Item: { ...item, [attr]: euros(bytes) } }))).rejects.toMatchObject(refusal(message));
      await client.send(new PutCommand({ TableName: TABLE, Item: item }));
      const update = new UpdateCommand({ TableName: TABLE, Key: key(`big-${attr}`), UpdateExpression: 'SET #k = :k', ExpressionAttributeNames: { '#k': attr }, ExpressionAttributeValues: { ':k': euros(bytes) } });
      await expect(client.send(update)).rejects.toMatchObject(refusal(message));
      expect(await read(key(`big-${attr}`))).toEqual(item);
    });

    it('refuses a GetItem, UpdateItem or Query whose key value is over the limit', async () => {
      await expect(client.send(new GetCommand({ TableName: TABLE, Key: { pk: euros(2049), sk: 'ITEM' } }))).rejects.toMatchObject(refusal(HASH_KEY_TOO_LARGE));
      await expect(client.send(new GetCommand({ TableName: TABLE, Key: { pk: 'P', sk: euros(1025) } }))).rejects.toMatchObject(refusal(RANGE_KEY_TOO_LARGE));
      await expect(client.send(new UpdateCommand({ TableName: TABLE, Key: { pk: euros(2049), sk: 'ITEM' }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': 1 } }))).rejects.toMatchObject(
        refusal(HASH_KEY_TOO_LARGE),
      );
      // dynalite did not look at a Query's key values at all (an ASCII one 3 KB long went through).
      await expect(client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'a'.repeat(3000) } }))).rejects.toMatchObject(
        refusal(HASH_KEY_TOO_LARGE),
      );
      await expect(
        client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)', ExpressionAttributeValues: { ':pk': 'P', ':sk': euros(1025) } })),
      ).rejects.toMatchObject(refusal(RANGE_KEY_TOO_LARGE));
      await expect(
        client.send(new QueryCommand({ TableName: TABLE, IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': euros(2049) } })),
      ).rejects.toMatchObject(refusal(HASH_KEY_TOO_LARGE));
    });
  });
});
