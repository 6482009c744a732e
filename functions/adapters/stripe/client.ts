import type Stripe from 'stripe';

export interface StripeConfig {
  secretKey: string;
  /** A test double of Stripe's API (STRIPE_API_HOST/PORT/PROTOCOL); unset in production. */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
}

/**
 * The real `stripe` client, loaded on first use: the SDK costs ~100 ms to load, and most functions never
 * talk to Stripe. Retries are the SDK's own (idempotency keys included).
 */
export function lazyStripe(config: StripeConfig): () => Promise<Stripe> {
  let client: Promise<Stripe> | null = null;
  return () => {
    client ??= import('stripe').then(({ default: StripeSdk }) => {
      return new StripeSdk(config.secretKey, {
        ...(config.host ? { host: config.host } : {}),
        ...(config.port ? { port: config.port } : {}),
        ...(config.protocol ? { protocol: config.protocol } : {}),
        maxNetworkRetries: 2,
        timeout: 10_000,
        telemetry: false,
        appInfo: { name: 'pdf-service' },
      });
    });
    return client;
  };
}

/** The SDK's static helpers (webhook signatures) without a client. */
export async function stripeSdk(): Promise<typeof Stripe> {
  return (await import('stripe')).default;
}
