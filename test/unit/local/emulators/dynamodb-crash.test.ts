import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalDynamo } from '../../../../local/emulators/dynamodb';

const TABLE = 'crash-test';
const CHILD = path.resolve(__dirname, '../../../support/dynamo-crash-child.ts');

/** Starts the writer and kills it (SIGKILL: no clean-up runs) a random moment after its first transaction. */
async function writeThenKill(dataDir: string): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, TABLE], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`writer exited with ${code}: ${err}`)));
  });
  await new Promise((r) => setTimeout(r, 30 + Math.random() * 150));
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/**
 * The stand-in applies a transaction's items one by one. A process killed between two of them must not leave half a
 * transaction behind (locally: a charge debited without its job): the next start puts the items back.
 */
describe('local DynamoDB transactions across a crash', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'ddb-crash-')), 'dynamodb');
  });
  afterAll(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }));

  it('finds every transaction whole after the writer was killed mid-stream, five times over', async () => {
    const seen: number[][] = [];
    for (let round = 0; round < 5; round++) {
      await writeThenKill(dataDir);
      const dynamo = await startLocalDynamo({ dataDir, tableName: TABLE });
      const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, requestHandler: dynamo.requestHandler }));
      try {
        const counters = [];
        for (const id of ['a', 'b', 'c']) counters.push((await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: `PAIR#${id}`, sk: 'X' }, ConsistentRead: true }))).Item?.n);
        seen.push(counters);
      } finally {
        doc.destroy();
        await dynamo.stop();
      }
    }
    for (const counters of seen) {
      expect(new Set(counters).size).toBe(1);
      // Three missing items would be one value too; the writer says ready only once n = 1 is written.
      expect(typeof counters[0]).toBe('number');
      expect(counters[0]).toBeGreaterThanOrEqual(1);
    }
  }, 60_000);
});
