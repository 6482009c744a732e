import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../../functions/adapters/dynamodb/client';
import { keys } from '../../functions/adapters/dynamodb/schema';
import type { Clock } from '../../functions/core/clock';
import { type LocalStack, startLocalStack } from '../../local/stack';

export interface TestAccount {
  account_id: string;
  email: string;
  plan_id: string | null;
  api_key: string;
  id_token: string;
}

export interface TestStack extends LocalStack {
  dataDir: string;
  /** POST /_local/accounts */
  account(body?: Record<string, unknown>): Promise<TestAccount>;
  /** fetch against the gateway. */
  request(method: string, route: string, init?: { key?: string; token?: string; json?: unknown; body?: BodyInit | Uint8Array; headers?: Record<string, string> }): Promise<Response>;
}

/** A whole local stack (real dynalite, s3rver, Chromium) on free ports with a throwaway data dir. */
export async function startTestStack(env: Record<string, string> = {}, opts: { clock?: Clock } = {}): Promise<TestStack> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.LOG_LEVEL ??= 'error';
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-test-'));
  const stack = await startLocalStack({ port: 0, dataDir, env: { RENDER_PREWARM: '1', RESPONSE_CONTRACT: 'strict', ...env }, clock: opts.clock });
  const request: TestStack['request'] = (method, route, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key) headers['X-API-Key'] = init.key;
    if (init.token) headers.Authorization = `Bearer ${init.token}`;
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['Content-Type'] ??= 'application/json';
    }
    return fetch(`${stack.baseUrl}${route}`, { method, headers, body: body as BodyInit });
  };
  return {
    ...stack,
    dataDir,
    request,
    async account(body = { credits_usd: 10 }) {
      const res = await request('POST', '/_local/accounts', { json: body });
      if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${await res.text()}`);
      return (await res.json()) as TestAccount;
    },
    async stop() {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The names of a job's outbox events in the order they happened (`job.queued`, `job.processing`, …), read from the table. */
export async function jobEventNames(stack: TestStack, jobId: string): Promise<string[]> {
  const { config } = stack.services;
  const db = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });
  const { Items = [] } = await db.doc.send(
    new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)', ExpressionAttributeValues: { ':pk': keys.job(jobId).pk, ':e': 'EVENT#' } }),
  );
  return Items.sort((a, b) => String(a.event_id).localeCompare(String(b.event_id))).map((i) => i.event as string);
}

/** The emails the stack wrote to its mail folder (no SMTP configured) for `address`, as raw messages. */
export function mailsTo(stack: TestStack, address: string): string[] {
  const dir = path.join(stack.dataDir, 'mail');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .filter((m) => m.includes(`To: ${address}`));
}
