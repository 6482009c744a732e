import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { TABLE_SCHEMA } from '../../functions/adapters/dynamodb/schema';
import { STORAGE_AREAS } from '../../functions/core/jobs/storage-layout';
import { ROUTES, matchRoute } from '../../functions/routes';
import { PdfServiceStack } from '../../lib/pdf-service-stack';

// Bundling is proven by test/cdk/bundles.test.ts; here only the structure is synthesised.
const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new PdfServiceStack(app, 'Test');
const template = Template.fromStack(stack);
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;

function resourcePath(logicalId: string): string {
  const r = resources[logicalId];
  const parent = r.Properties.ParentId;
  const prefix = parent.Ref ? resourcePath(parent.Ref) : '';
  return `${prefix}/${r.Properties.PathPart}`;
}

/** Every non-OPTIONS method of the synthesised API, with its path rebuilt from the resource tree. */
const methods = Object.entries(resources)
  .filter(([, r]) => r.Type === 'AWS::ApiGateway::Method' && r.Properties.HttpMethod !== 'OPTIONS')
  .map(([id, r]) => ({ id, method: r.Properties.HttpMethod as string, path: r.Properties.ResourceId.Ref ? resourcePath(r.Properties.ResourceId.Ref) : '/', props: r.Properties }));

function functionOf(method: (typeof methods)[number]) {
  const uri = JSON.stringify(method.props.Integration.Uri);
  const fnId = Object.keys(resources).find((id) => resources[id].Type === 'AWS::Lambda::Function' && uri.includes(`"${id}"`));
  return resources[fnId!];
}

function policyStatementsOfRole(roleId: string): any[] {
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
}

function actionsOf(method: (typeof methods)[number]): string[] {
  const roleId = functionOf(method).Properties.Role['Fn::GetAtt'][0];
  return policyStatementsOfRole(roleId).flatMap((s) => [s.Action].flat());
}

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x1');

describe('CDK app', () => {
  it('exposes exactly the route table, as the local gateway does', () => {
    const cdkRoutes = methods.map((m) => `${m.method} ${m.path}`).sort();
    const tableRoutes = ROUTES.map((r) => `${r.method} ${r.path}`).sort();
    expect(cdkRoutes).toEqual(tableRoutes);
    // The local gateway resolves each of these paths to the same row.
    for (const m of methods) expect(matchRoute(m.method, concrete(m.path))?.route.path).toBe(m.path);
    expect(stack.api.routes).toHaveLength(ROUTES.length);
  });

  it('puts the REQUEST authorizer (no caching) on every credentialed route and none on public ones', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', { Type: 'REQUEST', AuthorizerResultTtlInSeconds: 0 });
    for (const m of methods) {
      const route = ROUTES.find((r) => r.method === m.method && r.path === m.path)!;
      expect(`${m.method} ${m.path} ${m.props.AuthorizationType}`).toBe(`${m.method} ${m.path} ${route.access === 'none' ? 'NONE' : 'CUSTOM'}`);
    }
  });

  it('gives render functions the Chromium layer and nobody else', () => {
    template.resourceCountIs('AWS::Lambda::LayerVersion', 1);
    for (const m of methods) {
      const route = ROUTES.find((r) => r.method === m.method && r.path === m.path)!;
      const fn = functionOf(m);
      const hasLayer = (fn.Properties.Layers ?? []).length > 0;
      expect(`${route.id} layer=${hasLayer}`).toBe(`${route.id} layer=${route.handler !== null && route.profile === 'render'}`);
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      if (hasLayer) expect(fn.Properties.Environment.Variables.CHROMIUM_PACK_DIR).toBe('/opt/chromium');
    }
  });

  it('builds the table from the shared key schema', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.timeToLiveAttribute, Enabled: true },
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'gsi1', KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }, { AttributeName: 'gsi1sk', KeyType: 'RANGE' }] })],
    });
  });

  it('expires stored objects by lifecycle rules from the storage layout', () => {
    const bucket = Object.values(resources).find((r) => r.Type === 'AWS::S3::Bucket')!;
    const rules = bucket.Properties.LifecycleConfiguration.Rules;
    for (const area of Object.values(STORAGE_AREAS)) {
      if (area.retentionDays === null) continue;
      expect(rules).toContainEqual(expect.objectContaining({ Prefix: area.prefix, ExpirationInDays: area.retentionDays, Status: 'Enabled' }));
    }
    expect(rules).toContainEqual(expect.objectContaining({ Prefix: 'outputs/', ExpirationInDays: 30 }));
    expect(bucket.Properties.PublicAccessBlockConfiguration).toMatchObject({ BlockPublicAcls: true, RestrictPublicBuckets: true });
  });

  it('has a user pool with a post-confirmation trigger and a public dashboard client', () => {
    template.hasResourceProperties('AWS::Cognito::UserPool', { LambdaConfig: { PostConfirmation: Match.anyValue() }, UsernameAttributes: ['email'] });
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', { GenerateSecret: false });
  });

  it('grants each function only what its route declares', () => {
    const byId = (id: string) => methods.find((m) => ROUTES.find((r) => r.id === id && r.method === m.method && r.path === m.path))!;
    const jobsGet = actionsOf(byId('jobs.get'));
    expect(jobsGet).toEqual(expect.arrayContaining(['dynamodb:GetItem', 's3:GetObject*']));
    expect(jobsGet.filter((a) => /dynamodb:(Put|Update|Delete|BatchWrite)/.test(a) || /s3:(Put|Delete)/.test(a))).toEqual([]);

    const quick = actionsOf(byId('quickjob.create'));
    expect(quick).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 's3:PutObject', 's3:DeleteObject*']));

    const plans = actionsOf(byId('plans.list'));
    expect(plans.some((a) => a.startsWith('s3:'))).toBe(false);

    const unbuilt = actionsOf(byId('pdf.merge'));
    expect(unbuilt).toEqual([]);
  });

  it('lets the authorizer read keys and record their use, nothing more', () => {
    const authorizer = Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Authorizer')!;
    const fnId = JSON.stringify(authorizer.Properties.AuthorizerUri).match(/"(\w+)","Arn"/)![1];
    const actions = policyStatementsOfRole(resources[fnId].Properties.Role['Fn::GetAtt'][0]).flatMap((s) => [s.Action].flat());
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:UpdateItem']));
    expect(actions.filter((a) => /dynamodb:(Put|Delete|BatchWrite)|^s3:/.test(a))).toEqual([]);
  });

  it('answers from the gateway in the error envelope', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'ACCESS_DENIED',
      StatusCode: '401',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('\\$context\\.authorizer\\.error_code') },
    });
    for (const [type, status] of [['MISSING_AUTHENTICATION_TOKEN', '404'], ['REQUEST_TOO_LARGE', '413'], ['THROTTLED', '429'], ['DEFAULT_5XX', undefined]]) {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', { ResponseType: type, ...(status ? { StatusCode: status } : {}) });
    }
  });

  it('throttles the stage and accepts binary bodies', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 })] });
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['*/*'] });
  });

  it('stays well inside the CloudFormation resource limit', () => {
    expect(Object.keys(resources).length).toBeLessThan(400);
  });
});
