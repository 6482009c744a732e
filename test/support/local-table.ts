/** A dynalite table for one test file, as the adapters' own tests use it. */
import { type Dynamo, createDynamo } from '../../functions/adapters/dynamodb/client';
import { type LocalDynamo, startLocalDynamo } from '../../local/emulators/dynamodb';

/**
 * Starts a local table before the file's tests and stops it after them. The returned object is filled by then with
 * what `build` makes from the table (read its properties inside tests, not when the file loads).
 */
export function withLocalTable<T extends object>(tableName: string, build: (db: Dynamo) => T): T {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const built = {} as T;
  let local: LocalDynamo | undefined;
  beforeAll(async () => {
    local = await startLocalDynamo({ tableName });
    Object.assign(built, build(createDynamo({ tableName, region: 'us-east-1', endpoint: local.endpoint, requestHandler: local.requestHandler })));
  });
  afterAll(() => local?.stop());
  return built;
}
