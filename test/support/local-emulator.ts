/** The local DynamoDB emulator for one test file of the emulator's own tests, reached both ways the service's stack does. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type LocalDynamo, startLocalDynamo } from '../../local/emulators/dynamodb';

/** The two ways in: the loopback endpoint (other tools) and the in-process transport (the local service). */
export const EMULATOR_TRANSPORTS = [
  ['over the loopback endpoint', 'http'],
  ['in-process', 'direct'],
] as const;
export type EmulatorTransport = (typeof EMULATOR_TRANSPORTS)[number][1];

export interface EmulatorForTests {
  /** The running emulator (started before the file's tests: read it inside them). */
  readonly dynamo: LocalDynamo;
  /** A document client over `transport`, destroyed after the file's tests. */
  client(transport: EmulatorTransport, config?: Partial<DynamoDBClientConfig>): DynamoDBDocumentClient;
}

/** Starts the emulator on a temporary DATA_DIR before the file's tests; stops it, its clients and the directory after. */
export function withLocalEmulator(tableName: string): EmulatorForTests {
  let dynamo: LocalDynamo | undefined;
  let dataDir: string | undefined;
  const clients: DynamoDBDocumentClient[] = [];
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), `${tableName}-`));
    dynamo = await startLocalDynamo({ dataDir, tableName });
  });
  afterAll(async () => {
    for (const c of clients) c.destroy();
    await dynamo?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const running = () => {
    if (!dynamo) throw new Error('The emulator starts before the tests: use it inside them, not when the file loads.');
    return dynamo;
  };
  return {
    get dynamo() {
      return running();
    },
    client(transport, config = {}) {
      const { endpoint, requestHandler } = running();
      const client = DynamoDBDocumentClient.from(
        new DynamoDBClient({
          endpoint,
          region: 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          ...(transport === 'direct' ? { requestHandler } : {}),
          ...config,
        }),
      );
      clients.push(client);
      return client;
    },
  };
}
