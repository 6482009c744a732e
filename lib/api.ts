import { Duration } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { GATEWAY_RESPONSES, type GatewayResponseDef } from '../functions/http/gateway-responses';
import { preflightHeaders } from '../functions/http/responses';
import { ROUTES, type RouteDef, handlerRef } from '../functions/routes';
import type { FunctionFactory } from './functions';

export interface ApiProps {
  functions: FunctionFactory;
  authorizerFunction: lambda.IFunction;
  /** API Gateway waits at most 29 s by default; higher values need a quota increase in the account. */
  integrationTimeoutSeconds: number;
  throttle: { rateLimit: number; burstLimit: number };
}

/** A VTL body for a gateway response in the service's error envelope. */
function template(def: GatewayResponseDef): string {
  const value = (text: string) => (text.startsWith('$authorizer.') ? `"$context.authorizer.${text.slice('$authorizer.'.length)}"` : JSON.stringify(text));
  const details = Object.entries(def.details ?? {}).map(([key, text]) => `${JSON.stringify(key)}:${value(text)}`);
  return `{"error":{"code":${value(def.code)},"message":${value(def.message)},"details":{${details.join(',')}}}}`;
}

/** The REST API, built from the route table: one method per row, the shared REQUEST authorizer, and our gateway responses. */
export class Api extends Construct {
  readonly restApi: apigw.RestApi;
  /** One JSON line per request (who called what, status, latency), the stage's access log. */
  readonly accessLogs: logs.LogGroup;
  /** The stage's execution log (errors only), created here so that it has a retention. */
  readonly executionLogs: logs.LogGroup;
  /** Method and resource path of every method created, for the parity test with the local gateway. */
  readonly routes: { method: string; path: string; routeId: string }[] = [];

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const stageName = 'v1';
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.ONE_MONTH });
    this.restApi = new apigw.RestApi(this, 'RestApi', {
      restApiName: 'pdf-service',
      description: 'PDF service API (routes from functions/routes.ts)',
      // Every body reaches Lambda base64-encoded and PDFs leave as binary.
      binaryMediaTypes: ['*/*'],
      endpointTypes: [apigw.EndpointType.REGIONAL],
      deployOptions: {
        stageName,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        metricsEnabled: true,
        accessLogDestination: new apigw.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: apigw.AccessLogField.contextRequestId(),
            extendedRequestId: apigw.AccessLogField.contextExtendedRequestId(),
            ip: apigw.AccessLogField.contextIdentitySourceIp(),
            requestTime: apigw.AccessLogField.contextRequestTime(),
            httpMethod: apigw.AccessLogField.contextHttpMethod(),
            resourcePath: apigw.AccessLogField.contextResourcePath(),
            status: apigw.AccessLogField.contextStatus(),
            protocol: apigw.AccessLogField.contextProtocol(),
            responseLength: apigw.AccessLogField.contextResponseLength(),
            responseLatency: apigw.AccessLogField.contextResponseLatency(),
            integrationLatency: apigw.AccessLogField.contextIntegrationLatency(),
            principalId: apigw.AccessLogField.contextAuthorizerPrincipalId(),
            errorMessage: apigw.AccessLogField.contextErrorMessage(),
            authorizerError: apigw.AccessLogField.contextAuthorizerError(),
          }),
        ),
        // Errors only, and never request or response bodies (dataTraceEnabled): bodies are customer documents and
        // headers carry API keys and tokens.
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
    });
    // API Gateway would create this group itself on the first error, without a retention; the stage waits for it.
    this.executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.restApi.restApiId}/${stageName}`,
      retention: logs.RetentionDays.ONE_MONTH,
    });
    this.restApi.deploymentStage.node.addDependency(this.executionLogs);

    for (const def of GATEWAY_RESPONSES) {
      this.restApi.addGatewayResponse(`Gw${def.type}`, {
        type: apigw.ResponseType.of(def.type),
        statusCode: def.status ? String(def.status) : undefined,
        responseHeaders: {
          'Access-Control-Allow-Origin': "'*'",
          'Content-Type': "'application/json'",
          // Static values are single-quoted in a gateway response's header mapping.
          ...Object.fromEntries(Object.entries(def.headers ?? {}).map(([name, value]) => [name, `'${value}'`])),
        },
        templates: { 'application/json': template(def) },
      });
    }

    // Caching off: a revoked key must be refused on the very next request. Identity sources stay empty
    // because either header (X-API-Key or Authorization) may carry the credential.
    const authorizer = new apigw.RequestAuthorizer(this, 'Authorizer', {
      handler: props.authorizerFunction,
      identitySources: [],
      resultsCacheTtl: Duration.seconds(0),
    });

    for (const route of ROUTES) this.addRoute(route, props, authorizer);
  }

  private readonly preflighted = new Set<string>();

  /**
   * Browser preflights only where a route lives (not on every intermediate path segment): a MOCK answer. Not
   * `addCorsPreflight`: with binary media types `*\/*` API Gateway treats the preflight's request as binary and its
   * mapping template fails ("Unable to transform request", a 500) unless the integration converts it to text.
   */
  private addPreflight(resource: apigw.IResource, routePath: string) {
    if (this.preflighted.has(resource.path)) return;
    this.preflighted.add(resource.path);
    // Static header values in a MOCK integration are quoted.
    const headers = Object.fromEntries(Object.entries(preflightHeaders(routePath)).map(([name, value]) => [name, `'${value}'`]));
    resource.addMethod(
      'OPTIONS',
      new apigw.MockIntegration({
        contentHandling: apigw.ContentHandling.CONVERT_TO_TEXT,
        requestTemplates: { 'application/json': '{ "statusCode": 204 }' },
        integrationResponses: [{ statusCode: '204', responseParameters: Object.fromEntries(Object.entries(headers).map(([k, v]) => [`method.response.header.${k}`, v])) }],
      }),
      {
        authorizationType: apigw.AuthorizationType.NONE,
        methodResponses: [{ statusCode: '204', responseParameters: Object.fromEntries(Object.keys(headers).map((k) => [`method.response.header.${k}`, true])) }],
      },
    );
  }

  private addRoute(route: RouteDef, props: ApiProps, authorizer: apigw.IAuthorizer) {
    const fn = props.functions.forHandler({
      ref: handlerRef(route),
      profile: route.handler ? route.profile : 'light',
      permissions: route.handler ? route.permissions : [],
      timeoutSeconds: route.timeoutSeconds,
    });
    const resource = this.restApi.root.resourceForPath(route.path);
    const timeout = Duration.seconds(Math.min(props.integrationTimeoutSeconds, route.timeoutSeconds ?? 29));
    this.addPreflight(resource, route.path);
    // One invoke permission per function for the whole API instead of one per method.
    resource.addMethod(route.method, new apigw.LambdaIntegration(fn, { proxy: true, timeout, scopePermissionToMethod: false }), {
      operationName: route.id,
      ...(route.access === 'none' ? { authorizationType: apigw.AuthorizationType.NONE } : { authorizer, authorizationType: apigw.AuthorizationType.CUSTOM }),
    });
    this.routes.push({ method: route.method, path: route.path, routeId: route.id });
  }
}
