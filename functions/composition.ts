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
import { DynamoChargeStore } from './adapters/dynamodb/charges';
import { type Dynamo, createDynamo } from './adapters/dynamodb/client';
import { DynamoJobRepository } from './adapters/dynamodb/jobs';
import { DynamoPlanRepository } from './adapters/dynamodb/plans';
import { DynamoRateLimiter } from './adapters/dynamodb/rate-limiter';
import { S3BlobStore, createS3Client } from './adapters/s3/blob-store';
import { type Logger, createLogger } from './logger';

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
  renderPrewarm: number;
  renderMaxConcurrent: number;
  /** Overrides the 30 s quick-job limit (tests only). */
  quickjobTimeoutSeconds?: number;
  priceIds: PlanPriceIds;
}

function intEnv(name: string, fallback: number): number {
  const v = process.env[name];
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}

/** Each Lambda gets only the settings it uses; a missing one fails where it is first needed. */
function required(value: string, name: string): string {
  if (!value) throw new Error(`${name} is not set; the CDK stack and the local stack set it for functions that need it`);
  return value;
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
    renderPrewarm: intEnv('RENDER_PREWARM', env.AWS_LAMBDA_FUNCTION_NAME ? 1 : 2),
    // More documents in flight than cores + 1 only adds contention (measured: 8 at once is slower than 3 on 2 cores).
    renderMaxConcurrent: intEnv('RENDER_MAX_CONCURRENT', env.AWS_LAMBDA_FUNCTION_NAME ? 1 : cpus().length + 1),
    quickjobTimeoutSeconds: env.QUICKJOB_TIMEOUT_SECONDS ? Number(env.QUICKJOB_TIMEOUT_SECONDS) : undefined,
    priceIds: { starter: env.STRIPE_PRICE_STARTER || undefined, business: env.STRIPE_PRICE_BUSINESS || undefined },
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
  /** Stops background resources (the browser); used by the local stack and tests. */
  close(): Promise<void>;
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

export function createServices(config: ServiceConfig, clock: Clock = systemClock): Services {
  const log = createLogger();
  const dynamo = memo<Dynamo>(() => createDynamo({ tableName: required(config.tableName, 'TABLE_NAME'), region: config.region, endpoint: config.dynamodbEndpoint }));
  const accounts = memo(() => new DynamoAccountRepository(dynamo()));
  const chromium = memo(async () => {
    const { ChromiumBrowser } = await import('./adapters/chromium/browser');
    const { ChromiumRenderer } = await import('./adapters/chromium/renderer');
    const browser = new ChromiumBrowser({
      executablePath: config.chromiumPath,
      packDir: config.chromiumPackDir,
      prewarm: config.renderPrewarm,
      maxConcurrent: config.renderMaxConcurrent,
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
  const billing = memo(() => new Billing(accounts(), new DynamoChargeStore(dynamo()), clock));
  const plans = memo(() => new DynamoPlanRepository(dynamo()));
  const apiKeys = memo(() => new DynamoApiKeyRepository(dynamo()));
  const jobs = memo(() => new DynamoJobRepository(dynamo()));
  const rateLimiter = memo(() => new DynamoRateLimiter(dynamo()));

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

/** Replaces the process-wide services (local stack start-up and tests). */
export function setServices(next: Services | null): void {
  current = next;
}
