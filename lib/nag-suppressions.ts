import { type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { ROUTES, type Permission } from '../functions/routes';
import type { PdfServiceStack } from './pdf-service-stack';
import { OUTPUT_OBJECT_PREFIXES, RENDER_OBJECT_PREFIXES } from './functions';

/**
 * The cdk-nag (AwsSolutions) findings this stack keeps on purpose, each acknowledged on the narrowest construct with
 * the reason. Everything else the pack reports is fixed in the constructs themselves; test/cdk/nag.test.ts runs the
 * pack and fails on any finding not acknowledged here, and on any acknowledgment that no longer matches a finding.
 *
 * CDK's own `Validations.of(...).acknowledge` (what cdk-nag v3 reads) keeps the app free of a cdk-nag dependency; the
 * reasons are recorded in the cloud assembly's construct metadata on every `cdk synth`.
 */
export function acknowledgeNagFindings(stack: PdfServiceStack): void {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id: `AwsSolutions-${id}`, reason });
  const arnOf = (scope: IConstruct) => `<${Stack.of(scope).resolve((scope.node.defaultChild as CfnElement).logicalId)}.Arn>`;

  // --- Lambda ---------------------------------------------------------------------------------------------------
  ack(
    stack.functions,
    'L1',
    'Every function runs on nodejs22.x, a supported runtime and the one the service is built and tested for: bundles target node22 ' +
      '(lib/functions.ts, test/cdk/bundles.test.ts), the Chromium layer is published for it and the README documents it. A newer runtime is ' +
      'a deliberate upgrade of all of these together, not a side effect of a lint.',
  );

  // Wildcards that CDK's grant methods generate for the permissions a route declares (lib/functions.ts `grant`).
  const table = arnOf(stack.storage.table);
  const bucket = arnOf(stack.storage.bucket);
  const objects = `Resource::${bucket}/*`;
  const objectsReason =
    'Object keys are made at run time per account and job (outputs/, uploads/, pdfop/, edits/, … of functions/core/jobs/storage-layout.ts), ' +
    'so CDK grants object access on <bucket>/*; the role reaches this one bucket only.';
  const grantWildcards: Partial<Record<Permission, Record<string, string>>> = {
    'table:read': { [`Resource::${table}/index/*`]: tableIndexReason('read') },
    'table:write': { [`Resource::${table}/index/*`]: tableIndexReason('write') },
    'bucket:read': {
      'Action::s3:GetObject*': 'CDK grantRead for the declared bucket:read permission: s3:GetObject* is GetObject and its version, ACL, attribute and tagging reads.',
      'Action::s3:GetBucket*': 'CDK grantRead for the declared bucket:read permission: s3:GetBucket* reads this bucket\'s settings (location, versioning, …), not objects.',
      'Action::s3:List*': 'CDK grantRead for the declared bucket:read permission: s3:List* lists this bucket\'s keys (with it a missing key reads as 404, not 403). Render roles do not get it (lib/functions.ts).',
      [objects]: objectsReason,
    },
    'bucket:read:outputs': {
      'Action::s3:GetObject*': 'CDK grantRead for the declared bucket:read:outputs permission: s3:GetObject* is GetObject and its version, ACL, attribute and tagging reads.',
      'Action::s3:GetBucket*': 'CDK grantRead for the declared bucket:read:outputs permission: s3:GetBucket* reads this bucket\'s settings (location, versioning, …), not objects.',
      'Action::s3:List*': 'CDK grantRead for the declared bucket:read:outputs permission: s3:List* lists this bucket\'s keys (a missing result reads as 404, not 403); objects are read in the result areas only.',
      ...Object.fromEntries(
        OUTPUT_OBJECT_PREFIXES.map((prefix) => [
          `Resource::${bucket}/${prefix}*`,
          `Stored results are keyed per account and job at run time; the role reads (and signs links to) the result areas ${OUTPUT_OBJECT_PREFIXES.join(', ')} only.`,
        ]),
      ),
    },
    'bucket:write': {
      'Action::s3:Abort*': 'CDK grantPut for the declared bucket:write permission: s3:Abort* is AbortMultipartUpload, so a failed large upload can be cleaned up.',
      [objects]: objectsReason,
    },
    'bucket:upload': {
      'Action::s3:Abort*': 'CDK grantPut for the declared bucket:upload permission: s3:Abort* is AbortMultipartUpload.',
      [`Resource::${bucket}/uploads/*`]: 'Presigned upload URLs are signed for keys made at run time per account (uploads/<account>/…); the role may put objects under uploads/ only.',
    },
    'bucket:delete': {
      'Action::s3:DeleteObject*': 'CDK grantDelete for the declared bucket:delete permission: s3:DeleteObject* is DeleteObject and DeleteObjectVersion/Tagging.',
      [objects]: objectsReason,
    },
    // CDK's grantExecution names a state machine's executions by the machine's name, taken from its ARN.
    'workflow:watch': Object.fromEntries(
      Object.values(stack.workflows).map((machine) => {
        const id = Stack.of(machine).resolve((machine.node.defaultChild as CfnElement).logicalId);
        const executions = `arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"${id}"}]}]}:*`;
        return [`Resource::${executions}`, 'Execution names are the job ids, made at run time; the role may only describe executions of this state machine (the start sweeper\'s watch on bulk and merge/split jobs).'];
      }),
    ),
  };
  for (const [role, permissions] of stack.functions.roleGrants) {
    const confined = stack.functions.confinedRoles.has(role);
    // Render roles read with s3:GetObject alone (no CDK grantRead, so no wildcard actions and no listing), and reach the
    // table but not its index (lib/functions.ts): no <table>/index/* to acknowledge.
    const wildcardsOf = (p: Permission) => {
      if (!confined) return grantWildcards[p];
      if (p === 'bucket:read') return { [objects]: objectsReason };
      return p === 'table:read' || p === 'table:write' ? {} : grantWildcards[p];
    };
    const findings: Record<string, string> = Object.assign({}, ...permissions.map((p) => wildcardsOf(p) ?? {}));
    // Render roles reach the job input and output areas only: the same reason, for each of those prefixes.
    if (confined && findings[objects]) {
      const reason = findings[objects];
      delete findings[objects];
      for (const prefix of RENDER_OBJECT_PREFIXES) {
        findings[`Resource::${bucket}/${prefix}*`] = `${reason} Render functions (untrusted documents in Chromium) reach ${RENDER_OBJECT_PREFIXES.join(' and ')} only.`;
      }
    }
    for (const [finding, reason] of Object.entries(findings)) ack(role, `IAM5[${finding}]`, reason);
  }

  // --- Secrets --------------------------------------------------------------------------------------------------
  const rotationReason =
    'Functions read the value once, at cold start (functions/adapters/secrets), so after an automatic rotation warm instances would keep the old value for hours.';
  ack(
    stack.node.findChild('PaginationSecret'),
    'SMG4',
    `${rotationReason} It only seals list page tokens; changing it (by redeploying with a new value) just invalidates outstanding next_token values.`,
  );
  ack(
    stack.node.findChild('WebhookSecretsKey'),
    'SMG4',
    `${rotationReason} It is the single key that seals the webhook signing secrets stored in the table (functions/core/webhooks/secret-box.ts); ` +
      'a rotation would leave every stored secret undecryptable, so changing it needs a re-sealing migration, not a schedule.',
  );

  // --- Cognito --------------------------------------------------------------------------------------------------
  const pool = stack.auth.userPool;
  ack(pool, 'COG2', 'The dashboard signs in with SRP and has no MFA enrolment (TOTP or SMS set-up); requiring MFA would lock every user out.');
  ack(
    pool,
    'COG8',
    'Not decided here: the Plus feature plan (threat protection) is billed per monthly active user with no free tier, a product and cost ' +
      'decision for the owner. The pool allows SRP sign-in only, hides user existence, and API calls are checked by the REQUEST authorizer.',
  );

  // --- API Gateway ----------------------------------------------------------------------------------------------
  const api = stack.api.restApi;
  ack(
    api,
    'APIG2',
    'Every body, multipart form and query string is validated in the handler by its zod schema (functions/core/validation), which refuses ' +
      'with the spec\'s error envelope and order; an API Gateway request validator would answer first, in its own format.',
  );
  ack(
    api,
    'COG4',
    'The credential is an API key (X-API-Key) or a dashboard ID token (Authorization), checked by one REQUEST authorizer ' +
      '(functions/http/authorizer.ts) that verifies Cognito tokens with aws-jwt-verify; a Cognito user pool authorizer cannot accept API keys.',
  );
  ack(
    api.node.findChild('CloudWatchRole'),
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    'The account-level role (AWS::ApiGateway::Account) API Gateway uses to write access and execution logs; AmazonAPIGatewayPushToCloudWatchLogs ' +
      'is the policy AWS documents for it, and API Gateway names the execution log groups itself.',
  );
  ack(
    api.deploymentStage,
    'APIG3',
    'No WAF web ACL in this stack: the stage is throttled (1000 req/s, burst 2000) and every credentialed route passes the REQUEST authorizer; ' +
      'a web ACL (billed per ACL, rule and request) is an account-level choice that can be associated with the stage without changing it.',
  );
  const publicReasons: Record<string, string> = {
    'subscription.plans': 'Public on purpose (route table access none): the plan catalogue the pricing page shows before sign-up; no account data.',
    'stripe.webhook': 'Public on purpose (route table access none): Stripe cannot hold our credentials; the handler verifies Stripe-Signature against the body and changes nothing otherwise.',
    'openapi.get': 'Public on purpose (route table access none): the OpenAPI document of the public API; no account data.',
  };
  for (const route of ROUTES.filter((r) => r.access === 'none')) {
    const reason = publicReasons[route.id];
    if (!reason) throw new Error(`lib/nag-suppressions.ts: public route ${route.id} needs a reason for AwsSolutions-APIG4`);
    const method = api.methods.find((m) => m.httpMethod === route.method && m.resource.path === route.path);
    if (!method) throw new Error(`lib/nag-suppressions.ts: no API method for public route ${route.id}`);
    ack(method, 'APIG4', reason);
  }

  // --- Step Functions -------------------------------------------------------------------------------------------
  for (const machine of Object.values(stack.workflows)) {
    ack(
      machine.role,
      'IAM5[Resource::*]',
      'The CloudWatch Logs log-delivery actions (logs:CreateLogDelivery, …) and X-Ray writes (xray:PutTraceSegments, …) that CDK grants for the ' +
        'state machine\'s logging and tracing support no resource-level permissions; its only scoped action, lambda:InvokeFunction, names each task function.',
    );
  }
}

function tableIndexReason(kind: 'read' | 'write'): string {
  return (
    `CDK's table grant for the declared table:${kind} permission covers the table's indexes as <table>/index/*; the only indexes are those of ` +
    'the shared key schema (functions/adapters/dynamodb/schema.ts), which the handlers query.'
  );
}
