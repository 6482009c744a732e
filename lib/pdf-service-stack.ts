import { createHash } from 'node:crypto';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as cr from 'aws-cdk-lib/custom-resources';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Construct } from 'constructs';
import { keys } from '../functions/adapters/dynamodb/schema';
import { planCatalogue } from '../functions/core/billing/plans';
import { CREDIT_PACK_USD, type PackPriceIds } from '../functions/core/billing/packs';
import type { Permission } from '../functions/routes';
import { Api } from './api';
import { Auth, type CognitoEmail } from './auth';
import { ChromiumLayer } from './chromium-layer';
import { FunctionFactory, type SecretSetting } from './functions';
import { acknowledgeNagFindings } from './nag-suppressions';
import { Storage } from './storage';
import path from 'node:path';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { UNFINISHED_ENDINGS } from '../functions/core/workflows/ended';
import { FAILURE_RECORDER, WORKFLOWS, workflowArnVariable } from '../functions/workflows';
import { AslStateMachine } from './state-machine';
import { QUEUES } from '../functions/queues';
import { WorkerQueue } from './queues';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { SCHEDULES } from '../functions/schedules';

/** The service email's settings, for the functions that send it. */
interface MailSettings {
  environment: Record<string, string>;
  secrets: SecretSetting[];
}

export interface PdfServiceStackProps extends StackProps {
  /** API Gateway integration timeout; 29 s unless the account's quota was raised (then 35 gives quick jobs their full 30 s). */
  integrationTimeoutSeconds?: number;
  /**
   * The most memory any function gets (MB). New AWS accounts start with a reduced Lambda memory quota, below the
   * 4096 MB of the background merge/split workers, and their deploy fails until it is raised; with this set (e.g. 3008)
   * those functions get the cap instead. Unset: every function gets its profile's memory (functions/profiles.ts).
   */
  maxFunctionMemoryMb?: number;
  stripePriceIds?: { starter?: string; business?: string };
  /** Stripe prices of the one-off credit packs, by pack size in USD. */
  stripePackPriceIds?: PackPriceIds;
  /**
   * Name of a Secrets Manager secret holding `{ "secret_key": "sk_…", "webhook_secret": "whsec_…" }`. Only the
   * functions that talk to Stripe (routes declaring the `stripe` permission) receive the key, and only the Stripe
   * webhook route (`stripe:webhook`) the webhook secret. IAM grants a secret whole, though: the functions that may
   * read the key could read the webhook secret too. Without it the
   * subscription routes and the Stripe webhook answer 503 PAYMENTS_NOT_CONFIGURED.
   */
  stripeSecretName?: string;
  /**
   * A second secret holding `{ "webhook_secret": "whsec_…" }`, read instead of the first secret's field: then only the
   * Stripe webhook route may read the webhook secret at all.
   */
  stripeWebhookSecretName?: string;
  /** Where the Stripe customer portal sends customers back to (the dashboard). */
  stripePortalReturnUrl?: string;
  /** An address subscribed to the alarm topic (it must confirm the subscription); without it, subscribe to AlarmTopicArn yourself. */
  alarmEmail?: string;
  /**
   * Service email (long job ready/failed): the sender address, and the name of a Secrets Manager secret whose
   * `smtp_url` field is an SMTP URL (e.g. smtps://USER:PASS@email-smtp.<region>.amazonaws.com). Without it no
   * email is sent (and the logs say so once).
   */
  mail?: { from?: string; smtpSecretName?: string };
  /**
   * Cognito's emails (sign-up codes, password resets) through SES instead of Cognito's own sender, which allows 50 a
   * day: a production deployment needs it. The address (or `sesVerifiedDomain`) must be verified in SES.
   */
  cognitoEmail?: CognitoEmail;
}

export class PdfServiceStack extends Stack {
  readonly api: Api;
  readonly storage: Storage;
  readonly auth: Auth;
  readonly functions: FunctionFactory;
  /** The Step Functions state machines of functions/workflows.ts, by workflow name. */
  readonly workflows: Record<string, sfn.StateMachine> = {};
  /** The SQS queues of functions/queues.ts with their workers, by queue name. */
  readonly queues: Record<string, WorkerQueue> = {};
  /** Where every alarm goes (AlarmTopicArn). */
  readonly alarms: sns.Topic;

  constructor(scope: Construct, id: string, props: PdfServiceStackProps = {}) {
    super(scope, id, props);
    const integrationTimeoutSeconds = props.integrationTimeoutSeconds ?? 29;
    this.storage = new Storage(this, 'Storage');
    const chromium = new ChromiumLayer(this, 'Chromium');

    const baseEnvironment: Record<string, string> = {
      TABLE_NAME: this.storage.table.tableName,
      BUCKET_NAME: this.storage.bucket.bucketName,
      // The quick limit is 30 s; below a 29 s gateway it must answer (408) before API Gateway gives up.
      QUICKJOB_TIMEOUT_SECONDS: String(Math.min(30, integrationTimeoutSeconds - 2)),
      // A long-job submission counts pages before answering, then stores, writes and queues: 3 s of room.
      LONGJOB_SUBMISSION_SECONDS: String(Math.min(28, integrationTimeoutSeconds - 3)),
      ...(props.stripePriceIds?.starter ? { STRIPE_PRICE_STARTER: props.stripePriceIds.starter } : {}),
      ...(props.stripePriceIds?.business ? { STRIPE_PRICE_BUSINESS: props.stripePriceIds.business } : {}),
      // Price ids are not secrets: GET /accounts/me/credits lists the packs with theirs, besides the Stripe routes.
      ...Object.fromEntries(
        CREDIT_PACK_USD.flatMap((usd) => (props.stripePackPriceIds?.[usd] ? [[`STRIPE_PRICE_PACK_${usd}`, props.stripePackPriceIds[usd] as string]] : [])),
      ),
    };
    // Secrets stay in Secrets Manager: functions get where to read them at cold start (lib/functions.ts, SecretSetting).
    const stripeSecret = props.stripeSecretName ? secretsmanager.Secret.fromSecretNameV2(this, 'StripeSecret', props.stripeSecretName) : undefined;
    const stripeWebhookSecret = props.stripeWebhookSecretName
      ? secretsmanager.Secret.fromSecretNameV2(this, 'StripeWebhookSecret', props.stripeWebhookSecretName)
      : stripeSecret;
    this.functions = new FunctionFactory(this, 'Functions', {
      table: this.storage.table,
      bucket: this.storage.bucket,
      chromiumLayer: chromium.layer,
      maxMemoryMb: props.maxFunctionMemoryMb,
      environment: baseEnvironment,
      permissionEnvironment: {
        stripe: props.stripePortalReturnUrl ? { STRIPE_PORTAL_RETURN_URL: props.stripePortalReturnUrl } : {},
      },
      permissionSecrets: {
        stripe: stripeSecret ? [{ variable: 'STRIPE_SECRET_KEY', secret: stripeSecret, jsonField: 'secret_key' }] : [],
        'stripe:webhook': stripeWebhookSecret ? [{ variable: 'STRIPE_WEBHOOK_SECRET', secret: stripeWebhookSecret, jsonField: 'webhook_secret' }] : [],
        // Signs list page tokens; generated at deploy, readable by the list routes only.
        pagination: [
          {
            variable: 'PAGINATION_SECRET',
            secret: new secretsmanager.Secret(this, 'PaginationSecret', {
              description: 'Signs the next_token of list routes',
              generateSecretString: { passwordLength: 48, excludePunctuation: true },
            }),
          },
        ],
        // Seals webhook signing secrets at rest; only functions that create, rotate or sign may read it.
        'webhook:secrets': [
          {
            variable: 'WEBHOOK_SECRETS_KEY',
            secret: new secretsmanager.Secret(this, 'WebhookSecretsKey', {
              description: 'Encrypts webhook signing secrets stored in the table',
              generateSecretString: { passwordLength: 64, excludePunctuation: true },
              // Kept like the table it unlocks: a stack re-created over the retained table must still open its secrets.
              removalPolicy: RemovalPolicy.RETAIN,
            }),
          },
        ],
      },
    });

    // Cognito gives the trigger 5 s, cold start included: 512 MB (twice the CPU of the light profile).
    const postConfirmation = this.functions.forHandler({ ref: 'workers/cognito/post-confirmation#handler', profile: 'standard', permissions: ['table:read', 'table:write'] });
    this.auth = new Auth(this, 'Auth', { postConfirmation, email: props.cognitoEmail });
    const poolEnv = { USER_POOL_ID: this.auth.userPool.userPoolId, USER_POOL_CLIENT_ID: this.auth.client.userPoolClientId };

    // A role of its own: it records a key's last use, and that one write must not reach the read-only routes' shared role.
    const authorizerFunction = this.functions.forHandler({ ref: 'http/authorizer#handler', profile: 'light', permissions: [], environment: poolEnv, dedicatedRole: true });
    // It parses every untrusted credential, and needs only API key items (partition APIKEY#<prefix>,
    // functions/adapters/dynamodb/schema.ts): looked up by prefix, and their last use recorded. ID tokens need no table.
    authorizerFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query', 'dynamodb:UpdateItem'],
        resources: [this.storage.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${keys.apiKey('', '').pk}*`] } },
      }),
    );

    this.api = new Api(this, 'Api', {
      functions: this.functions,
      authorizerFunction,
      integrationTimeoutSeconds,
      throttle: { rateLimit: 1000, burstLimit: 2000 },
    });
    const mail = this.mailSettings(props.mail ?? {});
    // Schedules first: their functions may declare workflow:start (the start sweeper), granted in addWorkflows.
    this.addSchedules(mail);
    this.addWorkflows();
    // Every alarm notifies this topic. Not encrypted: CloudWatch cannot publish to a topic under the AWS-managed SNS
    // key, and alarm messages carry no customer data (names of queues and functions, counts).
    this.alarms = new sns.Topic(this, 'Alarms', { displayName: 'PDF service alarms', enforceSSL: true });
    // The topic's own policy (enforceSSL) replaces SNS's default one, which let the account's services publish: without
    // this, CloudWatch is refused sns:Publish and every alarm fires unheard.
    this.alarms.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.alarms.topicArn],
        conditions: { ArnLike: { 'aws:SourceArn': `arn:${this.partition}:cloudwatch:${this.region}:${this.account}:alarm:*` } },
      }),
    );
    if (props.alarmEmail) this.alarms.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    this.addQueues(mail);
    this.alarmOnErrorLogs();
    for (const fn of this.functions.all) {
      if (fn !== postConfirmation) for (const [k, v] of Object.entries(poolEnv)) fn.addEnvironment(k, v);
    }

    this.seedPlans(props.stripePriceIds ?? {});

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url });
    new CfnOutput(this, 'UserPoolId', { value: this.auth.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: this.auth.client.userPoolClientId });
    new CfnOutput(this, 'TableName', { value: this.storage.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.storage.bucket.bucketName });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topicArn });

    acknowledgeNagFindings(this);
  }

  /**
   * One state machine per workflow (ASL from statemachines/, a Lambda per Task state); functions whose route
   * declares `workflow:start` may start them and get their ARNs as WORKFLOW_ARN_<NAME>; `workflow:watch` may read
   * the status of their executions.
   */
  private addWorkflows() {
    for (const wf of WORKFLOWS) {
      const tasks = Object.fromEntries(
        Object.entries(wf.tasks).map(([state, task]) => [
          state,
          this.functions.forHandler({ ref: task.ref, profile: task.profile, permissions: task.permissions, timeoutSeconds: task.timeoutSeconds }),
        ]),
      );
      const machine = new AslStateMachine(this, `Workflow-${wf.name}`, { definitionFile: path.resolve(__dirname, '..', wf.definition), tasks }).stateMachine;
      this.workflows[wf.name] = machine;
      // An execution that ends without reaching its failure recorder (timed out as a whole, stopped, failed outside a
      // Catch) would leave its job processing: its ending goes to the recorder too (core/workflows/ended.ts).
      const recorder = tasks[FAILURE_RECORDER];
      if (!recorder) throw new Error(`${wf.definition}: no ${FAILURE_RECORDER} task`);
      new events.Rule(this, `Ended-${wf.name}`, {
        description: `Ends the job of a ${wf.name} execution that stopped without recording its failure`,
        eventPattern: {
          source: ['aws.states'],
          detailType: ['Step Functions Execution Status Change'],
          detail: { status: [...UNFINISHED_ENDINGS], stateMachineArn: [machine.stateMachineArn] },
        },
        targets: [new targets.LambdaFunction(recorder, { retryAttempts: 8, maxEventAge: Duration.hours(6) })],
      });
    }
    for (const [name, machine] of Object.entries(this.workflows)) {
      const starters = new Set([...this.functions.withPermission('workflow:start'), ...this.functions.withPermission(`workflow:start:${name}` as Permission)]);
      for (const fn of starters) {
        machine.grantStartExecution(fn);
        fn.addEnvironment(workflowArnVariable(name), machine.stateMachineArn);
      }
    }
    for (const fn of this.functions.withPermission('workflow:watch')) {
      for (const machine of Object.values(this.workflows)) machine.grantExecution(fn, 'states:DescribeExecution');
    }
  }

  /** One EventBridge rule and Lambda per scheduled function of functions/schedules.ts (the outbox and start sweepers). */
  private addSchedules(mail: MailSettings) {
    for (const def of SCHEDULES) {
      // A function that reads the SMTP secret has a role of its own (see FunctionFactory.forHandler).
      const mailer = def.sendsMail ? { environment: mail.environment, secrets: mail.secrets, dedicatedRole: true } : {};
      const fn = this.functions.forHandler({ ref: def.handler, profile: def.profile, permissions: def.permissions, timeoutSeconds: def.timeoutSeconds, ...mailer });
      new events.Rule(this, `Schedule-${def.name}`, {
        description: `Runs ${def.handler} every ${def.everyMinutes} minute(s)`,
        schedule: events.Schedule.rate(Duration.minutes(def.everyMinutes)),
        targets: [new targets.LambdaFunction(fn, { retryAttempts: 0 })],
      });
    }
  }

  /** The worker queues; functions whose route declares `queue:<name>` may send to them and get the URL. */
  /** What a function that sends the service's email gets: the sender, and the SMTP URL from its secret. */
  private mailSettings(mail: { from?: string; smtpSecretName?: string }): MailSettings {
    const smtpSecret = mail.smtpSecretName ? secretsmanager.Secret.fromSecretNameV2(this, 'SmtpSecret', mail.smtpSecretName) : undefined;
    return {
      environment: mail.from ? { MAIL_FROM: mail.from } : {},
      secrets: smtpSecret ? [{ variable: 'MAIL_SMTP_URL', secret: smtpSecret, jsonField: 'smtp_url' }] : [],
    };
  }

  private addQueues(mail: MailSettings) {
    for (const def of QUEUES) {
      const mailer = def.sendsMail ? { workerEnvironment: mail.environment, workerSecrets: mail.secrets } : {};
      const worker = new WorkerQueue(this, `Queue-${def.name}`, { def, functions: this.functions, alarms: this.alarms, ...mailer });
      this.queues[def.name] = worker;
      for (const fn of this.functions.withPermission(`queue:${def.name}`)) {
        worker.queue.grantSendMessages(fn);
        fn.addEnvironment(def.urlVariable, worker.queue.queueUrl);
      }
    }
  }

  /**
   * Error-level log lines are what needs an operator (an unexpected 500, a paid checkout that credited nothing, a
   * webhook secret that cannot be read, a dead letter that could not be handled): every function logs one-line JSON
   * to the shared log group, where a metric filter counts them for an alarm.
   */
  private alarmOnErrorLogs() {
    const errors = new logs.MetricFilter(this, 'ErrorLogLines', {
      logGroup: this.functions.logGroup,
      metricNamespace: `PdfService/${this.stackName}`,
      metricName: 'ErrorLogLines',
      filterPattern: logs.FilterPattern.stringValue('$.level', '=', 'error'),
      metricValue: '1',
      defaultValue: 0,
    });
    new cloudwatch.Alarm(this, 'ErrorLogAlarm', {
      alarmDescription: 'A function logged at error level; the shared function log group has the line (level "error")',
      metric: errors.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(new cloudwatchActions.SnsAction(this.alarms));
  }

  /** Writes the plan catalogue into the table on deploy (and again whenever it changes). */
  private seedPlans(priceIds: { starter?: string; business?: string }) {
    const plans = planCatalogue(priceIds);
    const items = plans.map((plan) => ({ PutRequest: { Item: marshall({ ...keys.plan(plan.plan_id), ...plan }, { removeUndefinedValues: true }) } }));
    const version = createHash('sha256').update(JSON.stringify(items)).digest('hex').slice(0, 16);
    // One transaction: every plan is written or the deploy fails and says so (a batch write may leave items
    // unprocessed, and a custom resource call does not retry them).
    const call: cr.AwsSdkCall = {
      service: 'DynamoDB',
      action: 'transactWriteItems',
      parameters: { TransactItems: items.map(({ PutRequest }) => ({ Put: { TableName: this.storage.table.tableName, Item: PutRequest.Item } })) },
      physicalResourceId: cr.PhysicalResourceId.of(`plans-${version}`),
    };
    new cr.AwsCustomResource(this, 'SeedPlans', {
      onCreate: call,
      onUpdate: call,
      // A transaction's writes are authorised as the puts they are.
      policy: cr.AwsCustomResourcePolicy.fromStatements([new iam.PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [this.storage.table.tableArn] })]),
      installLatestAwsSdk: false,
      // Its provider function logs like ours: to the shared log group (with its retention), and may write nowhere else.
      role: new iam.Role(this, 'SeedPlansRole', {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        managedPolicies: [this.functions.logPolicy],
        description: 'Deploy-time custom resource that writes the plan catalogue into the table',
      }),
      logGroup: this.functions.logGroup,
    });
  }
}
