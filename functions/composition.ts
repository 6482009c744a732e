/**
 * The composition root: the one place that reads the environment and picks adapters. The same code runs
 * in Lambda (endpoints unset → AWS) and under `npm start` (endpoints of the local stand-ins set by
 * local/stack.ts). Services are built on first use, so a Lambda that never renders never loads Chromium.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { AccountRepository, PlanRepository, RateLimiter } from './core/accounts/ports';
import type { ApiKeyRepository, IdTokenVerifier } from './core/auth/ports';
import { Billing } from './core/billing/charging';
import type { PlanPriceIds } from './core/billing/plans';
import { type Clock, systemClock } from './core/clock';
import type { BlobStore, JobRepository } from './core/jobs/ports';
import type { Renderer } from './core/render/ports';
import { CognitoIdTokenVerifier } from './adapters/cognito/id-token-verifier';
import { DynamoAccountRepository } from './adapters/dynamodb/accounts';
import { DynamoApiKeyRepository } from './adapters/dynamodb/api-keys';
import { type Dynamo, type DynamoConfig, createDynamo } from './adapters/dynamodb/client';
import { DynamoPlanRepository } from './adapters/dynamodb/plans';
import { DynamoRateLimiter } from './adapters/dynamodb/rate-limiter';
import { S3BlobStore, createS3Client } from './adapters/s3/blob-store';
import { DynamoBillingStateStore } from './adapters/dynamodb/billing-state';
import { StripePaymentProvider } from './adapters/stripe/provider';
import { StripeWebhookVerifier } from './adapters/stripe/webhooks';
import { CREDIT_PACK_USD, type CreditPack, type PackPriceIds, creditPacks } from './core/billing/packs';
import type { BillingStateStore, PaymentEventVerifier, PaymentProvider } from './core/subscriptions/ports';
import { SubscriptionService } from './core/subscriptions/service';
import { type Logger, createLogger } from './logger';
import type { JobFileRepository } from './core/jobs/files';
import type { JobSlots } from './core/jobs/slots';
import type { WorkflowStarter } from './core/workflows/ports';
import { DynamoJobFileRepository } from './adapters/dynamodb/job-files';
import { DynamoJobSlots } from './adapters/dynamodb/job-slots';
import { DynamoCommitmentStore } from './adapters/dynamodb/commitments';
import type { CommitmentStore } from './core/billing/commitments';
import { SfnWorkflowStarter, createSfnClient } from './adapters/sfn/workflow-starter';
import { WORKFLOWS, workflowArnVariable } from './workflows';
import { PrivateTargetAllowlist } from './core/net/allowlist';
import type { HttpClient } from './core/net/fetch';
import { NetworkGuard } from './core/net/guard';
import { systemResolver } from './adapters/net/dns-resolver';
import { GuardedHttpClient } from './adapters/net/guarded-http';
import { deploymentSecretsLoaded } from './adapters/secrets/deployment-secrets';
import type { MessageQueue, RenderJobMessage } from './core/jobs/queue';
import type { Mailer } from './core/notifications/ports';
import { SqsQueue } from './adapters/sqs/queue';
import { type Redelivery, SqsRedelivery } from './adapters/sqs/redelivery';
import { DisabledMailer, FolderMailer, SmtpMailer } from './adapters/mail/mailer';
import type { BulkProgress } from './core/bulk/ports';
import { type BulkTiming, DEFAULT_BULK_TIMING } from './core/bulk/limits';
import type { Resolver } from './core/net/ports';
import type { DeliveryStore, Outbox, OutboxNotice, WebhookRepository } from './core/webhooks/ports';
import { SecretBox } from './core/webhooks/secret-box';
import { DynamoDeliveryStore, DynamoOutbox, DynamoWebhookRepository } from './adapters/dynamodb/webhooks';
import { NotifyingBulkProgress, NotifyingChargeStore, NotifyingJobRepository, queueNotifier } from './adapters/outbox/notify';

/** How the service introduces itself to servers it calls. */
export const USER_AGENT = 'PdfService/1.0';

export interface ServiceConfig {
  region: string;
  tableName: string;
  bucketName: string;
  dynamodbEndpoint?: string;
  s3Endpoint?: string;
  userPoolId: string;
  userPoolClientId: string;
  /** Local issuer's JWKS file; set only by the local stack. */
  localJwksFile?: string;
  chromiumPath?: string;
  /** Where the Chromium layer puts @sparticuz/chromium's compressed binaries (/opt/chromium in Lambda). */
  chromiumPackDir?: string;
  /** Fonts the Chromium layer ships (/opt/fonts in Lambda, where the host has none): CHROMIUM_FONT_DIR. */
  chromiumFontDir?: string;
  /** Where Chromium's fontconfig and profiles go (CHROMIUM_FILES_DIR; the local stack's DATA_DIR/chromium); unset, the system temp dir. */
  chromiumFilesDir?: string;
  renderPrewarm: number;
  renderMaxConcurrent: number;
  /** A document's renderer process over this resident memory is killed and the document fails (0: no cap). */
  renderMaxPageMemoryMb: number;
  /** The browser process over this resident memory is killed and relaunched; documents rendering then fail (0: no cap). */
  renderMaxBrowserMemoryMb: number;
  /** Overrides the 30 s quick-job limit (set by the CDK app below its gateway's timeout: 27 s behind the default 29 s). */
  quickjobTimeoutSeconds?: number;
  /** Overrides the 28 s page-counting limit of a long-job submission (set by the CDK app below its gateway's timeout). */
  longjobSubmissionSeconds?: number;
  /** Overrides the 25 s instant merge/split limit and the background job budget (tests only). */
  pdfopTimeoutSeconds?: number;
  pdfJobTimeoutSeconds?: number;
  /** State machine ARN of each workflow (WORKFLOW_ARN_<NAME>, set by the CDK app on functions that start it). */
  workflowArns: Record<string, string | undefined>;
  priceIds: PlanPriceIds;
  /** One-off credit pack prices: STRIPE_PRICE_PACK_10 … STRIPE_PRICE_PACK_1500. */
  packPriceIds: PackPriceIds;
  /** Stripe: without `secretKey` the subscription routes answer 503 PAYMENTS_NOT_CONFIGURED. */
  stripe: StripeSettings;
  /** PAGINATION_SECRET: seals list page tokens (next_token of GET /jobs, the webhook list and the webhook history routes). */
  paginationSecret?: string;
  /** ALLOW_PRIVATE_TARGETS: the only way past the network guard (never set by the CDK app). */
  allowPrivateTargets?: string;
  /** NODE_EXTRA_CA_CERTS: also trusted by the service's own outbound HTTPS. */
  extraCaFile?: string;
  /** RENDER_QUEUE_URL: the long-job render queue (SQS); locally an in-process queue is injected. */
  renderQueueUrl?: string;
  /** Overrides the 15-minute long-job render limit (tests only). */
  longjobTimeoutSeconds?: number;
  /**
   * LONGJOB_RENDERS_PER_ACCOUNT (10; the local stack, whose queue renders 2 at once, sets 1): long jobs of one account
   * rendering at once. LONGJOB_DEFER_SECONDS (30): the longest a job over that share waits before it is tried again.
   */
  longjobShare: { rendersPerAccount?: number; deferSeconds?: number };
  /** Service email: MAIL_SMTP_URL (SMTP server) or, locally, MAIL_DIR (a folder of .eml files); MAIL_FROM. */
  mail: { smtpUrl?: string; dir?: string; from: string };
  /** Bulk timing: BULK_IDLE_MAX_SECONDS (20), BULK_FILE_TIMEOUT_SECONDS (60), BULK_JOB_TIME_BUDGET_SECONDS (900); tests only. */
  bulkTiming: BulkTiming;
  /** WEBHOOK_QUEUE_URL: the webhook dispatcher queue (SQS); locally an in-process queue is injected. */
  webhookQueueUrl?: string;
  /**
   * WEBHOOK_DISPATCHES_PER_ACCOUNT (10 of the 50 dispatchers in AWS; the local stack, which runs 4, sets 2): events of
   * one account dispatched at once. WEBHOOK_DEFER_SECONDS (30): the longest an event over that share waits before it
   * is tried again.
   */
  webhookShare: { dispatchesPerAccount?: number; deferSeconds?: number };
  /** WEBHOOK_SECRETS_KEY: encrypts webhook signing secrets at rest (functions that create, rotate or sign). */
  webhookSecretsKey?: string;
  /** RESPONSE_CONTRACT=strict (the test stack): every answer is checked against the OpenAPI document's schemas. */
  checkResponseContract: boolean;
}

export interface StripeSettings {
  secretKey?: string;
  webhookSecret?: string;
  /** A test double of Stripe's API (STRIPE_API_HOST/PORT/PROTOCOL). */
  apiHost?: string;
  apiPort?: number;
  apiProtocol?: 'http' | 'https';
  /** Where the customer portal sends the customer back to (STRIPE_PORTAL_RETURN_URL). */
  portalReturnUrl?: string;
}

function intEnv(name: string, fallback: number): number {
  const v = process.env[name];
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}

/*
 * STRIPE_API_PORT/PROTOCOL point the stripe client at a test double. A value that cannot be used stops the start:
 * ignoring it would send the test's calls (with its key) to api.stripe.com instead.
 */
function stripeApiPort(v: string | undefined): number | undefined {
  if (!v) return undefined;
  // Digits only: Number() would also read "0x50", "1e3" or " 80 ".
  const port = /^\d{1,5}$/.test(v) ? Number(v) : NaN;
  if (port > 0 && port < 65_536) return port;
  throw new Error(`STRIPE_API_PORT must be a port number (1-65535), not ${JSON.stringify(v)}`);
}

function stripeApiProtocol(v: string | undefined): 'http' | 'https' | undefined {
  if (!v) return undefined;
  const protocol = v.trim().toLowerCase();
  if (protocol === 'http' || protocol === 'https') return protocol;
  throw new Error(`STRIPE_API_PROTOCOL must be http or https, not ${JSON.stringify(v)}`);
}

/*
 * ALLOW_PRIVATE_TARGETS is read when the service starts: an entry it cannot use stops the start with a message,
 * rather than failing every fetch, render and webhook with a 500 later.
 */
function allowPrivateTargets(v: string | undefined): string | undefined {
  if (!v) return undefined;
  new PrivateTargetAllowlist(v);
  return v;
}

/*
 * NODE_EXTRA_CA_CERTS: Node only warns about a file it cannot read, but the service's own HTTPS client reads it
 * too, and would fail every URL fetch and webhook delivery with a 500. It is checked when the service starts.
 */
function extraCaFile(v: string | undefined): string | undefined {
  if (!v) return undefined;
  try {
    readFileSync(v);
  } catch (err) {
    throw new Error(`NODE_EXTRA_CA_CERTS names ${JSON.stringify(v)}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); give the CA file's absolute path`);
  }
  return v;
}

/** Each Lambda gets only the settings it uses; a missing one fails where it is first needed. */
function required(value: string, name: string): string {
  if (!value) throw new Error(`${name} is not set; the CDK stack and the local stack set it for functions that need it`);
  return value;
}

/** An account's share of a queue's workers (a whole number, at least 1); undefined for anything else (the default). */
function shareCount(value: string | undefined): number | undefined {
  return Number(value) >= 1 ? Math.floor(Number(value)) : undefined;
}

/** The longest wait of a message over its account's share, at least 1 s (sent back at once, it would be tried again and again without pause). */
function deferWait(value: string | undefined): number | undefined {
  return Number(value) >= 1 ? Number(value) : undefined;
}

export function configFromEnv(env = process.env): ServiceConfig {
  return {
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    tableName: env.TABLE_NAME ?? '',
    bucketName: env.BUCKET_NAME ?? '',
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    s3Endpoint: env.S3_ENDPOINT || undefined,
    userPoolId: env.USER_POOL_ID ?? '',
    userPoolClientId: env.USER_POOL_CLIENT_ID ?? '',
    localJwksFile: env.LOCAL_JWKS_FILE || undefined,
    chromiumPath: env.CHROMIUM_PATH || undefined,
    chromiumPackDir: env.CHROMIUM_PACK_DIR || undefined,
    chromiumFontDir: env.CHROMIUM_FONT_DIR || undefined,
    chromiumFilesDir: env.CHROMIUM_FILES_DIR || undefined,
    renderPrewarm: intEnv('RENDER_PREWARM', env.AWS_LAMBDA_FUNCTION_NAME ? 1 : 2),
    // More documents in flight than cores + 1 only adds contention (measured: 8 at once is slower than 3 on 2 cores).
    renderMaxConcurrent: intEnv('RENDER_MAX_CONCURRENT', env.AWS_LAMBDA_FUNCTION_NAME ? 1 : cpus().length + 1),
    // A 2 GB render Lambda needs ~0.5 GB for the browser and Node; locally several documents share the machine.
    renderMaxPageMemoryMb: intEnv('RENDER_MAX_PAGE_MEMORY_MB', env.AWS_LAMBDA_FUNCTION_NAME ? 1024 : 1536),
    // The browser process itself idles at ~90 MB; Blob data kept by pages is what grows it (see ChromiumMemoryWatch).
    renderMaxBrowserMemoryMb: intEnv('RENDER_MAX_BROWSER_MEMORY_MB', env.AWS_LAMBDA_FUNCTION_NAME ? 640 : 2048),
    quickjobTimeoutSeconds: env.QUICKJOB_TIMEOUT_SECONDS ? Number(env.QUICKJOB_TIMEOUT_SECONDS) : undefined,
    longjobSubmissionSeconds: env.LONGJOB_SUBMISSION_SECONDS ? Number(env.LONGJOB_SUBMISSION_SECONDS) : undefined,
    pdfopTimeoutSeconds: env.PDFOP_TIMEOUT_SECONDS ? Number(env.PDFOP_TIMEOUT_SECONDS) : undefined,
    pdfJobTimeoutSeconds: env.PDF_JOB_TIMEOUT_SECONDS ? Number(env.PDF_JOB_TIMEOUT_SECONDS) : undefined,
    workflowArns: Object.fromEntries(WORKFLOWS.map((w) => [w.name, env[workflowArnVariable(w.name)] || undefined])),
    priceIds: { starter: env.STRIPE_PRICE_STARTER || undefined, business: env.STRIPE_PRICE_BUSINESS || undefined },
    packPriceIds: Object.fromEntries(CREDIT_PACK_USD.flatMap((usd) => (env[`STRIPE_PRICE_PACK_${usd}`] ? [[usd, env[`STRIPE_PRICE_PACK_${usd}`]]] : []))),
    stripe: {
      secretKey: env.STRIPE_SECRET_KEY || undefined,
      webhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
      apiHost: env.STRIPE_API_HOST || undefined,
      apiPort: stripeApiPort(env.STRIPE_API_PORT),
      apiProtocol: stripeApiProtocol(env.STRIPE_API_PROTOCOL),
      portalReturnUrl: env.STRIPE_PORTAL_RETURN_URL || undefined,
    },
    paginationSecret: env.PAGINATION_SECRET || undefined,
    allowPrivateTargets: allowPrivateTargets(env.ALLOW_PRIVATE_TARGETS),
    extraCaFile: extraCaFile(env.NODE_EXTRA_CA_CERTS),
    renderQueueUrl: env.RENDER_QUEUE_URL || undefined,
    longjobTimeoutSeconds: env.LONGJOB_TIMEOUT_SECONDS ? Number(env.LONGJOB_TIMEOUT_SECONDS) : undefined,
    longjobShare: { rendersPerAccount: shareCount(env.LONGJOB_RENDERS_PER_ACCOUNT), deferSeconds: deferWait(env.LONGJOB_DEFER_SECONDS) },
    mail: { smtpUrl: env.MAIL_SMTP_URL || undefined, dir: env.MAIL_DIR || undefined, from: env.MAIL_FROM || 'PDF service <no-reply@pdf-service.local>' },
    bulkTiming: {
      idleMaxSeconds: Number(env.BULK_IDLE_MAX_SECONDS) || DEFAULT_BULK_TIMING.idleMaxSeconds,
      fileTimeoutSeconds: Number(env.BULK_FILE_TIMEOUT_SECONDS) || DEFAULT_BULK_TIMING.fileTimeoutSeconds,
      jobTimeBudgetSeconds: Number(env.BULK_JOB_TIME_BUDGET_SECONDS) || DEFAULT_BULK_TIMING.jobTimeBudgetSeconds,
    },
    webhookQueueUrl: env.WEBHOOK_QUEUE_URL || undefined,
    webhookShare: { dispatchesPerAccount: shareCount(env.WEBHOOK_DISPATCHES_PER_ACCOUNT), deferSeconds: deferWait(env.WEBHOOK_DEFER_SECONDS) },
    webhookSecretsKey: env.WEBHOOK_SECRETS_KEY || undefined,
    checkResponseContract: env.RESPONSE_CONTRACT === 'strict',
  };
}

export interface Services {
  readonly config: ServiceConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly accounts: AccountRepository;
  readonly plans: PlanRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly jobs: JobRepository;
  readonly rateLimiter: RateLimiter;
  readonly billing: Billing;
  readonly blobs: BlobStore;
  readonly renderer: Renderer;
  readonly idTokens: IdTokenVerifier;
  readonly billingState: BillingStateStore;
  /** Stripe's API; null without STRIPE_SECRET_KEY. */
  readonly payments: PaymentProvider | null;
  /** Stripe webhook signatures; null without STRIPE_WEBHOOK_SECRET. */
  readonly paymentEvents: PaymentEventVerifier | null;
  readonly subscriptions: SubscriptionService;
  readonly creditPacks: readonly CreditPack[];
  /** Key for list page tokens; required where a list route runs. */
  readonly paginationSecret: string;
  /** The network guard for every connection made on a customer's behalf. */
  readonly guard: NetworkGuard;
  /** Outbound HTTP(S) through the guard. */
  readonly http: HttpClient;
  /** Per-file result rows of jobs (GET /jobs/{id}/files). */
  readonly jobFiles: JobFileRepository;
  /** Running-job slots (2 merge/split jobs per account). */
  readonly jobSlots: JobSlots;
  /** What running bulk and merge/split jobs will charge (the whole-job credit check). */
  readonly commitments: CommitmentStore;
  /** Starts Step Functions workflows (in-process locally). */
  readonly workflows: WorkflowStarter;
  /** The long-job render queue. */
  readonly renderQueue: MessageQueue<RenderJobMessage>;
  /** Service email (job ready/failed). */
  readonly mailer: Mailer;
  /** Bulk jobs' concurrent per-file writes (rows with progress, cancel requests) and ledger look-ups. */
  readonly bulkProgress: BulkProgress;
  /** Webhooks, their delivery claims and history, the event outbox, the dispatcher queue, the secret sealer. */
  readonly webhooks: WebhookRepository;
  readonly webhookDeliveries: DeliveryStore;
  readonly outbox: Outbox;
  readonly webhookQueue: MessageQueue<OutboxNotice>;
  /** When a message a worker failed on comes back (instead of after the queue's whole visibility timeout). */
  readonly redelivery: Redelivery;
  readonly webhookSecrets: SecretBox;
  /** Stops background resources (the browser); used by the local stack and tests. */
  close(): Promise<void>;
}

/** Adapters the local stack supplies itself (in-process stand-ins with no endpoint to point at). */
export interface LocalAdapters {
  workflows?: WorkflowStarter;
  renderQueue?: MessageQueue<RenderJobMessage>;
  webhookQueue?: MessageQueue<OutboxNotice>;
  redelivery?: Redelivery;
  /** DNS answers for the network guard (the local stack's LOCAL_DNS_OVERRIDES, tests only); the system resolver otherwise. */
  resolver?: Resolver;
  /** Calls the local DynamoDB in-process instead of over loopback HTTP. */
  dynamoRequestHandler?: DynamoConfig['requestHandler'];
}

function memo<T>(make: () => T): () => T {
  let value: T | undefined;
  let made = false;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value as T;
  };
}

export function createServices(config: ServiceConfig, clock: Clock = systemClock, local: LocalAdapters = {}): Services {
  const log = createLogger();
  const guard = memo(() => new NetworkGuard(local.resolver ?? systemResolver, new PrivateTargetAllowlist(config.allowPrivateTargets)));
  const httpClient = memo(
    () => new GuardedHttpClient(guard(), { extraCa: config.extraCaFile ? readFileSync(config.extraCaFile, 'utf8') : undefined, userAgent: USER_AGENT }),
  );
  const dynamo = memo<Dynamo>(() => createDynamo({ tableName: required(config.tableName, 'TABLE_NAME'), region: config.region, endpoint: config.dynamodbEndpoint, requestHandler: local.dynamoRequestHandler }));
  const accounts = memo(() => new DynamoAccountRepository(dynamo()));
  const chromium = memo(async () => {
    const { ChromiumBrowser } = await import('./adapters/chromium/browser');
    const { ChromiumRenderer } = await import('./adapters/chromium/renderer');
    const browser = new ChromiumBrowser({
      executablePath: config.chromiumPath,
      packDir: config.chromiumPackDir,
      fontDir: config.chromiumFontDir,
      filesDir: config.chromiumFilesDir,
      prewarm: config.renderPrewarm,
      maxConcurrent: config.renderMaxConcurrent,
      maxPageMemoryBytes: config.renderMaxPageMemoryMb * 2 ** 20,
      maxBrowserMemoryBytes: config.renderMaxBrowserMemoryMb * 2 ** 20,
      guard: guard(),
      log: (message, err) => log.warn(message, err),
    });
    return { browser, renderer: new ChromiumRenderer(browser) };
  });
  let chromiumStarted = false;
  const renderer: Renderer = {
    render: async (request) => {
      chromiumStarted = true;
      return (await chromium()).renderer.render(request);
    },
  };
  const idTokens = memo<IdTokenVerifier>(() => {
    const localJwks = config.localJwksFile ? JSON.parse(readFileSync(config.localJwksFile, 'utf8')) : undefined;
    return new CognitoIdTokenVerifier({
      userPoolId: required(config.userPoolId, 'USER_POOL_ID'),
      clientId: required(config.userPoolClientId, 'USER_POOL_CLIENT_ID'),
      localJwks,
    });
  });
  const blobs = memo(() => {
    const bucket = required(config.bucketName, 'BUCKET_NAME');
    return new S3BlobStore(createS3Client({ bucket, region: config.region, endpoint: config.s3Endpoint }), bucket);
  });
  // Events committed with a job change are announced to the webhook dispatcher right after the write (the
  // outbox sweeper covers a lost notice); functions without the dispatcher queue leave it to the sweeper.
  const webhookQueue = memo<MessageQueue<OutboxNotice> | null>(() =>
    local.webhookQueue ?? (config.webhookQueueUrl ? new SqsQueue<OutboxNotice>(config.webhookQueueUrl, config.region) : null),
  );
  const notifyOutbox = queueNotifier(webhookQueue, (m, e) => log.warn(m, e));
  const billing = memo(() => new Billing(accounts(), new NotifyingChargeStore(dynamo(), notifyOutbox), clock));
  const plans = memo(() => new DynamoPlanRepository(dynamo()));
  const apiKeys = memo(() => new DynamoApiKeyRepository(dynamo()));
  const jobs = memo(() => new NotifyingJobRepository(dynamo(), notifyOutbox));
  const rateLimiter = memo(() => new DynamoRateLimiter(dynamo()));
  const jobFiles = memo(() => new DynamoJobFileRepository(dynamo()));
  const jobSlots = memo(() => new DynamoJobSlots(dynamo()));
  const commitments = memo(() => new DynamoCommitmentStore(dynamo()));
  const bulkProgress = memo(() => new NotifyingBulkProgress(dynamo(), notifyOutbox));
  const workflows = memo<WorkflowStarter>(() => local.workflows ?? new SfnWorkflowStarter(createSfnClient(config.region), config.workflowArns));
  const redelivery = memo<Redelivery>(() => local.redelivery ?? new SqsRedelivery(config.region));
  const renderQueue = memo<MessageQueue<RenderJobMessage>>(
    () => local.renderQueue ?? new SqsQueue<RenderJobMessage>(required(config.renderQueueUrl ?? '', 'RENDER_QUEUE_URL'), config.region),
  );
  const mailer = memo<Mailer>(() => {
    const { smtpUrl, dir, from } = config.mail;
    if (smtpUrl) return new SmtpMailer(smtpUrl, from);
    if (dir) return new FolderMailer(dir, from);
    return new DisabledMailer((m) => log.warn(m));
  });
  const billingState = memo(() => new DynamoBillingStateStore(dynamo()));
  const webhooks = memo(() => new DynamoWebhookRepository(dynamo()));
  const webhookDeliveries = memo(() => new DynamoDeliveryStore(dynamo()));
  const outbox = memo(() => new DynamoOutbox(dynamo()));
  const webhookSecrets = memo(() => new SecretBox(required(config.webhookSecretsKey ?? '', 'WEBHOOK_SECRETS_KEY')));
  const stripeSettings = config.stripe;
  const payments = memo<PaymentProvider | null>(() =>
    stripeSettings.secretKey
      ? new StripePaymentProvider({ secretKey: stripeSettings.secretKey, host: stripeSettings.apiHost, port: stripeSettings.apiPort, protocol: stripeSettings.apiProtocol }, (m, f) => log.error(m, f))
      : null,
  );
  const paymentEvents = memo<PaymentEventVerifier | null>(() => (stripeSettings.webhookSecret ? new StripeWebhookVerifier(stripeSettings.webhookSecret) : null));
  const packs = creditPacks(config.packPriceIds);
  const subscriptions = memo(
    () =>
      new SubscriptionService({
        accounts: accounts(),
        plans: plans(),
        store: billingState(),
        provider: payments(),
        packs,
        clock,
        portalReturnUrl: stripeSettings.portalReturnUrl,
        log,
      }),
  );

  return {
    config,
    clock,
    log,
    get accounts() {
      return accounts();
    },
    get plans() {
      return plans();
    },
    get apiKeys() {
      return apiKeys();
    },
    get jobs() {
      return jobs();
    },
    get rateLimiter() {
      return rateLimiter();
    },
    get billing() {
      return billing();
    },
    get blobs() {
      return blobs();
    },
    renderer,
    get idTokens() {
      return idTokens();
    },
    get billingState() {
      return billingState();
    },
    get payments() {
      return payments();
    },
    get paymentEvents() {
      return paymentEvents();
    },
    get subscriptions() {
      return subscriptions();
    },
    creditPacks: packs,
    get paginationSecret() {
      return required(config.paginationSecret ?? '', 'PAGINATION_SECRET');
    },
    get guard() {
      return guard();
    },
    get http() {
      return httpClient();
    },
    get jobFiles() {
      return jobFiles();
    },
    get jobSlots() {
      return jobSlots();
    },
    get commitments() {
      return commitments();
    },
    get workflows() {
      return workflows();
    },
    get renderQueue() {
      return renderQueue();
    },
    get redelivery() {
      return redelivery();
    },
    get mailer() {
      return mailer();
    },
    get bulkProgress() {
      return bulkProgress();
    },
    get webhooks() {
      return webhooks();
    },
    get webhookDeliveries() {
      return webhookDeliveries();
    },
    get outbox() {
      return outbox();
    },
    get webhookQueue() {
      const queue = webhookQueue();
      if (!queue) required('', 'WEBHOOK_QUEUE_URL');
      return queue as MessageQueue<OutboxNotice>;
    },
    get webhookSecrets() {
      return webhookSecrets();
    },
    async close() {
      if (chromiumStarted) await (await chromium()).browser.close();
    },
  };
}

/** Starts Chromium and fills its context pool now rather than on the first request (local start-up, render Lambdas' init). */
export async function warmRenderer(services: Services): Promise<void> {
  await services.renderer.render({
    html: '<!DOCTYPE html><title>warm-up</title><p>warm-up</p>',
    options: {
      paperWidthIn: 8.27, paperHeightIn: 11.69, landscape: false, printBackground: true, scale: 1, preferCSSPageSize: false,
      margin: { top: 0, right: 0, bottom: 0, left: 0 }, pageRanges: '', displayHeaderFooter: false, headerTemplate: '', footerTemplate: '',
    },
    timeoutMs: 60_000,
  });
}

let current: Services | null = null;

/** The process-wide services, built from the environment on first use (warm across Lambda invocations). */
export function services(): Services {
  if (!current) current = createServices(configFromEnv());
  return current;
}

/**
 * What every Lambda entry point uses: the services once the deployment's secrets are in the environment (read from
 * Secrets Manager at cold start; a no-op locally, where no secret is configured that way).
 */
export async function readyServices(): Promise<Services> {
  await deploymentSecretsLoaded();
  return services();
}

/** Replaces the process-wide services (local stack start-up and tests). */
export function setServices(next: Services | null): void {
  current = next;
}
