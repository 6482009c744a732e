/**
 * Starts the whole service on one machine: DynamoDB (dynalite + transaction shim), S3 (s3rver), the local
 * token issuer, the plans, and the gateway serving the route table. Used by `npm start`, the integration
 * tests and the benchmarks; every piece listens on loopback only.
 */
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Services, configFromEnv, createServices, setServices, warmRenderer } from '../functions/composition';
import { shippedFontFiles, stageFonts } from '../functions/adapters/chromium/shipped-fonts';
import { planCatalogue } from '../functions/core/billing/plans';
import { releaseDeadWorker } from '../functions/core/conversion/longjob';
import { outboxNoticeOf, releaseDeadDispatch } from '../functions/core/webhooks/dispatch';
import { QUICKJOB_TIMEOUT_SECONDS } from '../functions/core/conversion/quickjob';
import type { Clock } from '../functions/core/clock';
import { startLocalDynamo } from './emulators/dynamodb';
import { type LocalS3, startLocalS3 } from './emulators/s3';
import { createGateway } from './gateway';
import { LOCAL_CLIENT_ID, LOCAL_USER_POOL_ID, loadOrCreateIssuer } from './issuer';
import { createLocalAccount, mintLocalToken } from './local-routes';
import { loadOrCreateSecret } from './secrets';
import { LocalWorkflowRunner } from './emulators/stepfunctions';
import { WORKFLOWS } from '../functions/workflows';
import { createLogger } from '../functions/logger';
import { QUEUES } from '../functions/queues';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { LocalQueue, LocalRedelivery } from './emulators/queue';
import { loadHandler } from './handlers';
import { SCHEDULES } from '../functions/schedules';
import { resolverFromOverrides } from './dns';
import { writeFileAtomic } from './files';

export interface LocalStackOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  dataDir: string;
  /** Extra environment for the service (e.g. QUICKJOB_TIMEOUT_SECONDS in tests). */
  env?: Record<string, string>;
  /** Launch Chromium and fill its context pool before answering. */
  warm?: boolean;
  clock?: Clock;
}

export interface LocalStack {
  baseUrl: string;
  services: Services;
  /** The in-process SQS queues by name (tests wait on `drained()`). */
  queues: Map<string, LocalQueue<unknown>>;
  /** The in-process Step Functions (tests wait on `idle()`). */
  workflows: LocalWorkflowRunner;
  stop(): Promise<void>;
}

export const LOCAL_TABLE = 'pdf-service';
export const LOCAL_BUCKET = 'pdf-service-local';

export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  // What has started so far, stopped again (newest first) if a later step fails: a port in use or a Chromium that
  // cannot launch must not leave the emulators, queues and browser running.
  const started: (() => Promise<unknown>)[] = [];
  try {
    return await assemble(opts, started);
  } catch (err) {
    await stopNewestFirst(started);
    throw err;
  }
}

/** How long a stop waits for running workflow executions before it aborts them (the next start resumes them). */
const WORKFLOW_STOP_GRACE_MS = 10_000;

/** How long a stop waits for task handlers of aborted executions, once the services they use are closing. */
const TASK_SETTLE_MS = 10_000;

/** Long jobs rendering at once locally (the render queue's worker concurrency): each holds a printing slot for its whole run. */
const LOCAL_RENDER_WORKERS = 2;
/** Messages the other local queues (the webhook dispatcher) handle at once. */
const LOCAL_QUEUE_WORKERS = 4;

async function stopNewestFirst(started: (() => Promise<unknown>)[]): Promise<void> {
  for (const stop of [...started].reverse()) await stop().catch(() => undefined);
}

/**
 * The local S3 on the port it had before, when that port is free: signed links embed it, and the links a service
 * handed out (valid for an hour) should outlive a restart like the state they point to.
 */
async function startS3OnItsPort(dataDir: string): Promise<LocalS3> {
  const portFile = path.join(dataDir, 's3-port');
  const directory = path.join(dataDir, 's3');
  const previous = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8').trim()) || 0 : 0;
  let s3: LocalS3;
  try {
    s3 = await startLocalS3({ directory, bucket: LOCAL_BUCKET, port: previous });
  } catch (err) {
    if (!previous) throw err;
    createLogger().warn(`local S3: port ${previous} is taken; links handed out before this start will not work`, err);
    s3 = await startLocalS3({ directory, bucket: LOCAL_BUCKET });
  }
  writeFileAtomic(portFile, new URL(s3.endpoint).port);
  return s3;
}

async function assemble(opts: LocalStackOptions, started: (() => Promise<unknown>)[]): Promise<LocalStack> {
  const dataDir = path.resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const dynamo = await startLocalDynamo({ dataDir: path.join(dataDir, 'dynamodb'), tableName: LOCAL_TABLE });
  started.push(() => dynamo.stop());
  const s3 = await startS3OnItsPort(dataDir);
  started.push(() => s3.stop());
  const issuer = await loadOrCreateIssuer(path.join(dataDir, 'issuer'));

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_REGION: 'us-east-1',
    TABLE_NAME: LOCAL_TABLE,
    BUCKET_NAME: LOCAL_BUCKET,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    S3_ENDPOINT: s3.endpoint,
    USER_POOL_ID: LOCAL_USER_POOL_ID,
    USER_POOL_CLIENT_ID: LOCAL_CLIENT_ID,
    LOCAL_JWKS_FILE: issuer.jwksFile,
    PAGINATION_SECRET: process.env.PAGINATION_SECRET || loadOrCreateSecret(path.join(dataDir, 'pagination-secret')),
    // Seals webhook signing secrets at rest (Secrets Manager in AWS).
    WEBHOOK_SECRETS_KEY: process.env.WEBHOOK_SECRETS_KEY || loadOrCreateSecret(path.join(dataDir, 'webhook-secrets-key')),
    // One account's long jobs take one of the two local render workers at most, so another account's job does not wait behind them.
    LONGJOB_RENDERS_PER_ACCOUNT: process.env.LONGJOB_RENDERS_PER_ACCOUNT || String(LOCAL_RENDER_WORKERS - 1),
    // Likewise one account's events take half of the local webhook dispatchers at most (slow receivers hold one ~47 s).
    WEBHOOK_DISPATCHES_PER_ACCOUNT: process.env.WEBHOOK_DISPATCHES_PER_ACCOUNT || String(LOCAL_QUEUE_WORKERS / 2),
    ...opts.env,
  };
  // Step Functions: the ASL files run in-process with the same task handlers (LOCAL_SFN_RETRY_MS shortens retries in tests).
  const workflows = new LocalWorkflowRunner({
    workflows: WORKFLOWS,
    log: createLogger(),
    journalDir: path.join(dataDir, 'workflows'),
    retryIntervalMs: env.LOCAL_SFN_RETRY_MS !== undefined && env.LOCAL_SFN_RETRY_MS !== '' ? Number(env.LOCAL_SFN_RETRY_MS) : undefined,
  });
  // Runs after the services close (newest first): a task handler an aborted execution left running fails fast once
  // Chromium is gone, and writes what it writes before the table and bucket close under it.
  started.push(async () => {
    await workflows.stop();
    if (!(await workflows.tasksSettled(TASK_SETTLE_MS))) createLogger().warn(`workflow task handlers still running ${TASK_SETTLE_MS / 1000} s after the stop; their writes will fail`);
  });
  // A render the last process was in the middle of died with it: its lease and slot are released at start, and the
  // job is taken over at once (see releaseDeadWorker). Set once the services exist; used when the queues start.
  let services!: Services;
  const recoverUnfinished: Record<string, (body: unknown) => Promise<void>> = {
    render: async (body) => {
      const jobId = (body as { job_id?: unknown } | null)?.job_id;
      if (typeof jobId === 'string') await releaseDeadWorker({ jobs: services.jobs, slots: services.jobSlots, clock: services.clock }, jobId);
    },
    // Likewise a webhook dispatch gives back its account's dispatch slot.
    webhooks: async (body) => {
      const notice = outboxNoticeOf(body);
      if (notice) await releaseDeadDispatch({ outbox: services.outbox, slots: services.jobSlots }, notice);
    },
  };
  // SQS queues: in-process, delivering to the same worker handlers (LOCAL_QUEUE_RETRY_MS: delay before a redelivery).
  const queues = new Map(
    QUEUES.map((q) => [
      q.name,
      new LocalQueue<any>({
        name: q.name,
        handler: (event, context) => loadHandler<(e: SQSEvent, c: Context) => Promise<SQSBatchResponse>>(q.handler)(event, context),
        concurrency: q.profile === 'render' ? LOCAL_RENDER_WORKERS : LOCAL_QUEUE_WORKERS,
        maxReceiveCount: q.maxReceiveCount,
        retryDelayMs: Number(env.LOCAL_QUEUE_RETRY_MS ?? 5000),
        timeoutMs: q.timeoutSeconds * 1000,
        persistDir: path.join(dataDir, 'queues'),
        // Messages kept from the last run wait until the services their handlers use are set up (below).
        paused: true,
        recoverUnfinished: recoverUnfinished[q.name],
        deadLetterHandler: q.deadLetterHandler
          ? (event, context) => loadHandler<(e: SQSEvent, c: Context) => Promise<SQSBatchResponse>>(q.deadLetterHandler!)(event, context)
          : undefined,
        log: (m, e) => createLogger().warn(m, e),
      }),
    ]),
  );
  started.push(async () => {
    for (const q of queues.values()) await q.stop();
  });
  env.MAIL_DIR ??= path.join(dataDir, 'mail');
  // Chromium prints with the render layer's fonts here too, so a document looks (and breaks into pages) as it will in AWS.
  env.CHROMIUM_FONT_DIR ??= stageFonts(shippedFontFiles(), path.join(dataDir, 'fonts'));
  // Chromium's fontconfig and profiles stay under DATA_DIR, not the system temp dir, where they piled up. Profiles a
  // killed service left go now: this process holds DATA_DIR (see startLocalDynamo), and that service's Chromium died with it.
  rmSync(path.join(dataDir, 'chromium', 'profiles'), { recursive: true, force: true });
  env.CHROMIUM_FILES_DIR ??= path.join(dataDir, 'chromium');
  services = createServices(configFromEnv(env), opts.clock, {
    workflows,
    renderQueue: queues.get('render'),
    webhookQueue: queues.get('webhooks'),
    redelivery: new LocalRedelivery(queues),
    resolver: resolverFromOverrides(env.LOCAL_DNS_OVERRIDES),
    dynamoRequestHandler: dynamo.requestHandler,
  });
  setServices(services);
  started.push(async () => {
    await services.close();
    setServices(null);
  });
  await services.plans.put(planCatalogue(services.config.priceIds));
  for (const q of queues.values()) q.start();
  // Executions a stop or a crash interrupted start again (Step Functions would have kept them running).
  await workflows.resumeInterrupted();

  const server: http.Server = createGateway({
    services,
    throttle: { ratePerSecond: Number(env.LOCAL_THROTTLE_RPS ?? 1000), burst: Number(env.LOCAL_THROTTLE_BURST ?? 2000) },
    requestTimeoutMs: env.LOCAL_REQUEST_TIMEOUT_MS ? Number(env.LOCAL_REQUEST_TIMEOUT_MS) : undefined,
    localRoutes: [
      { method: 'POST', path: '/_local/accounts', handle: (_p, body) => createLocalAccount(services, issuer, body) },
      { method: 'POST', path: '/_local/accounts/{account_id}/token', handle: (p) => mintLocalToken(services, issuer, p.account_id) },
      { method: 'GET', path: '/_local/jwks.json', handle: async () => ({ status: 200, body: issuer.jwks }) },
    ],
  });
  server.keepAliveTimeout = 65_000;
  // Requests being answered, so that a stop can wait for them (an idle keep-alive connection it need not wait for).
  let answering = 0;
  const allAnswered: (() => void)[] = [];
  // Once a stop has begun, every answer closes its connection: a keep-alive connection would otherwise carry new
  // requests for as long as its client keeps sending, so that the stop waited its whole limit and then cut them.
  let stopping = false;
  const unanswered = new Set<http.ServerResponse>();
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    answering++;
    if (stopping) res.shouldKeepAlive = false;
    unanswered.add(res);
    res.once('close', () => {
      unanswered.delete(res);
      if (--answering === 0) for (const resolve of allAnswered.splice(0)) resolve();
    });
  });
  server.listen(opts.port, opts.host ?? '127.0.0.1');
  await once(server, 'listening');
  started.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  if (opts.warm) await warmRenderer(services);
  // Scheduled functions (EventBridge rules in AWS) on timers: the outbox sweeper.
  const scheduleTimers = SCHEDULES.map((def) => {
    const every = Number(env.LOCAL_SCHEDULE_INTERVAL_MS || def.everyMinutes * 60_000);
    const timer = setInterval(() => {
      loadHandler<() => Promise<unknown>>(def.handler)().catch((err) => createLogger().warn(`schedule ${def.name} failed`, err));
    }, every);
    timer.unref();
    return timer;
  });

  return {
    baseUrl: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    services,
    workflows,
    queues,
    async stop() {
      for (const timer of scheduleTimers) clearInterval(timer);
      // No new connections while the work in flight drains; requests being answered finish (a quick job ends within
      // its own time limit, so the wait is bounded).
      stopping = true;
      for (const res of unanswered) if (!res.headersSent) res.shouldKeepAlive = false;
      server.close();
      server.closeIdleConnections();
      const answered = answering === 0 ? Promise.resolve() : new Promise<void>((resolve) => allAnswered.push(resolve));
      // Requests being answered first: a submission in flight still queues its job or starts its workflow (stopped
      // first, they refused it and the job failed), and what it queued waits for the next start.
      let timer: NodeJS.Timeout | undefined;
      const answerMs = ((services.config.quickjobTimeoutSeconds ?? QUICKJOB_TIMEOUT_SECONDS) + 5) * 1000;
      await Promise.race([answered, new Promise((resolve) => (timer = setTimeout(resolve, answerMs)))]);
      clearTimeout(timer);
      server.closeAllConnections();
      // Work in flight ends before the services it uses close (stopping them again below is a no-op). Executions still
      // running after the grace are aborted and resumed by the next start.
      for (const q of queues.values()) await q.stop();
      await workflows.stop(env.LOCAL_WORKFLOW_STOP_GRACE_MS ? Number(env.LOCAL_WORKFLOW_STOP_GRACE_MS) : WORKFLOW_STOP_GRACE_MS);
      await stopNewestFirst(started);
    },
  };
}
