import { createHash } from 'node:crypto';
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as cr from 'aws-cdk-lib/custom-resources';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Construct } from 'constructs';
import { keys } from '../functions/adapters/dynamodb/schema';
import { planCatalogue } from '../functions/core/billing/plans';
import { Api } from './api';
import { Auth } from './auth';
import { ChromiumLayer } from './chromium-layer';
import { FunctionFactory } from './functions';
import { Storage } from './storage';

export interface PdfServiceStackProps extends StackProps {
  /** API Gateway integration timeout; 29 s unless the account's quota was raised (then 35 gives quick jobs their full 30 s). */
  integrationTimeoutSeconds?: number;
  stripePriceIds?: { starter?: string; business?: string };
}

export class PdfServiceStack extends Stack {
  readonly api: Api;
  readonly storage: Storage;
  readonly auth: Auth;
  readonly functions: FunctionFactory;

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
      ...(props.stripePriceIds?.starter ? { STRIPE_PRICE_STARTER: props.stripePriceIds.starter } : {}),
      ...(props.stripePriceIds?.business ? { STRIPE_PRICE_BUSINESS: props.stripePriceIds.business } : {}),
    };
    this.functions = new FunctionFactory(this, 'Functions', {
      table: this.storage.table,
      bucket: this.storage.bucket,
      chromiumLayer: chromium.layer,
      environment: baseEnvironment,
    });

    const postConfirmation = this.functions.forHandler({ ref: 'workers/cognito/post-confirmation#handler', profile: 'light', permissions: ['table:read', 'table:write'] });
    this.auth = new Auth(this, 'Auth', { postConfirmation });
    const poolEnv = { USER_POOL_ID: this.auth.userPool.userPoolId, USER_POOL_CLIENT_ID: this.auth.client.userPoolClientId };

    const authorizerFunction = this.functions.forHandler({ ref: 'http/authorizer#handler', profile: 'light', permissions: ['table:read'], environment: poolEnv });
    // The authorizer records a key's last use; that one write is all it may do.
    this.storage.table.grant(authorizerFunction, 'dynamodb:UpdateItem');

    this.api = new Api(this, 'Api', {
      functions: this.functions,
      authorizerFunction,
      integrationTimeoutSeconds,
      throttle: { rateLimit: 1000, burstLimit: 2000 },
    });
    for (const fn of this.functions.all) {
      if (fn !== postConfirmation) for (const [k, v] of Object.entries(poolEnv)) fn.addEnvironment(k, v);
    }

    this.seedPlans(props.stripePriceIds ?? {});

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url });
    new CfnOutput(this, 'UserPoolId', { value: this.auth.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: this.auth.client.userPoolClientId });
    new CfnOutput(this, 'TableName', { value: this.storage.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.storage.bucket.bucketName });
  }

  /** Writes the plan catalogue into the table on deploy (and again whenever it changes). */
  private seedPlans(priceIds: { starter?: string; business?: string }) {
    const plans = planCatalogue(priceIds);
    const items = plans.map((plan) => ({ PutRequest: { Item: marshall({ ...keys.plan(plan.plan_id), ...plan }, { removeUndefinedValues: true }) } }));
    const version = createHash('sha256').update(JSON.stringify(items)).digest('hex').slice(0, 16);
    const call: cr.AwsSdkCall = {
      service: 'DynamoDB',
      action: 'batchWriteItem',
      parameters: { RequestItems: { [this.storage.table.tableName]: items } },
      physicalResourceId: cr.PhysicalResourceId.of(`plans-${version}`),
    };
    new cr.AwsCustomResource(this, 'SeedPlans', {
      onCreate: call,
      onUpdate: call,
      policy: cr.AwsCustomResourcePolicy.fromSdkCalls({ resources: [this.storage.table.tableArn] }),
      installLatestAwsSdk: false,
    });
  }
}
