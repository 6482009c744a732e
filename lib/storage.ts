import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../functions/adapters/dynamodb/schema';
import { STORAGE_AREAS } from '../functions/core/jobs/storage-layout';

/** The one DynamoDB table (key schema shared with the local table) and the one bucket (retention from the storage layout). */
export class Storage extends Construct {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;

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
  }
}
