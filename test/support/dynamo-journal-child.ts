/**
 * Child process for the emulator's journal tests: killed (SIGKILL, no clean-up) right after its k-th item write
 * reaches LevelDB, at the store boundary dynalite writes through.
 *
 *   transact <dataDir> <table> <k>: seeds the items (journalSeed), then applies journalTransaction; killed part-way.
 *   recover <dataDir> <table> <k>:  starts on a store with a journal left behind; killed part-way through putting it back.
 *
 * Prints "finished" if it was not killed (k past the last write).
 */
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalDynamo } from '../../local/emulators/dynamodb';
import { journalSeed, journalTransaction } from './dynamo-journal-items';

type Write = (this: unknown, key: unknown, ...rest: unknown[]) => Promise<unknown>;

/** After the k-th write of an item (not a table or index record), the process ends at once. */
function killAfterItemWrite(k: number): void {
  const levelRequire = createRequire(createRequire(require.resolve('dynalite')).resolve('level'));
  const { ClassicLevel } = createRequire(levelRequire.resolve('classic-level'))('classic-level') as { ClassicLevel: { prototype: Record<'_put' | '_del', Write> } };
  let writes = 0;
  for (const method of ['_put', '_del'] as const) {
    const original = ClassicLevel.prototype[method];
    ClassicLevel.prototype[method] = async function (key, ...rest) {
      const result = await original.call(this, key, ...rest);
      if (String(key).startsWith('item-') && ++writes === k) process.kill(process.pid, 'SIGKILL');
      return result;
    };
  }
}

async function main() {
  const [mode, dataDir, table, k] = process.argv.slice(2);
  if (mode === 'recover') killAfterItemWrite(Number(k));
  const dynamo = await startLocalDynamo({ dataDir, tableName: table });
  if (mode === 'transact') {
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, requestHandler: dynamo.requestHandler }),
    );
    for (const item of journalSeed()) await doc.send(new PutCommand({ TableName: table, Item: item }));
    killAfterItemWrite(Number(k));
    await doc.send(new TransactWriteCommand({ TransactItems: journalTransaction(table) }));
  }
  process.stdout.write('finished\n');
  await dynamo.stop();
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
