import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { errorBody } from './errors';
import { json, toProxyResult } from './responses';

/** Stand-in for every route of the table whose handler is not built yet. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const requestId = event.requestContext?.requestId ?? randomUUID();
  const route = `${event.httpMethod} ${event.resource ?? event.path}`;
  return toProxyResult(
    json(501, errorBody('NOT_IMPLEMENTED', `${route} is part of the API but not available in this release yet.`, { route })),
    requestId,
  );
}
