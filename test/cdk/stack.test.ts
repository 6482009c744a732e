import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { TABLE_SCHEMA } from '../../functions/adapters/dynamodb/schema';
import { STORAGE_AREAS } from '../../functions/core/jobs/storage-layout';
import { QUEUES } from '../../functions/queues';
import { FUNCTION_PROFILES, functionTimeoutSeconds } from '../../functions/profiles';
import { SCHEDULES } from '../../functions/schedules';
import { type Permission, ROUTES, matchRoute } from '../../functions/routes';
import { WORKFLOWS, workflowArnVariable } from '../../functions/workflows';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PdfServiceStack } from '../../lib/pdf-service-stack';
import { tempDir } from '../support/temp';

// Bundling is proven by test/cdk/bundles.test.ts; here only the structure is synthesised.
const app = new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } });
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

  it('calls the authorizer whichever header carries the credential: no identity source', () => {
    // With an identity source, API Gateway answers 401 itself when that header is missing, without calling the
    // authorizer: a dashboard request (Authorization only) or an API-key request (X-API-Key only) would be refused.
    const authorizer = Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Authorizer')!;
    expect(authorizer.Properties.IdentitySource ?? '').toBe('');
  });

  it('answers browser preflights itself, converting the (binary, with */*) request to text so its template applies', () => {
    const preflights = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties.HttpMethod === 'OPTIONS');
    expect(preflights).toHaveLength(new Set(ROUTES.map((r) => r.path)).size);
    for (const p of preflights) {
      expect(p.Properties).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'MOCK', ContentHandling: 'CONVERT_TO_TEXT' } });
      const headers = p.Properties.Integration.IntegrationResponses[0].ResponseParameters;
      expect(headers['method.response.header.Access-Control-Allow-Headers']).toBe("'Content-Type,Authorization,X-API-Key'");
      expect(headers['method.response.header.Access-Control-Allow-Origin']).toBe("'*'");
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
      // @sparticuz/chromium's binaries, and so the layer, are x86_64 only.
      expect(fn.Properties.Architectures).toEqual(['x86_64']);
      // The layer's fonts: Lambda has no system fonts (functions/adapters/chromium/fonts.ts).
      if (hasLayer) expect(fn.Properties.Environment.Variables).toMatchObject({ CHROMIUM_PACK_DIR: '/opt/chromium', CHROMIUM_FONT_DIR: '/opt/fonts' });
    }
  });

  it('sizes every route function from functions/profiles.ts (memory, timeout, /tmp for Chromium)', () => {
    for (const m of methods) {
      const route = ROUTES.find((r) => r.method === m.method && r.path === m.path)!;
      const profile = route.handler ? route.profile : 'light';
      const { MemorySize, Timeout, EphemeralStorage } = functionOf(m).Properties;
      // Chromium unpacks itself into /tmp (~250 MB) beside the documents it prints.
      const tmp = profile === 'render' ? 1024 : undefined;
      expect({ route: route.id, MemorySize, Timeout, tmp: EphemeralStorage?.Size }).toEqual({
        route: route.id,
        MemorySize: FUNCTION_PROFILES[profile].memorySize,
        // Routes not built yet share one small function answering 501 at once (made for the first of them).
        Timeout: route.handler ? functionTimeoutSeconds(profile, route.timeoutSeconds) : Timeout,
        tmp,
      });
    }
  });

  it('caps every function\'s memory at maxFunctionMemoryMb (a new AWS account\'s Lambda memory quota), leaving smaller ones as they are', () => {
    const capped = new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } });
    // CDK's own helper functions (custom resources) set no memory: Lambda's default.
    const memory = (t: Template) => Object.values(t.findResources('AWS::Lambda::Function')).map((r) => (r.Properties.MemorySize as number | undefined) ?? 128).sort((a, b) => a - b);
    const uncapped = memory(template);
    const cappedMemory = memory(Template.fromStack(new PdfServiceStack(capped, 'Capped', { maxFunctionMemoryMb: 3008 })));
    // The background merge/split workers ask for more than the cap; without them this test would check nothing.
    expect(uncapped.some((mb) => mb > 3008)).toBe(true);
    expect(cappedMemory).toEqual(uncapped.map((mb) => Math.min(mb, 3008)));
    for (const bad of [128, 3008.5, 20000, Number.NaN]) {
      expect(() => new PdfServiceStack(new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } }), 'Bad', { maxFunctionMemoryMb: bad })).toThrow(/maxFunctionMemoryMb must be a whole number of MB from 256 to 10240/);
    }
  });

  it('keeps what holds customer data, and the key that opens the webhook secrets sealed in it, when the stack goes', () => {
    const raw = template.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string; Properties: any }>;
    for (const type of ['AWS::DynamoDB::Table', 'AWS::S3::Bucket', 'AWS::Cognito::UserPool']) {
      const resources = Object.values(raw).filter((r) => r.Type === type);
      // Without any, the loop below would check nothing.
      expect(`${type} ${resources.length > 0}`).toBe(`${type} true`);
      for (const r of resources) expect(`${type} ${r.DeletionPolicy}`).toBe(`${type} Retain`);
    }
    const sealing = Object.values(raw).find((r) => r.Type === 'AWS::SecretsManager::Secret' && r.Properties.Description?.includes('webhook signing secrets'))!;
    expect(sealing.DeletionPolicy).toBe('Retain');
  });

  it('builds the table from the shared key schema', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.timeToLiveAttribute, Enabled: true },
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      // Encrypted under the AWS-managed KMS key (SSEEnabled alone means aws/dynamodb; its use shows in CloudTrail), not an AWS-owned one.
      SSESpecification: { SSEEnabled: true },
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
    // Expiration never removes the parts of a multipart upload left unfinished (a worker that died mid-upload): this rule does.
    expect(rules).toContainEqual(expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }));
    expect(rules.find((r: any) => r.AbortIncompleteMultipartUpload).Prefix).toBeUndefined();
    expect(bucket.Properties.PublicAccessBlockConfiguration).toMatchObject({ BlockPublicAcls: true, RestrictPublicBuckets: true });
  });

  it("lets S3 log delivery write the bucket's access logs, and only this bucket's, under their prefix", () => {
    const [bucketId, bucket] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::S3::Bucket')!;
    const logsId = bucket.Properties.LoggingConfiguration.DestinationBucketName.Ref;
    const policy = Object.values(resources).find((r) => r.Type === 'AWS::S3::BucketPolicy' && r.Properties.Bucket.Ref === logsId)!;
    const delivery = policy.Properties.PolicyDocument.Statement.filter((st: any) => st.Principal?.Service === 'logging.s3.amazonaws.com');
    expect(delivery).toHaveLength(1);
    expect(delivery[0]).toMatchObject({ Effect: 'Allow', Action: 's3:PutObject' });
    expect(JSON.stringify(delivery[0].Resource)).toMatch(/\/bucket\/\*"\]\]\}$/);
    // Without the source bucket, any bucket of the account could deliver its logs here.
    expect(delivery[0].Condition).toEqual({ ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [bucketId, 'Arn'] } }, StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } });
    expect(bucket.Properties.LoggingConfiguration.LogFilePrefix).toBe('bucket/');
  });

  it('has a user pool with a post-confirmation trigger and a public dashboard client', () => {
    template.hasResourceProperties('AWS::Cognito::UserPool', { LambdaConfig: { PostConfirmation: Match.anyValue() }, UsernameAttributes: ['email'] });
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', { GenerateSecret: false, ExplicitAuthFlows: Match.arrayWith(['ALLOW_USER_SRP_AUTH']) });
    // No OAuth: no implicit grant, no placeholder callback URL.
    const client = Object.values(resources).find((r) => r.Type === 'AWS::Cognito::UserPoolClient')!;
    expect(client.Properties.AllowedOAuthFlows).toBeUndefined();
    expect(client.Properties.CallbackURLs).toBeUndefined();
  });

  it('lets the dashboard sign in by SRP only, without telling whether an address has an account, with 12-character passwords', () => {
    const client = Object.values(resources).find((r) => r.Type === 'AWS::Cognito::UserPoolClient')!;
    // No USER_PASSWORD_AUTH (the password itself sent to Cognito) or admin flows: SRP, and refreshing its tokens.
    expect([...client.Properties.ExplicitAuthFlows].sort()).toEqual(['ALLOW_REFRESH_TOKEN_AUTH', 'ALLOW_USER_SRP_AUTH']);
    expect(client.Properties.PreventUserExistenceErrors).toBe('ENABLED');
    const pool = Object.values(resources).find((r) => r.Type === 'AWS::Cognito::UserPool')!;
    expect(pool.Properties.Policies.PasswordPolicy).toMatchObject({ MinimumLength: 12, RequireLowercase: true, RequireUppercase: true, RequireNumbers: true, RequireSymbols: true });
  });

  it("sends Cognito's emails through SES when a sender is configured, else with Cognito's own (50 a day)", () => {
    const pool = () => Object.values(resources).find((r) => r.Type === 'AWS::Cognito::UserPool')!;
    expect(pool().Properties.EmailConfiguration?.EmailSendingAccount ?? 'COGNITO_DEFAULT').toBe('COGNITO_DEFAULT');
    const sesApp = new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } });
    const withSes = new PdfServiceStack(sesApp, 'SesTest', {
      env: { account: '123456789012', region: 'eu-central-1' },
      cognitoEmail: { fromEmail: 'no-reply@example.com', fromName: 'PDF service', sesRegion: 'eu-west-1' },
    });
    const configured = Object.values(Template.fromStack(withSes).toJSON().Resources as typeof resources).find((r) => r.Type === 'AWS::Cognito::UserPool')!;
    expect(configured.Properties.EmailConfiguration).toMatchObject({ EmailSendingAccount: 'DEVELOPER', From: 'PDF service <no-reply@example.com>' });
    // The SES identity in the SES region (an ARN joined from the partition).
    expect(JSON.stringify(configured.Properties.EmailConfiguration.SourceArn)).toMatch(/ses:eu-west-1:123456789012:identity\/no-reply@example\.com/);
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

    const unbuilt = actionsOf(byId('pdf.edit'));
    expect(unbuilt).toEqual([]);

    // Merge/split store outputs and charge; only the background-job route may start the workflow.
    expect(actionsOf(byId('pdf.merge'))).toEqual(expect.arrayContaining(['dynamodb:PutItem', 's3:PutObject', 's3:DeleteObject*']));
    expect(actionsOf(byId('pdf.merge'))).not.toContain('states:StartExecution');
    expect(actionsOf(byId('pdf.jobs'))).toContain('states:StartExecution');
    // Each submit route starts its own workflow only (its ARN, and the right to start that machine); the sweeper both.
    const machineIds = Object.fromEntries(
      Object.entries(resources)
        .filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine')
        .map(([id, r]) => [JSON.stringify(r.Properties.DefinitionString ?? r.Properties.Definition).includes('RenderFile') ? 'bulk' : 'pdfop', id]),
    );
    const starts = (id: string) =>
      Object.keys(machineIds).filter((name) =>
        policyStatementsOfRole(functionOf(methods.find((m) => m.method === 'POST' && m.path === id)!).Properties.Role['Fn::GetAtt'][0]).some(
          (st) => [st.Action].flat().includes('states:StartExecution') && JSON.stringify(st.Resource).includes(`"${machineIds[name]}"`),
        ),
      );
    expect(starts('/pdf/jobs')).toEqual(['pdfop']);
    for (const p of ['/pdf/jobs', '/bulkjob']) {
      expect([...new Set(actionsOf(methods.find((m) => m.method === 'POST' && m.path === p)!).filter((a) => a.startsWith('states:')))]).toEqual(['states:StartExecution']);
    }
    expect(starts('/bulkjob')).toEqual(['bulk']);
    expect(Object.keys(functionOf(methods.find((m) => m.method === 'POST' && m.path === '/pdf/jobs')!).Properties.Environment.Variables).filter((v) => v.startsWith('WORKFLOW_ARN_'))).toEqual([workflowArnVariable('pdfop')]);
    expect(actionsOf(byId('pdf.inspect')).filter((a) => /dynamodb:(Put|Update|Delete)|s3:(Put|Delete)/.test(a))).toEqual([]);

    // A presigned PUT can do what its signer may: the upload-URL routes may put under uploads/ and nothing else.
    for (const id of ['bulkjob.uploadUrl', 'pdf.uploadUrl']) {
      const s3 = policyStatementsOfRole(functionOf(byId(id)).Properties.Role['Fn::GetAtt'][0]).filter((st) => [st.Action].flat().some((a: string) => a.startsWith('s3:')));
      expect(s3.flatMap((st) => [st.Action].flat()).filter((a: string) => !/^s3:(PutObject|Abort)/.test(a))).toEqual([]);
      for (const st of s3) expect(JSON.stringify(st.Resource)).toMatch(/\/uploads\/\*"\]\]\}$/);
    }
  });

  it('gives every route function table, bucket, queue and workflow actions exactly when its route declares them', () => {
    const declared = (perms: Permission[], ...wanted: string[]) => perms.some((p) => wanted.some((w) => (w.endsWith(':') ? p.startsWith(w) : p === w)));
    for (const m of methods) {
      const route = ROUTES.find((r) => r.method === m.method && r.path === m.path)!;
      const perms = route.handler ? route.permissions : [];
      const actions = actionsOf(m);
      const has = (re: RegExp) => actions.some((a) => re.test(a));
      const got = [has(/^dynamodb:(GetItem|Query)$/), has(/^dynamodb:(Put|Update|Delete|BatchWrite)/), has(/^s3:(GetObject|List)/), has(/^s3:Put/), has(/^s3:Delete/), has(/^sqs:/), has(/^states:/)];
      const wanted = [
        declared(perms, 'table:read'),
        declared(perms, 'table:write'),
        declared(perms, 'bucket:read', 'bucket:read:outputs'),
        declared(perms, 'bucket:write', 'bucket:upload'),
        declared(perms, 'bucket:delete'),
        declared(perms, 'queue:'),
        declared(perms, 'workflow:'),
      ];
      expect(`${route.id} ${got.join(' ')}`).toBe(`${route.id} ${wanted.join(' ')}`);
    }
  });

  it('confines functions that print untrusted documents: job input and output objects only, no credential partitions', () => {
    const renderFns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function' && JSON.stringify(r.Properties.Layers ?? []).includes('Chromium'));
    expect(renderFns.length).toBeGreaterThanOrEqual(4);
    for (const fn of renderFns) {
      const role = fn.Properties.Role['Fn::GetAtt'][0];
      const statements = policyStatementsOfRole(role);
      // Object access under inputs/ and outputs/ only.
      const objectResources = statements
        .filter((st) => st.Effect === 'Allow' && [st.Action].flat().some((a: string) => /^s3:(GetObject|PutObject|DeleteObject)/.test(a)))
        .flatMap((st) => [st.Resource].flat())
        .map((r) => JSON.stringify(r))
        .filter((r) => r.includes('/'));
      expect(objectResources.length).toBeGreaterThan(0);
      for (const r of objectResources) expect(r).toMatch(/\/(inputs|outputs)\/\*"\]\]\}$/);
      // Reads by key only: no listing (which would name other accounts' jobs) and no bucket settings.
      const s3Actions = statements.filter((st) => st.Effect === 'Allow').flatMap((st) => [st.Action].flat()).filter((a: string) => a.startsWith('s3:'));
      expect(s3Actions).toContain('s3:GetObject');
      expect(s3Actions.filter((a: string) => /^s3:(List|GetBucket)/.test(a))).toEqual([]);
      // API keys, webhooks and Stripe mappings are denied, whatever else the role may do with the table.
      const deny = statements.find((st) => st.Effect === 'Deny');
      expect(deny.Condition).toEqual({
        'ForAnyValue:StringLike': {
          'dynamodb:LeadingKeys': [
            'APIKEY#*', 'APIKEYID#*', 'WEBHOOK#*', 'STRIPE_EVENT#*', 'STRIPE_CUSTOMER#*', 'STRIPE_PAYMENT#*',
          ],
        },
      });
      // The index, which lists the same items (gsi1 projects every attribute), is out of reach altogether (next test).
      expect([deny.Action].flat()).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']));
      // No other function shares the role (it would be confined too, or widen it).
      const sharers = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Role['Fn::GetAtt'][0] === role);
      expect(sharers.every((r) => JSON.stringify(r.Properties.Layers ?? []).includes('Chromium'))).toBe(true);
    }
  });

  it('keeps render functions off the table index, whose partitions would name every account\'s jobs and their output keys', () => {
    // gsi1 lists jobs per account (ACCOUNT#<id>#JOBS) and, in a few sharded partitions (OUTBOX#n, STARTS#n, WATCHES#n),
    // pending events and job starts of all accounts: a Query there would undo "no listing". Rendering queries none.
    const renderFns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function' && JSON.stringify(r.Properties.Layers ?? []).includes('Chromium'));
    expect(renderFns.length).toBeGreaterThanOrEqual(4);
    for (const fn of renderFns) {
      const statements = policyStatementsOfRole(fn.Properties.Role['Fn::GetAtt'][0]);
      const tableAllows = statements.filter((st) => st.Effect === 'Allow' && [st.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
      expect(tableAllows.flatMap((st) => [st.Action].flat())).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem']));
      for (const st of tableAllows) expect(JSON.stringify(st.Resource)).not.toContain('/index/');
    }
    // Functions that list (GET /jobs) still query the index.
    const list = methods.find((m) => m.method === 'GET' && m.path === '/jobs')!;
    expect(JSON.stringify(policyStatementsOfRole(functionOf(list).Properties.Role['Fn::GetAtt'][0]))).toContain('/index/*');
  });

  it('lets render functions read the plan catalogue but not rewrite it (every account\'s prices and quotas)', () => {
    const renderFns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function' && JSON.stringify(r.Properties.Layers ?? []).includes('Chromium'));
    for (const fn of renderFns) {
      const statements = policyStatementsOfRole(fn.Properties.Role['Fn::GetAtt'][0]);
      const planWrites = statements.filter((st) => st.Effect === 'Deny' && JSON.stringify(st.Condition ?? {}).includes('"PLAN"'));
      expect(planWrites).toHaveLength(1);
      expect([planWrites[0].Action].flat().sort()).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
      expect(planWrites[0].Condition).toEqual({ 'ForAnyValue:StringEquals': { 'dynamodb:LeadingKeys': ['PLAN'] } });
    }
  });

  it('grants no DynamoDB operation the code does not use (no Scan, no stream reads)', () => {
    // Transactions are authorised item by item; none has a ConditionCheck item, so dynamodb:ConditionCheckItem is not used.
    const used = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
    const granted = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => r.Properties.PolicyDocument.Statement.flatMap((st: { Action: string | string[] }) => [st.Action].flat()))
      .filter((a: string) => a.startsWith('dynamodb:'));
    expect(granted.length).toBeGreaterThan(0);
    expect([...new Set(granted)].filter((a) => !used.includes(a as string))).toEqual([]);
    // A ConditionCheck item would need dynamodb:ConditionCheckItem: only the local table (no IAM) would accept it.
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
    const checks = sources(path.join(__dirname, '../../functions')).filter((file) => /\bConditionCheck\s*:/.test(readFileSync(file, 'utf8')));
    expect(checks).toEqual([]);
  });

  it('lets the authorizer read keys and record their use, nothing more', () => {
    const authorizer = Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Authorizer')!;
    const fnId = JSON.stringify(authorizer.Properties.AuthorizerUri).match(/"(\w+)","Arn"/)![1];
    const actions = policyStatementsOfRole(resources[fnId].Properties.Role['Fn::GetAtt'][0]).flatMap((s) => [s.Action].flat());
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:UpdateItem']));
    expect(actions.filter((a) => /dynamodb:(Put|Delete|BatchWrite)|^s3:/.test(a))).toEqual([]);
    // Its one read and one write reach API key items only, on the table (not through the index): nothing else it can read.
    const tableStatements = policyStatementsOfRole(resources[fnId].Properties.Role['Fn::GetAtt'][0]).filter((st) => [st.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
    expect(tableStatements).toHaveLength(1);
    expect([tableStatements[0].Action].flat().sort()).toEqual(['dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(JSON.stringify(tableStatements[0].Resource)).not.toContain('/index/');
    expect(tableStatements[0].Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*'] } });
    // Its write stays on its own role: read-only routes (one of them public) share no role with it.
    const role = resources[fnId].Properties.Role['Fn::GetAtt'][0];
    const sharers = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Role['Fn::GetAtt'][0] === role);
    expect(sharers).toHaveLength(1);
    const publicRead = functionOf(methods.find((m) => m.method === 'GET' && m.path === '/accounts/me/subscription/plans')!);
    expect(policyStatementsOfRole(publicRead.Properties.Role['Fn::GetAtt'][0]).flatMap((st) => [st.Action].flat()).filter((a) => /dynamodb:(Put|Update|Delete)/.test(a))).toEqual([]);
  });

  it('answers from the gateway in the error envelope', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'ACCESS_DENIED',
      StatusCode: '401',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"details":\\{"reason":"\\$context\\.authorizer\\.error_reason"\\}') },
      // A static header value is quoted in the mapping.
      ResponseParameters: Match.objectLike({ 'gatewayresponse.header.WWW-Authenticate': `'Bearer realm="api"'` }),
    });
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED',
      ResponseParameters: Match.objectLike({ 'gatewayresponse.header.WWW-Authenticate': `'Bearer realm="api"'` }),
    });
    for (const [type, status] of [['MISSING_AUTHENTICATION_TOKEN', '404'], ['REQUEST_TOO_LARGE', '413'], ['THROTTLED', '429'], ['DEFAULT_5XX', undefined]]) {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', { ResponseType: type, ...(status ? { StatusCode: status } : {}) });
    }
  });

  it('throttles the stage and accepts binary bodies', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 })] });
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['*/*'] });
  });

  it('logs errors only from the stage, never bodies or headers (documents, keys, tokens), and one access line per request', () => {
    const stage = Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Stage')!;
    expect(stage.Properties.MethodSettings).toEqual([expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false })]);
    expect(JSON.parse(stage.Properties.AccessLogSetting.Format)).toMatchObject({ requestId: '$context.requestId', status: '$context.status' });
  });

  it('builds each workflow state machine from its ASL file, with one Lambda per Task state it alone may invoke', () => {
    const machines = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(WORKFLOWS.length);
    for (const wf of WORKFLOWS) {
      const asl = JSON.parse(readFileSync(path.join(__dirname, '../..', wf.definition), 'utf8'));
      const [machineId, machine] = machines.find(([, m]) => JSON.parse(m.Properties.DefinitionString).Comment === asl.Comment)!;
      // The very file the local runner executes, placeholders and all.
      expect(JSON.parse(machine.Properties.DefinitionString)).toEqual(asl);
      expect(Object.keys(machine.Properties.DefinitionSubstitutions).sort()).toEqual(Object.keys(wf.tasks).sort());
      const invokable = policyStatementsOfRole(machine.Properties.RoleArn['Fn::GetAtt'][0]).filter((st) => [st.Action].flat().includes('lambda:InvokeFunction'));
      for (const [state, task] of Object.entries(wf.tasks)) {
        const fnId = machine.Properties.DefinitionSubstitutions[state]['Fn::GetAtt'][0];
        const fn = resources[fnId];
        expect(`${state} ${fn.Type} ${fn.Properties.Handler}`).toBe(`${state} AWS::Lambda::Function index.${task.ref.split('#')[1]}`);
        // The deadline the local runner gives the task too (functions/profiles.ts).
        expect(fn.Properties.Timeout).toBe(functionTimeoutSeconds(task.profile, task.timeoutSeconds));
        expect(JSON.stringify(invokable)).toContain(fnId);
      }
      // Exactly those functions, unqualified (no `<arn>:*`: every version and alias), and no other invoke right.
      const taskArns = Object.values<any>(machine.Properties.DefinitionSubstitutions).map((arn) => JSON.stringify(arn)).sort();
      expect(invokable.flatMap((st) => [st.Resource].flat()).map((r: unknown) => JSON.stringify(r)).sort()).toEqual(taskArns);
      expect(policyStatementsOfRole(machine.Properties.RoleArn['Fn::GetAtt'][0]).flatMap((st) => [st.Action].flat()).filter((a: string) => a.startsWith('lambda:'))).toEqual(['lambda:InvokeFunction']);
      // Every Task state has a Retry and (but the failure recorder) a Catch, so a failing handler still ends the job.
      for (const [name, state] of Object.entries<any>(asl.States)) {
        if (state.Type !== 'Task') continue;
        expect(`${name} retry=${Array.isArray(state.Retry)}`).toBe(`${name} retry=true`);
        if (name !== 'RecordFailure') expect(state.Catch?.[0]?.Next).toBe('RecordFailure');
        // A throttled task (no concurrency left) waits longer than a failing one before its job is given up, with jitter
        // so that the many RenderFile iterations of a Map do not retry in step.
        if (name !== 'RecordFailure') {
          expect(state.Retry[0]).toMatchObject({ ErrorEquals: ['Lambda.TooManyRequestsException'], JitterStrategy: 'FULL', MaxDelaySeconds: 60 });
          expect(state.Retry[0].MaxAttempts).toBeGreaterThanOrEqual(6);
        }
      }
      // Its log group has the name prefix AWS asks for (no entry in the account's size-capped logs resource policy).
      const logGroupId = machine.Properties.LoggingConfiguration.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn['Fn::GetAtt'][0];
      const logGroup = resources[logGroupId] as any;
      expect(JSON.stringify(logGroup.Properties.LogGroupName)).toMatch(/^\{"Fn::Join":\["",\["\/aws\/vendedlogs\/states\//);
      // Kept when the stack goes (and when a failed first deploy rolls back), so its name must not come back: a stack
      // created again under the same name would fail on "already exists". The stack's id (new on every creation) is in it.
      expect(logGroup.DeletionPolicy).toBe('Retain');
      expect(JSON.stringify(logGroup.Properties.LogGroupName)).toContain('{"Ref":"AWS::StackId"}');
      // An execution that ends without reaching RecordFailure (timed out as a whole, stopped) still ends its job:
      // its status change goes to the same recorder function.
      const recorderId = machine.Properties.DefinitionSubstitutions.RecordFailure['Fn::GetAtt'][0];
      const endings = Object.values(resources).filter((r) => r.Type === 'AWS::Events::Rule' && JSON.stringify(r.Properties.EventPattern ?? {}).includes(machineId));
      expect(endings).toHaveLength(1);
      expect(endings[0].Properties.EventPattern).toEqual({
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [{ Ref: machineId }] },
      });
      expect(endings[0].Properties.Targets.map((t: any) => t.Arn['Fn::GetAtt'][0])).toEqual([recorderId]);
      // The route that starts it gets its ARN.
      const starter = functionOf(methods.find((m) => m.method === 'POST' && m.path === (wf.name === 'bulk' ? '/bulkjob' : '/pdf/jobs'))!);
      expect(JSON.stringify(starter.Properties.Environment.Variables[workflowArnVariable(wf.name)])).toContain(machineId);
    }
    const worker = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler === 'index.processJob')!;
    expect(worker.Properties).toMatchObject({ Timeout: 900, MemorySize: 4096 });
  });

  it('stays well inside the CloudFormation resource limit', () => {
    expect(Object.keys(resources).length).toBeLessThan(400);
  });
});

describe('CDK app: Stripe configuration and secrets', () => {
  const stripeApp = new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } });
  const withStripe = new PdfServiceStack(stripeApp, 'StripeTest', {
    stripeSecretName: 'pdf-service/stripe',
    stripePriceIds: { starter: 'price_live_starter', business: 'price_live_business' },
    stripePackPriceIds: { 10: 'price_live_pack10', 1500: 'price_live_pack1500' },
    stripePortalReturnUrl: 'https://dashboard.example.com/billing',
    mail: { from: 'PDF service <no-reply@example.com>', smtpSecretName: 'pdf-service/smtp' },
  });
  const res = Template.fromStack(withStripe).toJSON().Resources as Record<string, { Type: string; Properties: any }>;
  const lambdas = Object.values(res).filter((r) => r.Type === 'AWS::Lambda::Function');
  /** What the function's role may do with Secrets Manager, as "action resource" lines. */
  function secretGrants(fn: { Properties: any }): string[] {
    const roleId = fn.Properties.Role['Fn::GetAtt'][0];
    return Object.values(res)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
      .flatMap((r) => r.Properties.PolicyDocument.Statement)
      .flatMap((st: any) => [st.Action].flat().filter((a: string) => a.startsWith('secretsmanager:')).map((a: string) => `${a} ${JSON.stringify(st.Resource)}`));
  }
  /** The Lambda function an API method (named by its route id) integrates. */
  function functionOfRoute(routeId: string) {
    const method = Object.values(res).find((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties.OperationName === routeId)!;
    const uri = JSON.stringify(method.Properties.Integration.Uri);
    return Object.entries(res).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && uri.includes(`"${id}"`))![1];
  }

  it('puts no secret value in any function configuration: only where to read it, at cold start', () => {
    for (const fn of lambdas) {
      const env = JSON.stringify(fn.Properties.Environment?.Variables ?? {});
      expect(env).not.toMatch(/resolve:secretsmanager|SecretString/);
      for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'PAGINATION_SECRET', 'WEBHOOK_SECRETS_KEY', 'MAIL_SMTP_URL']) {
        expect(fn.Properties.Environment?.Variables?.[name]).toBeUndefined();
      }
      // A function may read secrets exactly when it is told of one.
      const told = Object.keys(fn.Properties.Environment?.Variables ?? {}).some((k) => k.endsWith('_SECRET_ID'));
      expect(`${fn.Properties.Handler} ${secretGrants(fn).length > 0}`).toBe(`${fn.Properties.Handler} ${told}`);
    }
  });

  it('gives the Stripe secrets only to functions that call Stripe, and the service email secret only to the functions that send it', () => {
    for (const route of ROUTES.filter((r) => r.handler)) {
      const fn = functionOfRoute(route.id);
      const env = fn.Properties.Environment.Variables;
      const stripe = route.permissions.includes('stripe');
      const signatures = route.id === 'stripe.webhook';
      expect(`${route.id} ${'STRIPE_SECRET_KEY_SECRET_ID' in env} ${'STRIPE_WEBHOOK_SECRET_SECRET_ID' in env}`).toBe(`${route.id} ${stripe} ${signatures}`);
      expect(env.MAIL_SMTP_URL_SECRET_ID).toBeUndefined();
      if (stripe) {
        expect(env).toMatchObject({ STRIPE_SECRET_KEY_SECRET_ID: 'pdf-service/stripe', STRIPE_SECRET_KEY_SECRET_FIELD: 'secret_key' });
        expect(env).toMatchObject({ STRIPE_PRICE_PACK_10: 'price_live_pack10', STRIPE_PRICE_PACK_1500: 'price_live_pack1500', STRIPE_PORTAL_RETURN_URL: 'https://dashboard.example.com/billing' });
        // Read access to that secret alone (an imported name matches its ARN with any suffix).
        expect(secretGrants(fn).join('\n')).toMatch(/secretsmanager:GetSecretValue .*secret:pdf-service\/stripe-\?{6}/);
        expect(secretGrants(fn).join('\n')).not.toMatch(/smtp|PaginationSecret|WebhookSecretsKey/);
      }
      if (signatures) expect(env).toMatchObject({ STRIPE_WEBHOOK_SECRET_SECRET_ID: 'pdf-service/stripe', STRIPE_WEBHOOK_SECRET_SECRET_FIELD: 'webhook_secret' });
      // The list page-token key is generated at deploy, never a literal in the template; only list routes learn where it is.
      if (route.permissions.includes('pagination')) expect(JSON.stringify(env.PAGINATION_SECRET_SECRET_ID)).toMatch(/PaginationSecret/);
      else expect(env.PAGINATION_SECRET_SECRET_ID).toBeUndefined();
    }
    const mailers = lambdas.filter((fn) => fn.Properties.Environment?.Variables?.MAIL_SMTP_URL_SECRET_ID);
    expect(mailers.length).toBeGreaterThan(0);
    for (const fn of mailers) {
      expect(fn.Properties.Environment.Variables).toMatchObject({ MAIL_SMTP_URL_SECRET_ID: 'pdf-service/smtp', MAIL_SMTP_URL_SECRET_FIELD: 'smtp_url', MAIL_FROM: 'PDF service <no-reply@example.com>' });
      expect(secretGrants(fn).join('\n')).toMatch(/secret:pdf-service\/smtp-\?{6}/);
    }
    // The workers that send email (and their dead-letter workers, which send the failure email of a job whose workers
    // all died, and the start sweeper, which sends it for a long job whose worker was killed), and only they, get the
    // SMTP secret, each on a role of its own.
    const mailing = [...QUEUES.filter((q) => q.sendsMail).flatMap((q) => [q.handler, q.deadLetterHandler]), ...SCHEDULES.filter((d) => d.sendsMail).map((d) => d.handler)];
    expect(mailing).toContain('workers/jobs/start-sweep#handler');
    expect(mailers.map((fn) => fn.Properties.Handler).sort()).toEqual(
      mailing
        .filter((h): h is string => !!h)
        .map((h) => `index.${h.split('#')[1]}`)
        .sort(),
    );
    expect(new Set(mailers.map((fn) => JSON.stringify(fn.Properties.Role))).size).toBe(mailers.length);
    for (const fn of lambdas.filter((f) => !mailers.includes(f))) expect(secretGrants(fn).join('\n')).not.toMatch(/smtp/);
    // Pack price ids are not secrets: the credits route lists the packs with them.
    expect(functionOfRoute('account.credits').Properties.Environment.Variables).toMatchObject({ STRIPE_PRICE_PACK_10: 'price_live_pack10', STRIPE_PRICE_PACK_1500: 'price_live_pack1500' });
    expect(ROUTES.filter((r) => r.permissions.includes('stripe')).map((r) => r.id).sort()).toEqual(
      ['stripe.webhook', 'subscription.cancel', 'subscription.change', 'subscription.portal', 'subscription.resume'].sort(),
    );
  });

  it('with a second secret for the webhook secret, lets only the Stripe webhook route read it', () => {
    const app = new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } });
    const split = Template.fromStack(new PdfServiceStack(app, 'SplitStripe', { stripeSecretName: 'pdf-service/stripe', stripeWebhookSecretName: 'pdf-service/stripe-webhook' })).toJSON()
      .Resources as Record<string, { Type: string; Properties: any }>;
    const readers = Object.values(split)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => JSON.stringify(r.Properties.PolicyDocument).includes('secret:pdf-service/stripe-webhook-'))
      .flatMap((r) => r.Properties.Roles.map((x: any) => x.Ref));
    const withWebhookSecret = Object.values(split).filter((r) => r.Type === 'AWS::Lambda::Function' && readers.includes(r.Properties.Role['Fn::GetAtt'][0]));
    expect(withWebhookSecret.map((fn) => fn.Properties.Environment.Variables.STRIPE_WEBHOOK_SECRET_SECRET_ID)).toEqual(['pdf-service/stripe-webhook']);
    const subscriptionFns = Object.values(split).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.STRIPE_SECRET_KEY_SECRET_ID);
    expect(subscriptionFns.length).toBeGreaterThan(1);
  });

  it('seeds the plans with the configured Stripe prices', () => {
    const seed = Object.values(res).find((r) => r.Type === 'Custom::AWS')!;
    expect(JSON.stringify(seed.Properties.Create)).toContain('price_live_starter');
    expect(JSON.stringify(seed.Properties.Create)).toContain('price_live_business');
    // All plans or none: one transaction, its puts allowed on the table alone.
    expect(JSON.stringify(seed.Properties.Create)).toContain('transactWriteItems');
  });
});

describe('bulk workflow', () => {
  const wf = WORKFLOWS.find((w) => w.name === 'bulk')!;
  const asl = JSON.parse(readFileSync(path.join(__dirname, '../..', wf.definition), 'utf8'));
  const [machineId, machine] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine' && JSON.parse(r.Properties.DefinitionString).Comment === asl.Comment)!;
  const fnFor = (state: string) => resources[machine.Properties.DefinitionSubstitutions[state]['Fn::GetAtt'][0]];

  it('renders files in a Map state with bounded concurrency, one Chromium Lambda per file, retried and caught per file', () => {
    const map = JSON.parse(machine.Properties.DefinitionString).States.RenderFiles;
    expect(map).toMatchObject({ Type: 'Map', ItemsPath: '$.prepared.items', MaxConcurrency: 10, ResultPath: null, ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' } } });
    const render = map.ItemProcessor.States.RenderFile;
    expect(render).toMatchObject({ Type: 'Task', Resource: '${RenderFile}', Catch: [{ ErrorEquals: ['States.ALL'], Next: 'FileAbandoned' }] });
    expect(render.Retry.flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals)).toContain('TransientTaskError');
    // The Map collects every iteration's output: an abandoned file's must not carry its error (stack traces of up
    // to 1,000 files would pass the 256 KB payload limit, a failure no Catch sees).
    expect(map.ItemProcessor.States.FileAbandoned).toEqual(expect.objectContaining({ Type: 'Pass', Result: { status: 'abandoned' }, End: true }));
    expect(map.ItemProcessor.States.FileAbandoned.ResultPath).toBeUndefined();
    expect(fnFor('RenderFile').Properties).toMatchObject({ Handler: 'index.renderFile', MemorySize: 2048, Timeout: 120 });
    expect(fnFor('RenderFile').Properties.Layers).toHaveLength(1);
    for (const state of ['Prepare', 'Finish']) {
      expect(fnFor(state).Properties).toMatchObject({ Handler: `index.${state.toLowerCase()}`, MemorySize: 4096, Timeout: 900 });
      expect(fnFor(state).Properties.Layers ?? []).toEqual([]);
    }
  });

  it('is started by POST /bulkjob (its ARN and the right to start it); cancel and the upload URL cannot start workflows', () => {
    const route = (p: string) => methods.find((m) => m.method === 'POST' && m.path === p)!;
    const create = functionOf(route('/bulkjob'));
    expect(JSON.stringify(create.Properties.Environment.Variables[workflowArnVariable('bulk')])).toContain(machineId);
    expect(actionsOf(route('/bulkjob'))).toContain('states:StartExecution');
    for (const p of ['/jobs/{job_id}/cancel', '/bulkjob/upload-url']) {
      expect(actionsOf(route(p)).some((a) => a.startsWith('states:'))).toBe(false);
      expect(functionOf(route(p)).Properties.Layers ?? []).toEqual([]);
    }
    expect(actionsOf(route('/bulkjob/upload-url')).filter((a) => /dynamodb:(Put|Delete|BatchWrite)|s3:Delete/.test(a))).toEqual([]);
  });
});

describe('render queue and worker', () => {
  const queues = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::SQS::Queue');
  const renderQueue = queues.find(([, r]) => r.Properties.RedrivePolicy)!;

  it('has a dead-letter queue and a visibility timeout longer than the worker may run', () => {
    expect(renderQueue[1].Properties.RedrivePolicy.maxReceiveCount).toBe(3);
    const mapping = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties.EventSourceArn).includes(renderQueue[0]))!;
    // A backlog (e.g. long jobs spinning until their uncharged timeout) is capped, not the account's whole concurrency.
    expect(mapping.Properties).toMatchObject({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: 50 } });
    const worker = resources[mapping.Properties.FunctionName.Ref];
    expect(renderQueue[1].Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * worker.Properties.Timeout);
    expect(worker.Properties.Timeout).toBe(900);
    expect((worker.Properties.Layers ?? []).length).toBe(1);
  });

  it('lets only the worker a queue feeds receive and delete its messages; senders only send', () => {
    const consume = /^sqs:(ReceiveMessage|DeleteMessage|ChangeMessageVisibility|PurgeQueue)$/;
    for (const [queueId] of queues) {
      const fnIds = (keep: (r: { Type: string; Properties: any }) => boolean) =>
        Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function' && keep(r)).map(([id]) => id).sort();
      const consumers = fnIds((r) =>
        policyStatementsOfRole(r.Properties.Role['Fn::GetAtt'][0]).some((st) => [st.Action].flat().some((a: string) => consume.test(a)) && JSON.stringify(st.Resource).includes(`"${queueId}"`)),
      );
      const fed = Object.values(resources)
        .filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties.EventSourceArn).includes(`"${queueId}"`))
        .map((r) => r.Properties.FunctionName.Ref)
        .sort();
      expect(`${queueId} ${consumers.join(',')}`).toBe(`${queueId} ${fed.join(',')}`);
    }
  });

  it("ends what a dead letter was about: the render queue's dead-letter queue feeds a small worker that may end jobs", () => {
    const render = queues.find(([, r]) => r.Properties.RedrivePolicy?.maxReceiveCount === 3)!;
    const dlqId = render[1].Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0];
    const mapping = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties.EventSourceArn).includes(`"${dlqId}"`))!;
    expect(mapping.Properties).toMatchObject({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    const worker = resources[mapping.Properties.FunctionName.Ref];
    expect(worker.Properties.Layers ?? []).toEqual([]);
    expect(resources[dlqId].Properties.VisibilityTimeout).toBeGreaterThanOrEqual(worker.Properties.Timeout);
    const actions = policyStatementsOfRole(worker.Properties.Role['Fn::GetAtt'][0]).flatMap((st) => [st.Action].flat());
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'sqs:ReceiveMessage']));
    expect(actions.filter((a: string) => a.startsWith('s3:'))).toEqual([]);
    // The webhooks queue has no such worker: its dead letters are outbox events the sweeper sends again.
    const webhooks = queues.find(([, r]) => r.Properties.RedrivePolicy?.maxReceiveCount === 5)!;
    const webhooksDlq = webhooks[1].Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0];
    expect(Object.values(resources).some((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties.EventSourceArn).includes(`"${webhooksDlq}"`))).toBe(false);
  });

  it('alarms on dead letters and on a backlog, to one topic', () => {
    const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    const metricNames = alarms.flatMap((a) => (a.Properties.MetricName ? [a.Properties.MetricName] : a.Properties.Metrics.flatMap((m: any) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []))));
    expect(metricNames).toEqual(expect.arrayContaining(['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage', 'Invocations']));
    // Dead letters the render queue's worker drains at once still alarm: its invocations count.
    const drained = alarms.find((a) => JSON.stringify(a.Properties.Metrics ?? []).includes('Invocations'))!;
    expect(drained.Properties.Metrics.find((m: any) => m.Expression).Expression).toBe('invocations + waiting');
    const [topicId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::SNS::Topic')!;
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    expect(template.toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: topicId });
    // Error-level log lines (one-line JSON in the shared function log group) are counted and alarm too.
    const [, filter] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::Logs::MetricFilter')!;
    expect(filter.Properties.FilterPattern).toBe('{ $.level = "error" }');
    const functionLogs = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function')!.Properties.LoggingConfig.LogGroup.Ref;
    expect(filter.Properties.LogGroupName).toEqual({ Ref: functionLogs });
    expect(alarms.some((a) => a.Properties.MetricName === filter.Properties.MetricTransformations[0].MetricName)).toBe(true);
  });

  it("lets CloudWatch publish the alarms to the topic, whose own policy replaces SNS's default one", () => {
    const [topicId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::SNS::Topic')!;
    const policies = Object.values(resources).filter((r) => r.Type === 'AWS::SNS::TopicPolicy' && JSON.stringify(r.Properties.Topics) === JSON.stringify([{ Ref: topicId }]));
    expect(policies).toHaveLength(1);
    const statements: any[] = policies[0].Properties.PolicyDocument.Statement;
    // Without an Allow for the service, the alarm history says "is not authorized to perform: SNS:Publish" and nobody hears.
    const allow = statements.find((st) => st.Effect === 'Allow' && [st.Action].flat().includes('sns:Publish'));
    expect(allow).toMatchObject({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Resource: { Ref: topicId } });
    // Only alarms of this account and region may publish there.
    expect(JSON.stringify(allow.Condition.ArnLike['aws:SourceArn'])).toMatch(/:cloudwatch:.*:alarm:\*"/);
    // Plain HTTP publishing stays refused.
    expect(statements.some((st) => st.Effect === 'Deny' && st.Condition?.Bool?.['aws:SecureTransport'] === 'false')).toBe(true);
  });

  it('lets only the long-job route and the worker itself send to the queue, and gives them the URL', () => {
    const method = methods.find((m) => m.method === 'POST' && m.path === '/longjob')!;
    expect(actionsOf(method)).toEqual(expect.arrayContaining(['sqs:SendMessage']));
    expect(JSON.stringify(functionOf(method).Properties.Environment.Variables.RENDER_QUEUE_URL)).toContain(renderQueue[0]);
    const quick = methods.find((m) => m.method === 'POST' && m.path === '/quickjob')!;
    expect(actionsOf(quick).some((a) => a.startsWith('sqs:'))).toBe(false);
    // The worker sends a job over its account's share of workers back with a delay.
    const mapping = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties.EventSourceArn).includes(renderQueue[0]))!;
    const worker = resources[mapping.Properties.FunctionName.Ref];
    expect(JSON.stringify(worker.Properties.Environment.Variables.RENDER_QUEUE_URL)).toContain(renderQueue[0]);
    const sends = policyStatementsOfRole(worker.Properties.Role['Fn::GetAtt'][0]).filter((st) => [st.Action].flat().includes('sqs:SendMessage'));
    expect(JSON.stringify(sends.map((st) => st.Resource))).toContain(renderQueue[0]);
  });

  it('makes synchronous renders answer before the 29 s gateway timeout', () => {
    // API Gateway refuses an integration timeout over 29 s unless the account's quota was raised (integrationTimeoutSeconds).
    const timeouts = methods.map((m) => m.props.Integration.TimeoutInMillis ?? 29000);
    expect(Math.max(...timeouts)).toBe(29000);
    expect(methods.find((m) => m.method === 'POST' && m.path === '/quickjob')!.props.Integration.TimeoutInMillis).toBe(29000);
    const env = functionOf(methods.find((m) => m.method === 'POST' && m.path === '/longjob')!).Properties.Environment.Variables;
    expect({ quick: env.QUICKJOB_TIMEOUT_SECONDS, longSubmission: env.LONGJOB_SUBMISSION_SECONDS }).toEqual({ quick: '27', longSubmission: '26' });
  });
});

describe('webhook dispatcher, outbox sweeper and webhook secrets', () => {
  const lambdas = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
  const envOf = (fn: { Properties: any }) => (fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
  const mappings = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping');
  const dispatcherMapping = mappings.find((m) => 'WEBHOOK_SECRETS_KEY_SECRET_ID' in envOf(resources[m.Properties.FunctionName.Ref]))!;
  const dispatcher = resources[dispatcherMapping.Properties.FunctionName.Ref];
  const queueId = JSON.stringify(dispatcherMapping.Properties.EventSourceArn).match(/"(\w+)","Arn"/)![1];
  const routeFunction = (id: string) => {
    const route = ROUTES.find((r) => r.id === id)!;
    return functionOf(methods.find((m) => m.method === route.method && m.path === route.path)!);
  };
  const roleActions = (fn: { Properties: any }) => policyStatementsOfRole(fn.Properties.Role['Fn::GetAtt'][0]).flatMap((s) => [s.Action].flat());

  it('feeds the dispatcher from its own queue with a dead-letter queue and a visibility timeout beyond the worker', () => {
    expect(dispatcherMapping.Properties).toMatchObject({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: 50 } });
    const queue = resources[queueId];
    expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBe(5);
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * dispatcher.Properties.Timeout);
    expect(dispatcher.Properties.Timeout).toBeGreaterThanOrEqual(60);
    expect(dispatcher.Properties.Layers ?? []).toEqual([]);
    expect(roleActions(dispatcher)).toEqual(expect.arrayContaining(['dynamodb:UpdateItem', 's3:GetObject*']));
    // It reads stored results only (an event links to one), never uploads, inputs or template assets.
    const objectResources = policyStatementsOfRole(dispatcher.Properties.Role['Fn::GetAtt'][0])
      .filter((st) => [st.Action].flat().some((a: string) => a.startsWith('s3:')))
      .flatMap((st) => [st.Resource].flat().map((r: unknown) => JSON.stringify(r)));
    expect(objectResources.length).toBeGreaterThan(0);
    // (CDK's grantRead also names the bucket itself, for its settings and listing.)
    const objectPatterns = objectResources.filter((r) => r.includes('/'));
    expect(objectPatterns.length).toBeGreaterThan(0);
    for (const r of objectPatterns) expect(r).toMatch(/\/(outputs|pdfop|edits)\/\*/);
    // An event over its account's share of dispatchers goes back to the queue, delayed.
    expect(JSON.stringify(envOf(dispatcher).WEBHOOK_QUEUE_URL)).toContain(queueId);
    expect(
      policyStatementsOfRole(dispatcher.Properties.Role['Fn::GetAtt'][0]).some((s) => [s.Action].flat().includes('sqs:SendMessage') && JSON.stringify(s.Resource).includes(`"${queueId}"`)),
    ).toBe(true);
  });

  it('gives the queue URL and send rights to every function that writes events, and to no route that does not', () => {
    // The routes whose handlers write job events: a long job's, a background PDF job's, a bulk job's that cannot
    // start (bulk.job.failed), and a cancel (bulk.job.cancelled).
    const writerRoutes = ['longjob.create', 'pdf.jobs', 'pdf.merge', 'pdf.split', 'bulkjob.create', 'jobs.cancel'];
    const writers = writerRoutes.map(routeFunction);
    const renderMapping = mappings.find((m) => m !== dispatcherMapping)!;
    writers.push(resources[renderMapping.Properties.FunctionName.Ref]);
    for (const state of ['Process', 'RecordFailure']) {
      const ref = WORKFLOWS[0].tasks[state].ref.split('#')[1];
      writers.push(lambdas.find(([, r]) => r.Properties.Handler === `index.${ref}`)![1]);
    }
    for (const fn of writers) {
      expect(JSON.stringify(envOf(fn).WEBHOOK_QUEUE_URL)).toContain(queueId);
      expect(roleActions(fn)).toContain('sqs:SendMessage');
    }
    const sendsToQueue = (fn: { Properties: any }) =>
      policyStatementsOfRole(fn.Properties.Role['Fn::GetAtt'][0]).some((s) => [s.Action].flat().includes('sqs:SendMessage') && JSON.stringify(s.Resource).includes(`"${queueId}"`));
    for (const fn of writers) expect(sendsToQueue(fn)).toBe(true);
    const others = ROUTES.filter((r) => !writerRoutes.includes(r.id));
    expect(others.length).toBe(ROUTES.length - writerRoutes.length);
    for (const route of others) {
      const fn = routeFunction(route.id);
      expect([route.id, 'WEBHOOK_QUEUE_URL' in envOf(fn), sendsToQueue(fn)]).toEqual([route.id, false, false]);
    }
  });

  /** The function an EventBridge rule runs every minute for the scheduled handler `ref`. */
  function scheduled(ref: string) {
    const rule = Object.values(resources).find((r) => r.Type === 'AWS::Events::Rule' && r.Properties.Description === `Runs ${ref} every 1 minute(s)`)!;
    expect(rule.Properties).toMatchObject({ State: 'ENABLED', ScheduleExpression: 'rate(1 minute)' });
    const sweeperId = JSON.stringify(rule.Properties.Targets).match(/"(\w+)","Arn"/)![1];
    return { sweeperId, sweeper: resources[sweeperId] };
  }

  it('runs the start sweeper every minute, with the render queue, the workflows and their executions, its table rights and the mail secret, and no writes to the bucket', () => {
    const { sweeperId, sweeper } = scheduled('workers/jobs/start-sweep#handler');
    expect(Object.keys(envOf(sweeper))).toEqual(expect.arrayContaining(['RENDER_QUEUE_URL', ...WORKFLOWS.map((w) => workflowArnVariable(w.name))]));
    expect(roleActions(sweeper)).toEqual(expect.arrayContaining(['sqs:SendMessage', 'states:StartExecution', 'states:DescribeExecution', 'dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:DeleteItem']));
    // A stranded bulk or merge/split job's failure recorder reads and deletes what the job staged; it writes nothing there.
    expect(roleActions(sweeper).filter((a) => a.startsWith('s3:')).sort()).toEqual(['s3:DeleteObject*', 's3:GetBucket*', 's3:GetObject*', 's3:List*']);
    // DescribeExecution on the executions of the service's state machines alone.
    const describe = JSON.stringify(policyStatementsOfRole(sweeper.Properties.Role['Fn::GetAtt'][0]).filter((st) => [st.Action].flat().includes('states:DescribeExecution')));
    expect(describe).toMatch(/:execution:/);
    expect(describe).not.toMatch(/"Resource":"\*"/);
    // Starting and watching, nothing more (no stopping or listing of executions).
    expect([...new Set(roleActions(sweeper).filter((a) => a.startsWith('states:')))].sort()).toEqual(['states:DescribeExecution', 'states:StartExecution']);
    expect(envOf(sweeper)).toHaveProperty('WEBHOOK_QUEUE_URL');
    template.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'events.amazonaws.com', FunctionName: { 'Fn::GetAtt': [sweeperId, 'Arn'] } });
  });

  it('runs the outbox sweeper every minute from an EventBridge rule, with send rights on the dispatcher queue and table writes (it ends day-old events)', () => {
    const { sweeperId, sweeper } = scheduled('workers/webhooks/sweep#handler');
    expect(sweeper.Properties.Handler).toBe('index.handler');
    expect(JSON.stringify(envOf(sweeper).WEBHOOK_QUEUE_URL)).toContain(queueId);
    expect(roleActions(sweeper)).toEqual(expect.arrayContaining(['sqs:SendMessage', 'dynamodb:Query', 'dynamodb:UpdateItem']));
    // Nothing of the bucket, no secrets.
    expect(roleActions(sweeper).filter((a) => a.startsWith('s3:'))).toEqual([]);
    expect(envOf(sweeper)).toHaveProperty('WEBHOOK_QUEUE_URL');
    template.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'events.amazonaws.com', FunctionName: { 'Fn::GetAtt': [sweeperId, 'Arn'] } });
  });

  it('gives the secret-sealing key, from Secrets Manager, only to webhook creation, rotation and the dispatcher', () => {
    const holders = lambdas.filter(([, r]) => 'WEBHOOK_SECRETS_KEY_SECRET_ID' in envOf(r)).map(([, r]) => r);
    expect(new Set(holders)).toEqual(new Set([routeFunction('webhooks.create'), routeFunction('webhooks.rotateSecret'), dispatcher]));
    for (const fn of holders) {
      expect(JSON.stringify(envOf(fn).WEBHOOK_SECRETS_KEY_SECRET_ID)).toMatch(/WebhookSecretsKey/);
      expect(roleActions(fn)).toContain('secretsmanager:GetSecretValue');
    }
    template.hasResourceProperties('AWS::SecretsManager::Secret', { Description: 'Encrypts webhook signing secrets stored in the table' });
  });

  it('lets every queue worker set when a failed message comes back (ChangeMessageVisibility on its own queue)', () => {
    expect(mappings.length).toBe(QUEUES.length + QUEUES.filter((q) => q.deadLetterHandler).length);
    for (const mapping of mappings) {
      const statements = policyStatementsOfRole(resources[mapping.Properties.FunctionName.Ref].Properties.Role['Fn::GetAtt'][0]);
      const grant = statements.find((st) => [st.Action].flat().includes('sqs:ChangeMessageVisibility'));
      expect(JSON.stringify(grant?.Resource)).toBe(JSON.stringify(mapping.Properties.EventSourceArn));
    }
  });

  it('gives the page-token secret only to the list routes', () => {
    const holders = lambdas.filter(([, r]) => 'PAGINATION_SECRET_SECRET_ID' in envOf(r)).map(([, r]) => r);
    expect(new Set(holders)).toEqual(new Set(['jobs.list', 'jobs.webhookHistory', 'webhooks.list', 'webhooks.history'].map(routeFunction)));
  });

  it('lets webhook reads only read, and the job history route only read', () => {
    for (const id of ['webhooks.list', 'webhooks.get', 'webhooks.history', 'jobs.webhookHistory']) {
      const actions = roleActions(routeFunction(id));
      expect(actions).toContain('dynamodb:Query');
      expect(actions.filter((a) => /dynamodb:(Put|Update|Delete|BatchWrite)|s3:|sqs:/.test(a))).toEqual([]);
    }
    expect(roleActions(routeFunction('webhooks.create'))).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem']));
  });
});
