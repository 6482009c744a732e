import { ServiceError, invalidParameter } from '../errors';
import { newId } from '../ids';
import { generateApiKey } from './api-keys';
import type { ApiKeyRecord, ApiKeyRepository } from './ports';

export const MAX_API_KEYS_PER_ACCOUNT = 50;
const MAX_NAME_LENGTH = 100;

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

export function parseKeyName(body: unknown): string {
  if (body === undefined || body === null) return 'API key';
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidParameter('body', 'Send a JSON object such as {"name": "production"}.');
  const name = (body as Record<string, unknown>).name;
  if (name === undefined || name === null) return 'API key';
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH) {
    throw invalidParameter('name', `name must be a non-empty string of at most ${MAX_NAME_LENGTH} characters.`);
  }
  return name.trim();
}

/** Creates a key; the plaintext exists only in this return value. */
export async function createApiKey(repo: ApiKeyRepository, accountId: string, name: string, now: Date) {
  const existing = await repo.listForAccount(accountId);
  if (existing.length >= MAX_API_KEYS_PER_ACCOUNT) {
    throw new ServiceError('API_KEY_LIMIT_EXCEEDED', `An account can hold ${MAX_API_KEYS_PER_ACCOUNT} API keys. Revoke unused keys first.`, {
      current_count: existing.length,
      max_allowed: MAX_API_KEYS_PER_ACCOUNT,
    });
  }
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
  await repo.create(record);
  return { record, plaintext: key.plaintext };
}
