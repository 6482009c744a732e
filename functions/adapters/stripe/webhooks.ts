import { InvalidEventSignatureError, type PaymentEvent, type PaymentEventVerifier } from '../../core/subscriptions/ports';
import { stripeSdk } from './client';
import { toPaymentEvent } from './convert';

/** Signed payloads older than this are refused (Stripe's own default), so a captured delivery cannot be replayed later. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Verifies `Stripe-Signature` with the endpoint's signing secret using the SDK's own check. */
export class StripeWebhookVerifier implements PaymentEventVerifier {
  constructor(private readonly secret: string, private readonly toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS) {}

  async verify(rawBody: Uint8Array, signatureHeader: string | undefined): Promise<PaymentEvent> {
    if (!signatureHeader) throw new InvalidEventSignatureError('The Stripe-Signature header is missing.');
    const Stripe = await stripeSdk();
    let event;
    try {
      event = Stripe.webhooks.constructEvent(Buffer.from(rawBody), signatureHeader, this.secret, this.toleranceSeconds);
    } catch (err) {
      throw new InvalidEventSignatureError((err as Error).message);
    }
    return toPaymentEvent(event);
  }
}
