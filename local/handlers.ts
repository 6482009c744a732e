import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Context } from 'aws-lambda';

const FUNCTIONS_DIR = path.resolve(__dirname, '../functions');
const cache = new Map<string, (...args: any[]) => Promise<any>>();

/** The handler a reference "<file under functions/>#<export>" names, as Lambda would load it (`dir`: tests' fixtures). */
export function loadHandler<T extends (...args: any[]) => Promise<any>>(ref: string, dir = FUNCTIONS_DIR): T {
  const key = `${dir}|${ref}`;
  let fn = cache.get(key);
  if (!fn) {
    const [file, name] = ref.split('#');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    fn = require(path.join(dir, file))[name];
    if (typeof fn !== 'function') throw new Error(`handler ${ref} does not exist`);
    cache.set(key, fn);
  }
  return fn as T;
}

/** The Lambda context a local invocation gets: its name, request id and a deadline `timeoutMs` from now. */
export function lambdaContext(functionName: string, timeoutMs: number, requestId: string = randomUUID()): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '2048',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
