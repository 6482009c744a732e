import path from 'node:path';
import { loadOrCreateIssuer } from '../../local/issuer';
import type { TestStack } from './stack';

/** A valid ID token from the stack's own issuer for a user that has no account (→ 403 ACCOUNT_NOT_FOUND). */
export async function tokenWithoutAccount(stack: TestStack, sub = '00000000-0000-4000-8000-000000000000'): Promise<string> {
  const issuer = await loadOrCreateIssuer(path.join(stack.dataDir, 'issuer'));
  return issuer.mintIdToken({ sub, email: 'nobody@example.com' });
}
