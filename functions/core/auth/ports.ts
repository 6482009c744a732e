export interface ApiKeyRecord {
  api_key_id: string;
  account_id: string;
  /** `pk_` plus the first characters of the key: shown in listings, used for lookup. */
  prefix: string;
  hash: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface ApiKeyRepository {
  /** Every stored key sharing this lookup prefix (normally one). */
  findByPrefix(prefix: string): Promise<ApiKeyRecord[]>;
  /** Stores the key unless the account already holds `maxAllowed` (checked in the same write, so concurrent creations cannot pass it). */
  create(record: ApiKeyRecord, maxAllowed: number): Promise<{ created: true } | { created: false; currentCount: number }>;
  listForAccount(accountId: string): Promise<ApiKeyRecord[]>;
  /** Removes the key of this account: `not_found` when no key has this id, `other_account` when it is another account's. */
  delete(accountId: string, apiKeyId: string): Promise<'deleted' | 'not_found' | 'other_account'>;
  /** Records use; callers throttle how often they write it. */
  touch(record: ApiKeyRecord, at: Date): Promise<void>;
}

export interface VerifiedIdToken {
  sub: string;
  email: string | null;
}

/** Verifies a Cognito ID token (in AWS against the user pool, locally against the local issuer). */
export interface IdTokenVerifier {
  verify(token: string): Promise<VerifiedIdToken>;
}

export class TokenExpiredError extends Error {
  constructor() {
    super('token expired');
    this.name = 'TokenExpiredError';
  }
}
