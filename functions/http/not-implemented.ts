import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../core/errors';
import { toHttpError } from './errors';
import { json, toProxyResult } from './responses';

/** Stand-in for every route of the table whose handler is not built yet. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const requestId = event.requestContext?.requestId ?? randomUUID();
  const route = `${event.httpMethod} ${event.resource ?? event.path}`;
  // Through the one code → status table, like every other refusal.
  const { status, body } = toHttpError(new ServiceError('NOT_IMPLEMENTED', `${route} is part of the API but not available in this release yet.`, { route }), requestId);
  return toProxyResult(json(status, body), requestId);
}
