/**
 * The local stand-in for Cognito's token side: an RSA key (kept under the data dir so tokens survive a
 * restart), its JWKS, and ID tokens shaped like Cognito's. The service verifies them with aws-jwt-verify's
 * CognitoJwtVerifier exactly as in AWS; only the JWKS comes from here instead of the user pool.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type JWK, SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';
import { writeFileAtomic } from './files';

export const LOCAL_USER_POOL_ID = 'us-east-1_LocalPool';
export const LOCAL_CLIENT_ID = 'local-dashboard-client';
export const LOCAL_ISSUER = `https://cognito-idp.us-east-1.amazonaws.com/${LOCAL_USER_POOL_ID}`;

export interface LocalIssuer {
  jwksFile: string;
  jwks: { keys: JWK[] };
  mintIdToken(claims: { sub: string; email: string }, lifetimeSeconds?: number): Promise<string>;
}

export async function loadOrCreateIssuer(dir: string): Promise<LocalIssuer> {
  mkdirSync(dir, { recursive: true });
  const keyFile = path.join(dir, 'signing-key.json');
  let privateJwk: JWK;
  if (existsSync(keyFile)) {
    privateJwk = JSON.parse(readFileSync(keyFile, 'utf8'));
  } else {
    const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
    privateJwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
    writeFileAtomic(keyFile, JSON.stringify(privateJwk), { mode: 0o600 });
  }
  const { d, p, q, dp, dq, qi, ...publicJwk } = privateJwk;
  const jwks = { keys: [publicJwk] };
  const jwksFile = path.join(dir, 'jwks.json');
  writeFileAtomic(jwksFile, JSON.stringify(jwks));
  const signingKey = await importJWK(privateJwk, 'RS256');

  return {
    jwksFile,
    jwks,
    async mintIdToken({ sub, email }, lifetimeSeconds = 3600) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ email, email_verified: true, 'cognito:username': sub, token_use: 'id', auth_time: now })
        .setProtectedHeader({ alg: 'RS256', kid: privateJwk.kid, typ: 'JWT' })
        .setIssuer(LOCAL_ISSUER)
        .setAudience(LOCAL_CLIENT_ID)
        .setSubject(sub)
        .setIssuedAt(now)
        .setExpirationTime(now + lifetimeSeconds)
        .sign(signingKey);
    },
  };
}
