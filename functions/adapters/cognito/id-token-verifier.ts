import { CognitoJwtVerifier } from 'aws-jwt-verify';
import { JwtExpiredError } from 'aws-jwt-verify/error';
import { type Jwks, SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { type IdTokenVerifier, TokenExpiredError, type VerifiedIdToken } from '../../core/auth/ports';

export interface CognitoVerifierConfig {
  userPoolId: string;
  clientId: string;
  /**
   * Local only: the local issuer's JWKS. The verifier then never goes to the network; an unknown `kid`
   * is refetched from this same set and fails like it would against the real pool.
   */
  localJwks?: Jwks;
}

/** Cognito ID tokens, checked by aws-jwt-verify: signature (RS256 only), issuer, audience, token_use, expiry. */
export class CognitoIdTokenVerifier implements IdTokenVerifier {
  private readonly verifier;

  constructor(config: CognitoVerifierConfig) {
    const props = { userPoolId: config.userPoolId, clientId: config.clientId, tokenUse: 'id' as const };
    if (config.localJwks) {
      const bytes = new TextEncoder().encode(JSON.stringify(config.localJwks));
      const jwksCache = new SimpleJwksCache({ fetcher: { fetch: async () => bytes.buffer.slice(0) as ArrayBuffer } });
      this.verifier = CognitoJwtVerifier.create(props, { jwksCache });
      this.verifier.cacheJwks(config.localJwks);
    } else {
      this.verifier = CognitoJwtVerifier.create(props);
    }
  }

  async verify(token: string): Promise<VerifiedIdToken> {
    try {
      const payload = await this.verifier.verify(token);
      return { sub: payload.sub, email: typeof payload.email === 'string' ? payload.email : null };
    } catch (err) {
      if (err instanceof JwtExpiredError) throw new TokenExpiredError();
      throw err;
    }
  }
}
