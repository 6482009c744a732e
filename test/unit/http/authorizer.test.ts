import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../functions/composition';
import { generateApiKey } from '../../../functions/core/auth/api-keys';
import type { ApiKeyRecord, ApiKeyRepository } from '../../../functions/core/auth/ports';
import { handler } from '../../../functions/http/authorizer';

const key = generateApiKey();
const record: ApiKeyRecord = { api_key_id: 'key_1', account_id: 'acc_1', prefix: key.prefix, hash: key.hash, name: 'k', created_at: '2026-01-01T00:00:00Z', last_used_at: new Date().toISOString() };
const errors: unknown[][] = [];

function withKeys(apiKeys: Partial<ApiKeyRepository>) {
  setServices({
    apiKeys: { findByPrefix: async () => [record], touch: async () => undefined, ...apiKeys },
    idTokens: { verify: async () => Promise.reject(new Error('bad signature')) },
    clock: { now: () => new Date() },
    log: { warn: () => undefined, error: (...args: unknown[]) => void errors.push(args) },
  } as unknown as Services);
}

const event = (method: string, resource: string, headers: Record<string, string>): APIGatewayRequestAuthorizerEvent =>
  ({
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:us-east-1:1:api/prod/${method}${resource}`,
    resource,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    requestContext: { requestId: 'req-1' },
  }) as unknown as APIGatewayRequestAuthorizerEvent;

afterEach(() => {
  setServices(null);
  errors.length = 0;
});

describe('REQUEST authorizer', () => {
  it('allows a valid key on a key-or-token route, naming the account and key in the context', async () => {
    withKeys({});
    const verdict = await handler(event('GET', '/me', { 'X-API-Key': key.plaintext }));
    expect(verdict.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    expect(verdict.context).toEqual({ account_id: 'acc_1', credential: 'api_key', api_key_id: 'key_1' });
  });

  it('denies a key on an ID-token-only route with the UNAUTHORIZED context the gateway response reads', async () => {
    withKeys({});
    const verdict = await handler(event('POST', '/accounts/me/api-keys', { 'X-API-Key': key.plaintext }));
    expect(verdict.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    expect(Object.values(verdict.context ?? {})).toEqual(expect.arrayContaining(['UNAUTHORIZED', 'id_token_required']));
  });

  // A key store that cannot be read says nothing about the key: a 401 would tell a valid caller their key is bad.
  it('fails (500 AUTHORIZER_FAILURE at the gateway) rather than denying when the key store cannot be read, and logs it', async () => {
    withKeys({ findByPrefix: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')) });
    await expect(handler(event('GET', '/me', { 'X-API-Key': key.plaintext }))).rejects.toThrow('authorizer failure');
    expect(errors).toHaveLength(1);
  });
});
