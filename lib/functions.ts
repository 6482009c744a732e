import path from 'node:path';
import { Duration, Size } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { FunctionProfile, Permission } from '../functions/routes';
import { CHROMIUM_FONT_DIR, CHROMIUM_PACK_DIR } from './chromium-layer';
import { STORAGE_AREAS } from '../functions/core/jobs/storage-layout';
import { keys } from '../functions/adapters/dynamodb/schema';
import { FUNCTION_PROFILES, functionTimeoutSeconds } from '../functions/profiles';

const ROOT = path.resolve(__dirname, '..');

/**
 * Left out of bundles: ws's optional native accelerators (puppeteer runs without them), and for
 * non-render functions the browser libraries, which the composition root only loads on first render.
 */
export function externalModules(profile: FunctionProfile): string[] {
  return ['bufferutil', 'utf-8-validate', ...(profile === 'render' ? [] : ['puppeteer-core', '@sparticuz/chromium'])];
}

/**
 * A setting whose value stays in Secrets Manager: the function's configuration holds only where it is
 * (`<variable>_SECRET_ID`, and `<variable>_SECRET_FIELD` for one field of a JSON secret), its role may read that
 * secret alone, and functions/adapters/secrets reads it into the environment at cold start.
 */
export interface SecretSetting {
  variable: string;
  secret: secretsmanager.ISecret;
  jsonField?: string;
}

function secretEnvironment(settings: readonly SecretSetting[]): Record<string, string> {
  return Object.fromEntries(
    settings.flatMap(({ variable, secret, jsonField }) => [
      // A secret imported by name has no full ARN; Secrets Manager finds it by name.
      [`${variable}_SECRET_ID`, secret.secretFullArn ?? secret.secretName],
      ...(jsonField ? [[`${variable}_SECRET_FIELD`, jsonField]] : []),
    ]),
  );
}

export interface FunctionSpec {
  /** "<file under functions/>#<export>" */
  ref: string;
  profile: FunctionProfile;
  permissions: Permission[];
  timeoutSeconds?: number;
  environment?: Record<string, string>;
  /** Secret settings of this function alone; only with `dedicatedRole`, so that no other function may read them. */
  secrets?: SecretSetting[];
  /**
   * A role of its own instead of the one shared by its permission set: for workers that an event source
   * grants more (consuming a queue), so those grants don't reach other functions.
   */
  dedicatedRole?: boolean;
}

export interface FunctionFactoryProps {
  table: dynamodb.ITable;
  bucket: s3.IBucket;
  chromiumLayer: lambda.ILayerVersion;
  /** The most memory a function gets (MB), below its profile's when the account's Lambda quota is lower. */
  maxMemoryMb?: number;
  environment: Record<string, string>;
  /** Extra environment for functions whose route declares a permission (e.g. `stripe` → the portal return URL). */
  permissionEnvironment?: Partial<Record<Permission, Record<string, string>>>;
  /** Secret settings for functions whose route declares a permission (e.g. `pagination` → the page-token key). */
  permissionSecrets?: Partial<Record<Permission, SecretSetting[]>>;
}

/**
 * The DynamoDB operations the adapters use (functions/adapters/dynamodb), on the table and its index. CDK's
 * grantReadData would add Scan and the stream reads, which nothing here needs; transactions need no action of their
 * own beyond those of their items (Put, Update and Delete with their conditions; no transaction has a ConditionCheck
 * item, so no dynamodb:ConditionCheckItem).
 */
const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query'];
const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

/**
 * What a function that prints untrusted documents (profile `render`: Chromium with --no-sandbox) may reach, so that a
 * renderer exploit holding its role's credentials gets no further than the work of rendering: objects under the job
 * input and output areas only (not merge/split files, editor outputs, uploads or template assets), read by key with no
 * way to list them (no s3:List*, and no access to the table's index, whose partitions name jobs and their keys), and
 * none of the table's partitions that hold credentials or their equivalents — API keys (writing one would open any
 * account), webhooks and their signing secrets, Stripe mappings; nor may they write the plan catalogue, which they read.
 * Accounts, jobs and rate windows stay reachable by key: charging and recording jobs is part of rendering.
 */
export const RENDER_OBJECT_PREFIXES = [STORAGE_AREAS.jobInputs.prefix, STORAGE_AREAS.jobOutputs.prefix];
/** The stored results a `bucket:read:outputs` role may read (and sign links to). */
export const OUTPUT_OBJECT_PREFIXES = [STORAGE_AREAS.jobOutputs.prefix, STORAGE_AREAS.pdfOutputs.prefix, STORAGE_AREAS.editorOutputs.prefix];
// The table's partitions only: render roles have no access to its index at all (see grant).
export const RENDER_DENIED_PARTITIONS = [
  keys.apiKeyPartition(''),
  keys.apiKeyOwner('').pk,
  keys.webhook('').pk,
  keys.stripeEvent('').pk,
  keys.stripeCustomer('').pk,
  keys.stripePayment('').pk,
].map((prefix) => `${prefix}*`);

/**
 * Function defaults in one place: Node 22 bundles built locally by esbuild, one Lambda per handler,
 * the Chromium layer only on render functions, and exactly the permissions a handler declares.
 * Functions with the same permission set share one role and all share one log group, which keeps
 * the stack far below CloudFormation's 500-resource limit with ~70 functions.
 */
export class FunctionFactory extends Construct {
  private readonly made = new Map<string, NodejsFunction>();
  private readonly roles = new Map<string, iam.Role>();
  private readonly grantsOf = new Map<iam.Role, Permission[]>();
  /** Roles of render functions, confined as RENDER_OBJECT_PREFIXES and RENDER_DENIED_PARTITIONS say. */
  readonly confinedRoles = new Set<iam.Role>();
  /** The log group of every function (and of the deploy-time plan seeding). */
  readonly logGroup: logs.LogGroup;
  /**
   * Writing to the shared log group, and nothing else: what AWSLambdaBasicExecutionRole would give, minus creating
   * log groups and writing to any other one. Attached to every role through its ManagedPolicyArns, so a function
   * can log from its first invocation.
   */
  readonly logPolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, private readonly props: FunctionFactoryProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH });
    this.logPolicy = new iam.ManagedPolicy(this, 'LogsPolicy', {
      description: 'Lambda functions of the PDF service write to their shared log group',
      statements: [new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [this.logGroup.logGroupArn] })],
    });
  }

  /**
   * The role for a permission set (or, when `owner` is given, a role of that function alone), granted exactly those
   * permissions; `confined` for render functions (see RENDER_OBJECT_PREFIXES), which never share a role with others.
   */
  private roleFor(permissions: Permission[], owner: string | undefined, confined: boolean): iam.Role {
    const set = [...new Set(permissions)].sort();
    const name = `${confined ? 'render-' : ''}${owner ? `own-${owner}` : set.length ? set.join('+') : 'none'}`;
    let role = this.roles.get(name);
    if (!role) {
      role = new iam.Role(this, `Role-${name.replace(/[^A-Za-z0-9]+/g, '-')}`, {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        managedPolicies: [this.logPolicy],
        description: `Lambda functions that need: ${name}`,
      });
      this.grant(role, set, confined);
      if (confined) this.confinedRoles.add(role);
      this.roles.set(name, role);
      this.grantsOf.set(role, set);
    }
    return role;
  }

  private readonly permissionsOf = new Map<NodejsFunction, Permission[]>();

  /** Functions whose handler declared `permission` (e.g. `workflow:start`, granted once the state machines exist). */
  withPermission(permission: Permission): NodejsFunction[] {
    return [...this.permissionsOf].filter(([, perms]) => perms.includes(permission)).map(([fn]) => fn);
  }

  /** Every role made, with the permissions it was granted (the audit in lib/nag-suppressions.ts reads it). */
  get roleGrants(): ReadonlyMap<iam.Role, readonly Permission[]> {
    return this.grantsOf;
  }

  get all(): NodejsFunction[] {
    return [...this.made.values()];
  }

  private memoryOf(profileMb: number): number {
    const cap = this.props.maxMemoryMb;
    if (cap === undefined) return profileMb;
    // Up to Lambda's largest; not below the smallest profile (256 MB), since no handler was tried with less.
    if (!Number.isInteger(cap) || cap < 256 || cap > 10240) throw new Error(`maxFunctionMemoryMb must be a whole number of MB from 256 to 10240 (got ${cap}); new AWS accounts can usually use 3008.`);
    return Math.min(profileMb, cap);
  }

  /** The function for a handler reference; the same reference always yields the same function. */
  forHandler(spec: FunctionSpec): NodejsFunction {
    const existing = this.made.get(spec.ref);
    if (existing) return existing;
    if (spec.secrets?.length && !spec.dedicatedRole) throw new Error(`${spec.ref}: secrets of one function need dedicatedRole (a shared role would let others read them)`);
    const [file, exportName] = spec.ref.split('#');
    const profile = FUNCTION_PROFILES[spec.profile];
    const render = spec.profile === 'render';
    const id = spec.ref.replace(/[^A-Za-z0-9]+/g, '-');
    const role = this.roleFor(spec.permissions, spec.dedicatedRole ? spec.ref : undefined, render);
    for (const { secret } of spec.secrets ?? []) secret.grantRead(role);
    const fn = new NodejsFunction(this, id, {
      entry: path.join(ROOT, 'functions', `${file}.ts`),
      handler: exportName,
      projectRoot: ROOT,
      depsLockFilePath: path.join(ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.X86_64,
      memorySize: this.memoryOf(profile.memorySize),
      timeout: Duration.seconds(functionTimeoutSeconds(spec.profile, spec.timeoutSeconds)),
      // Chromium unpacks itself into /tmp (~250 MB).
      ephemeralStorageSize: render ? Size.mebibytes(1024) : undefined,
      layers: render ? [this.props.chromiumLayer] : [],
      logGroup: this.logGroup,
      role,
      environment: {
        ...this.props.environment,
        ...(render ? { CHROMIUM_PACK_DIR, CHROMIUM_FONT_DIR, RENDER_PREWARM: '1', RENDER_MAX_CONCURRENT: '1' } : {}),
        ...Object.assign({}, ...spec.permissions.map((p) => this.props.permissionEnvironment?.[p] ?? {})),
        ...secretEnvironment(spec.permissions.flatMap((p) => this.props.permissionSecrets?.[p] ?? [])),
        ...spec.environment,
        ...secretEnvironment(spec.secrets ?? []),
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        format: OutputFormat.CJS,
        target: 'node22',
        minify: true,
        sourceMap: true,
        externalModules: externalModules(spec.profile),
        logLevel: LogLevel.ERROR,
      },
    });
    this.made.set(spec.ref, fn);
    this.permissionsOf.set(fn, spec.permissions);
    return fn;
  }

  private grant(role: iam.Role, permissions: Permission[], confined: boolean) {
    const { table, bucket } = this.props;
    // Object permissions on the whole bucket, or on the render areas alone.
    const objects = confined ? RENDER_OBJECT_PREFIXES.map((prefix) => `${prefix}*`) : ['*'];
    // Render roles reach the table itself, not its index: gsi1's partitions list every account's jobs (with their output
    // keys) and, in a handful of sharded partitions, pending events and job starts of all accounts, which would undo "no
    // listing". Rendering queries no index; CDK's table.grant would add <table>/index/*.
    const tableGrant = (actions: string[]) =>
      confined ? role.addToPolicy(new iam.PolicyStatement({ actions, resources: [table.tableArn] })) : table.grant(role, ...actions);
    for (const p of permissions) {
      if (p === 'table:read') tableGrant(TABLE_READ_ACTIONS);
      if (p === 'table:write') tableGrant(TABLE_WRITE_ACTIONS);
      if (p === 'bucket:read') {
        // Render roles read objects by key and may not list them: a compromised renderer cannot enumerate other
        // accounts' keys (the price: S3 answers a missing key with 403, not 404; see the README's deployment notes).
        if (confined) role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: objects.map((pattern) => bucket.arnForObjects(pattern)) }));
        else bucket.grantRead(role);
      }
      if (p === 'bucket:read:outputs') for (const prefix of OUTPUT_OBJECT_PREFIXES) bucket.grantRead(role, `${prefix}*`);
      if (p === 'bucket:write') for (const pattern of objects) bucket.grantPut(role, pattern);
      if (p === 'bucket:upload') bucket.grantPut(role, `${STORAGE_AREAS.uploads.prefix}*`);
      if (p === 'bucket:delete') for (const pattern of objects) bucket.grantDelete(role, pattern);
      for (const { secret } of this.props.permissionSecrets?.[p] ?? []) secret.grantRead(role);
    }
    if (confined && permissions.some((p) => p.startsWith('table:'))) {
      // Items whose partition key is one of these are out of reach.
      role.addToPolicy(
        new iam.PolicyStatement({
          effect: iam.Effect.DENY,
          actions: [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS],
          resources: [table.tableArn],
          conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': RENDER_DENIED_PARTITIONS } },
        }),
      );
      // The plan catalogue (prices, quotas and rate limits of every account) is read to render, never written: it is
      // seeded at deploy.
      role.addToPolicy(
        new iam.PolicyStatement({
          effect: iam.Effect.DENY,
          actions: TABLE_WRITE_ACTIONS,
          resources: [table.tableArn],
          conditions: { 'ForAnyValue:StringEquals': { 'dynamodb:LeadingKeys': [keys.planPartition] } },
        }),
      );
    }
  }
}
