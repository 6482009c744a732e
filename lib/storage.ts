import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../functions/adapters/dynamodb/schema';
import { STORAGE_AREAS } from '../functions/core/jobs/storage-layout';

/** How long S3 server access logs of the bucket are kept. */
const ACCESS_LOG_RETENTION = Duration.days(90);

/**
 * The one DynamoDB table (key schema shared with the local table) and the one bucket (retention from the storage
 * layout), whose S3 server access logs go to a bucket of their own.
 */
export class Storage extends Construct {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  /** Target of the bucket's S3 server access logs (who stored or fetched which object, presigned URLs included). */
  readonly accessLogs: s3.Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const str = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: str(TABLE_SCHEMA.partitionKey),
      sortKey: str(TABLE_SCHEMA.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE_SCHEMA.timeToLiveAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      // Accounts, balances and keys live here: kept when the stack goes, and not deletable by a stray call either.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const gsi of TABLE_SCHEMA.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({ indexName: gsi.indexName, partitionKey: str(gsi.partitionKey), sortKey: str(gsi.sortKey), projectionType: dynamodb.ProjectionType.ALL });
    }

    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // Presigned PUTs from the dashboard (bulk ZIPs, large PDFs, lists) come from browsers.
      cors: [{ allowedMethods: [s3.HttpMethods.PUT, s3.HttpMethods.GET], allowedOrigins: ['*'], allowedHeaders: ['Content-Type', 'Content-Length'], maxAge: 600 }],
      lifecycleRules: [
        ...Object.entries(STORAGE_AREAS)
          .filter(([, area]) => area.retentionDays !== null)
          .map(([name, area]) => ({ id: `expire-${name}`, prefix: area.prefix, expiration: Duration.days(area.retentionDays!) })),
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    // Log delivery is granted by a bucket policy (not the LogDeliveryWrite ACL), limited to this bucket's logs. S3
    // log delivery supports only SSE-S3 default encryption on the target. Created after the bucket so that the
    // data bucket stays the first bucket of the template.
    const logPrefix = 'bucket/';
    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: ACCESS_LOG_RETENTION }],
    });
    this.accessLogs.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('logging.s3.amazonaws.com')],
        actions: ['s3:PutObject'],
        resources: [this.accessLogs.arnForObjects(`${logPrefix}*`)],
        conditions: { ArnLike: { 'aws:SourceArn': this.bucket.bucketArn }, StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    // What `serverAccessLogsBucket` would set, without its ACL-based grant (which CDK uses unless a feature flag is set).
    (this.bucket.node.defaultChild as s3.CfnBucket).loggingConfiguration = { destinationBucketName: this.accessLogs.bucketName, logFilePrefix: logPrefix };
  }
}
