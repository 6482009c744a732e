/**
 * Child process for the emulator's crash test: writes pairs of items in transactions (both carry the same counter)
 * as fast as it can, until it is killed. Prints "ready" once the first pair is written.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalDynamo } from '../../local/emulators/dynamodb';

async function main() {
  const [dataDir, table] = process.argv.slice(2);
  const dynamo = await startLocalDynamo({ dataDir, tableName: table });
  const doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, requestHandler: dynamo.requestHandler }),
  );
  for (let n = 1; ; n++) {
    const items = ['a', 'b', 'c'].map((id) => ({ Put: { TableName: table, Item: { pk: `PAIR#${id}`, sk: 'X', n } } }));
    await doc.send(new TransactWriteCommand({ TransactItems: items }));
    if (n === 1) process.stdout.write('ready\n');
  }
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
