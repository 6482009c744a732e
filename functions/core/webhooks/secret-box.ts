import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest. They must be usable to sign, so they cannot be hashed like API keys;
 * they are encrypted with AES-256-GCM under a deployment key (WEBHOOK_SECRETS_KEY: Secrets Manager in AWS,
 * `$DATA_DIR/webhook-secrets-key` locally). The webhook id is the additional authenticated data, so a sealed
 * secret copied onto another webhook does not open. Sealed form: `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
const TAG_BYTES = 16;

export class SecretBox {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    if (!keyMaterial || keyMaterial.length < 16) throw new Error('WEBHOOK_SECRETS_KEY must be at least 16 characters');
    this.key = Buffer.from(hkdfSync('sha256', keyMaterial, 'pdf-service', 'webhook-secrets.v1', 32));
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, body, cipher.getAuthTag()].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string, context: string): string {
    const [version, iv, body, tag] = sealed.split('.');
    if (version !== 'v1' || !iv || !body || !tag) throw new Error('not a sealed webhook secret');
    // The tag length is pinned: without it Node accepts a truncated tag, which is far easier to forge.
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** A new signing secret: `whsec_` and 32 random bytes (base64url), the shape Stripe's tooling expects. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
