import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { Services } from '../../../functions/composition';
import { type LocalIssuer, loadOrCreateIssuer } from '../../../local/issuer';
import { mintLocalToken } from '../../../local/local-routes';
import { rejection } from '../../support/errors';

describe('POST /_local/accounts/{account_id}/token', () => {
  let dir: string;
  let issuer: LocalIssuer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'local-routes-'));
    issuer = await loadOrCreateIssuer(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const services = (account: unknown) => ({ accounts: { get: async () => account } }) as unknown as Services;

  it('mints an ID token for the account, with its email', async () => {
    const res = await mintLocalToken(services({ account_id: 'acc-1', email: 'a@example.com' }), issuer, 'acc-1');
    expect(res.status).toBe(200);
    const { payload } = await jwtVerify((res.body as { id_token: string }).id_token, createLocalJWKSet(issuer.jwks));
    expect(payload).toMatchObject({ sub: 'acc-1', email: 'a@example.com' });
  });

  it('answers an account that does not exist with 404 NOT_FOUND, not a 500', async () => {
    const err = await rejection(mintLocalToken(services(null), issuer, 'nobody'));
    expect(err).toMatchObject({ code: 'NOT_FOUND', details: { account_id: 'nobody' } });
  });
});
