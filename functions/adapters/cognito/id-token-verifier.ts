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

/** The longest ID token lifetime Cognito can be set to issue (one day): a token claiming more was not issued by it. */
export const MAX_ID_TOKEN_LIFETIME_SECONDS = 24 * 3600;
/** How far ahead of this clock a token's issue time may be (the issuer's clock may run a little fast). */
export const ISSUED_AT_SKEW_SECONDS = 300;
/** Header parameters Cognito never sets: a key or URL carried by the token itself, and extensions a verifier must understand. */
const FOREIGN_HEADER_PARAMETERS = ['crit', 'jku', 'jwk', 'x5u', 'x5c', 'x5t', 'x5t#S256', 'b64'];

/** Three base64url parts, each written the one way an encoder writes it (no padding, no stray bits). */
function isCanonicalCompactJws(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((part) => /^[A-Za-z0-9_-]+$/.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part);
}

/**
 * What aws-jwt-verify leaves out and Cognito's ID tokens always have: an expiry (the library checks `exp` only when
 * present, so a token without one would be valid for ever), an issue time not in the future, a lifetime Cognito can
 * issue, and a header without parameters that name other keys or extensions (RFC 7515 says a `crit` the verifier
 * does not understand must be refused).
 */
function assertCognitoShape(header: Record<string, unknown>, payload: Record<string, unknown>, nowSeconds: number): void {
  const foreign = FOREIGN_HEADER_PARAMETERS.find((name) => name in header);
  if (foreign) throw new Error(`header parameter ${foreign} is not accepted`);
  const { exp, iat } = payload;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new Error('exp is required');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new Error('iat is required');
  if (iat > nowSeconds + ISSUED_AT_SKEW_SECONDS) throw new Error('iat is in the future');
  if (exp - iat > MAX_ID_TOKEN_LIFETIME_SECONDS) throw new Error('lifetime longer than Cognito issues');
}

/**
 * Cognito ID tokens, checked by aws-jwt-verify: signature (RS256 only), issuer, audience, token_use, expiry; and by
 * `assertCognitoShape`: the claims and header Cognito always (or never) writes.
 */
export class CognitoIdTokenVerifier implements IdTokenVerifier {
  private readonly verifier;

  constructor(config: CognitoVerifierConfig) {
    const props = {
      userPoolId: config.userPoolId,
      clientId: config.clientId,
      tokenUse: 'id' as const,
      customJwtCheck: ({ header, payload }: { header: object; payload: object }) =>
        assertCognitoShape(header as Record<string, unknown>, payload as Record<string, unknown>, Math.floor(Date.now() / 1000)),
    };
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
    // A token that decodes the same with a byte added is a different string: caches or deny lists keyed on it would miss.
    if (!isCanonicalCompactJws(token)) throw new Error('not a compact JWS in canonical base64url');
    try {
      const payload = await this.verifier.verify(token);
      return { sub: payload.sub, email: typeof payload.email === 'string' ? payload.email : null };
    } catch (err) {
      if (err instanceof JwtExpiredError) throw new TokenExpiredError();
      throw err;
    }
  }
}
