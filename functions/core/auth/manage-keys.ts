import { z } from 'zod';
import { ServiceError, invalidParameter } from '../errors';
import { newId } from '../ids';
import { writtenAfterAll } from '../lost-replies';
import { labelRule, labelSchema, optional, parseRequest } from '../validation';
import { generateApiKey } from './api-keys';
import type { ApiKeyRecord, ApiKeyRepository } from './ports';

export const MAX_API_KEYS_PER_ACCOUNT = 50;
const MAX_NAME_LENGTH = 100;
const DEFAULT_KEY_NAME = 'API key';

/** An API key as listings show it: never the key or its hash. */
export function presentApiKey(record: ApiKeyRecord) {
  return {
    api_key_id: record.api_key_id,
    name: record.name,
    prefix: record.prefix,
    created_at: record.created_at,
    last_used_at: record.last_used_at,
  };
}

/** Body of POST /accounts/me/api-keys (the body itself may be left out). */
export const createApiKeyBodySchema = z.object({
  name: optional(labelSchema(MAX_NAME_LENGTH)).meta({
    description: `A label shown in key listings: ${labelRule(MAX_NAME_LENGTH)}. Default (absent or null): "${DEFAULT_KEY_NAME}".`,
    default: DEFAULT_KEY_NAME,
  }),
});

/** The key's name from the body of POST /accounts/me/api-keys: 400 INVALID_PARAMETER (`body` or `name`) otherwise. */
export function parseKeyName(body: unknown): string {
  if (body === undefined || body === null) return DEFAULT_KEY_NAME;
  const { name } = parseRequest(createApiKeyBodySchema, body, {
    example: '{"name": "production"}',
    refusals: { name: () => invalidParameter('name', `name must be ${labelRule(MAX_NAME_LENGTH)}.`) },
  });
  return name ?? DEFAULT_KEY_NAME;
}

/** Creates a key; the plaintext exists only in this return value. */
export async function createApiKey(repo: ApiKeyRepository, accountId: string, name: string, now: Date) {
  const key = generateApiKey();
  const record: ApiKeyRecord = {
    api_key_id: newId('key'),
    account_id: accountId,
    prefix: key.prefix,
    hash: key.hash,
    name,
    created_at: now.toISOString(),
    last_used_at: null,
  };
  let outcome: Awaited<ReturnType<ApiKeyRepository['create']>>;
  try {
    outcome = await repo.create(record, MAX_API_KEYS_PER_ACCOUNT);
  } catch (err) {
    // Stored with its reply lost: the key works, and this answer is the only time its plaintext can be shown.
    if (!(await writtenAfterAll(async () => (await repo.findByPrefix(key.prefix)).some((r) => r.api_key_id === record.api_key_id)))) throw err;
    outcome = { created: true };
  }
  if (!outcome.created) {
    throw new ServiceError('API_KEY_LIMIT_EXCEEDED', `An account can hold ${MAX_API_KEYS_PER_ACCOUNT} API keys. Revoke unused keys first.`, {
      current_count: outcome.currentCount,
      max_allowed: MAX_API_KEYS_PER_ACCOUNT,
    });
  }
  return { record, plaintext: key.plaintext };
}

/** DELETE /accounts/me/api-keys/{id}: the key stops working with the next request; only the account's own keys. */
export async function revokeApiKey(repo: ApiKeyRepository, accountId: string, apiKeyId: string): Promise<{ api_key_id: string; revoked: true }> {
  const outcome = await repo.delete(accountId, apiKeyId);
  if (outcome === 'other_account') {
    throw new ServiceError('ACCESS_DENIED', `API key ${apiKeyId} belongs to another account; an account can revoke only its own keys.`, { api_key_id: apiKeyId });
  }
  if (outcome === 'not_found') {
    throw new ServiceError('API_KEY_NOT_FOUND', `No API key ${apiKeyId} on this account. GET /accounts/me/api-keys lists them.`, { api_key_id: apiKeyId });
  }
  return { api_key_id: apiKeyId, revoked: true };
}
