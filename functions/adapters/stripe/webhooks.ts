import { InvalidEventSignatureError, MalformedPaymentEventError, type PaymentEvent, type PaymentEventVerifier } from '../../core/subscriptions/ports';
import { stripeSdk } from './client';
import { toPaymentEvent } from './convert';

/** Signed payloads older (or dated further ahead) than this are refused (Stripe's own default), so a captured delivery cannot be replayed later. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Verifies `Stripe-Signature` with the endpoint's signing secret using the SDK's own check. */
export class StripeWebhookVerifier implements PaymentEventVerifier {
  constructor(private readonly secret: string, private readonly toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS) {}

  async verify(rawBody: Uint8Array, signatureHeader: string | undefined): Promise<PaymentEvent> {
    if (!signatureHeader) throw new InvalidEventSignatureError('The Stripe-Signature header is missing.');
    // The SDK refuses only old timestamps; one far ahead would stay replayable until then. The header is read as the
    // SDK reads it (comma-separated `key=value`, exact `t`, the last one counting), and any `t` ahead is refused.
    const stamps = signatureHeader
      .split(',')
      .map((item) => item.split('='))
      .filter(([key]) => key === 't')
      .map(([, value]) => Number.parseInt(value ?? '', 10));
    if (stamps.some((t) => t > Date.now() / 1000 + this.toleranceSeconds)) {
      throw new InvalidEventSignatureError(`The signature's timestamp is more than ${this.toleranceSeconds} s ahead of this server's clock.`);
    }
    const Stripe = await stripeSdk();
    let event;
    try {
      event = Stripe.webhooks.constructEvent(Buffer.from(rawBody), signatureHeader, this.secret, this.toleranceSeconds);
    } catch (err) {
      // The SDK parses the body only after the signature verified: a signed body that is not JSON is settled, not retried.
      if (err instanceof SyntaxError) throw new MalformedPaymentEventError(`the signed body is not JSON (${err.message})`, null, null);
      // The SDK's text can describe our secret (it warns about whitespace in it): the caller gets a fixed sentence.
      throw new InvalidEventSignatureError('No signature in the header matches this body with the endpoint\'s signing secret, or it is too old.', (err as Error).message);
    }
    return toPaymentEvent(event);
  }
}
