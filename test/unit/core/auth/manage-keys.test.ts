import { z } from 'zod';
import { createApiKeyBodySchema, parseKeyName, revokeApiKey } from '../../../../functions/core/auth/manage-keys';
import type { ApiKeyRepository } from '../../../../functions/core/auth/ports';
import { refusal } from '../../../support/errors';

describe('parseKeyName', () => {
  it('defaults to "API key" for no body, an empty object and a null name; trims the name', () => {
    for (const body of [undefined, null, {}, { name: null }]) expect(parseKeyName(body)).toBe('API key');
    expect(parseKeyName({ name: '  production ', other: 1 })).toBe('production');
  });

  it('refuses a body that is not an object with INVALID_PARAMETER body', () => {
    for (const body of ['x', 3, [], true]) expect(refusal(() => parseKeyName(body)).details).toEqual({ parameter: 'body' });
  });

  it('refuses a blank, non-string or too long name (measured trimmed) with INVALID_PARAMETER name', () => {
    expect(parseKeyName({ name: 'k'.repeat(100) })).toBe('k'.repeat(100));
    expect(parseKeyName({ name: ` ${'k'.repeat(100)}  ` })).toBe('k'.repeat(100));
    // Control characters, and names of invisible characters only, are refused too; other scripts and emoji are fine.
    expect(parseKeyName({ name: 'прод 🚀' })).toBe('прод 🚀');
    // So are half surrogate pairs (not text; DynamoDB refuses them) and text-direction controls (names displayed as others).
    for (const name of ['', '   ', 7, ['a'], 'k'.repeat(101), ` ${'k'.repeat(101)} `, '\u0000', 'a\u001bb', '\u202e\u200b', 'x\u0085', '\ud800', 'prod\udc00', 'prod\u202e', 'a\u2066b']) {
      const err = refusal(() => parseKeyName({ name }));
      expect(err.code).toBe('INVALID_PARAMETER');
      expect(err.details).toEqual({ parameter: 'name' });
      expect(err.message).toBe('name must be 1 to 100 characters of text once leading and trailing white space is trimmed, not only invisible characters, with no control or text-direction characters.');
    }
  });

  it('documents the name', () => {
    const json = z.toJSONSchema(createApiKeyBodySchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
    expect(json.properties.name.description).toContain('API key');
  });
});

describe('revokeApiKey', () => {
  const repo = (outcome: 'deleted' | 'not_found' | 'other_account') => ({ delete: async () => outcome }) as unknown as ApiKeyRepository;
  it("revokes the account's own key; another account's is ACCESS_DENIED, an unknown one API_KEY_NOT_FOUND", async () => {
    expect(await revokeApiKey(repo('deleted'), 'acc_1', 'key_1')).toEqual({ api_key_id: 'key_1', revoked: true });
    await expect(revokeApiKey(repo('other_account'), 'acc_1', 'key_2')).rejects.toMatchObject({ code: 'ACCESS_DENIED', details: { api_key_id: 'key_2' } });
    await expect(revokeApiKey(repo('not_found'), 'acc_1', 'key_3')).rejects.toMatchObject({ code: 'API_KEY_NOT_FOUND', details: { api_key_id: 'key_3' } });
  });
});
