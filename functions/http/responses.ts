import type { APIGatewayProxyResult } from 'aws-lambda';
import { contentDisposition } from '../core/jobs/content-disposition';
import { preflightMethods } from '../routes';

export interface HttpResponse {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { statusCode, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** A binary PDF body, e.g. the quickjob result. */
export function pdf(bytes: Uint8Array, headers: Record<string, string>): HttpResponse {
  return { statusCode: 200, headers: { 'Content-Type': 'application/pdf', 'Content-Length': String(bytes.byteLength), ...headers }, body: bytes };
}

/** `Content-Disposition: attachment` for a file name (see contentDisposition). */
export function attachment(name: string): string {
  return contentDisposition('attachment', name);
}

/** Headers a browser client (the dashboard) may read from our responses. */
export const EXPOSED_HEADERS = ['X-Job-Id', 'X-PDF-Pages', 'X-PDF-Truncated', 'X-PDF-Output-Count', 'X-PDF-Warnings', 'X-Request-Id', 'Content-Disposition'];

/** The answer to a browser preflight at a route path: the CDK API's MOCK integrations and the local gateway say the same. */
export function preflightHeaders(routePath: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Headers': 'Content-Type,Authorization,X-API-Key',
    'Access-Control-Allow-Methods': preflightMethods(routePath).join(','),
    'Access-Control-Expose-Headers': EXPOSED_HEADERS.join(', '),
    'Access-Control-Max-Age': '600',
  };
}

/**
 * Our response in API Gateway's Lambda-proxy shape; binary bodies travel base64-encoded. Nothing is stored by caches
 * on the way: answers carry documents, secrets shown once (a new API key or webhook secret) and signed links.
 */
export function toProxyResult(res: HttpResponse, requestId: string): APIGatewayProxyResult {
  const headers: Record<string, string> = {
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': EXPOSED_HEADERS.join(', '),
    ...res.headers,
  };
  if (res.body === undefined) return { statusCode: res.statusCode, headers, body: '' };
  if (typeof res.body === 'string') return { statusCode: res.statusCode, headers, body: res.body };
  return {
    statusCode: res.statusCode,
    headers,
    body: Buffer.from(res.body.buffer, res.body.byteOffset, res.body.byteLength).toString('base64'),
    isBase64Encoded: true,
  };
}
