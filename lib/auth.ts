import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

/**
 * Sign-up and password-reset emails sent through SES from a verified identity (the address, or `sesVerifiedDomain`),
 * in `sesRegion` when SES is set up in another region than the stack.
 */
export interface CognitoEmail {
  fromEmail: string;
  fromName?: string;
  replyTo?: string;
  sesRegion?: string;
  sesVerifiedDomain?: string;
}

/** The dashboard's user pool. A confirmed sign-up triggers a pending account (functions/workers/cognito/post-confirmation.ts). */
export class Auth extends Construct {
  readonly userPool: cognito.UserPool;
  readonly client: cognito.UserPoolClient;

  constructor(scope: Construct, id: string, props: { postConfirmation: lambda.IFunction; email?: CognitoEmail }) {
    super(scope, id);
    this.userPool = new cognito.UserPool(this, 'UserPool', {
      // Cognito's own sender allows 50 emails a day per account (sign-up codes, password resets): production needs SES.
      ...(props.email ? { email: cognito.UserPoolEmail.withSES(props.email) } : {}),
      selfSignUpEnabled: true,
      signInAliases: { email: true },
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      passwordPolicy: { minLength: 12, requireLowercase: true, requireUppercase: true, requireDigits: true, requireSymbols: true },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      lambdaTriggers: { postConfirmation: props.postConfirmation },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.client = this.userPool.addClient('DashboardClient', {
      generateSecret: false,
      authFlows: { userSrp: true },
      // The dashboard signs in with SRP; no hosted UI, so no OAuth flows or callback URLs (CDK's defaults enable the
      // implicit grant with a placeholder callback).
      disableOAuth: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
      preventUserExistenceErrors: true,
    });
  }
}
