import { ServiceError } from '../../core/errors';
import { InvalidEventSignatureError, MalformedPaymentEventError } from '../../core/subscriptions/ports';
import { paymentsNotConfigured } from '../../core/subscriptions/service';
import { json } from '../responses';
import { publicRoute } from '../route';

/**
 * POST /stripe/webhook (no credential): the raw body is verified against `Stripe-Signature` before anything
 * is read from it. 200 tells Stripe the event is settled (applied, already applied, or not ours to act on —
 * including a signed event that is not what Stripe documents, which a redelivery would not change);
 * a failure answers 5xx so Stripe delivers it again.
 */
export const handler = publicRoute('stripe.webhook', async ({ services, body, headers }) => {
  const verifier = services.paymentEvents;
  if (!verifier) throw paymentsNotConfigured('STRIPE_WEBHOOK_SECRET');
  let event;
  try {
    event = await verifier.verify(body, headers['stripe-signature']);
  } catch (err) {
    if (err instanceof MalformedPaymentEventError) {
      services.log.error('signed Stripe event ignored as malformed (nothing applied)', { event_id: err.eventId, type: err.eventType, problem: err.problem });
      return json(200, { received: true, event_id: err.eventId, type: err.eventType, result: 'ignored', reason: 'malformed_event' });
    }
    if (!(err instanceof InvalidEventSignatureError)) throw err;
    if (err.detail) services.log.warn('Stripe webhook signature refused', { detail: err.detail });
    throw new ServiceError('INVALID_SIGNATURE', `The Stripe-Signature header does not verify for this body (${err.message}). Nothing was changed.`);
  }
  const outcome = await services.subscriptions.handleEvent(event);
  return json(200, { received: true, event_id: event.id, type: event.type, ...outcome });
});
