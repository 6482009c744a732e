import type Stripe from 'stripe';
import { ServiceError } from '../../core/errors';
import type { CheckoutSession, PaymentProvider, ProviderSubscription } from '../../core/subscriptions/ports';
import { type StripeConfig, lazyStripe } from './client';
import { toCheckoutSession, toProviderSubscription } from './convert';

/** Where Stripe's refusals that are ours to fix are written down (the caller's 502 says nothing of why). */
export type ProviderLog = (message: string, fields: Record<string, unknown>) => void;

/** A Stripe key as a log may show it (Stripe's own messages show `sk_test_****1234`; a proxy's may not). */
const maskKeys = (text: string) => text.replace(/\b((?:sk|rk|pk)_(?:live|test)_)[A-Za-z0-9*]*([A-Za-z0-9]{4})\b/g, '$1****$2');

/** Stripe's refusals in the service's terms: a declined card is the customer's to fix, the rest is ours or Stripe's. */
function translate(err: unknown, log: ProviderLog | undefined): never {
  const e = err as { type?: string; rawType?: string; message?: string; code?: string; statusCode?: number; requestId?: string };
  if (e?.type === 'StripeCardError' || e?.rawType === 'card_error') {
    throw new ServiceError('PAYMENT_FAILED', `The payment was declined (${e.message ?? 'card error'}). Update the payment method in the customer portal, then retry.`, {
      provider_code: e.code ?? null,
    });
  }
  if (typeof e?.type === 'string' && e.type.startsWith('Stripe')) {
    // A revoked key, an unknown price or an outage: only the operator can act, and only the log says which.
    log?.('Stripe refused a request (answered 502 PAYMENT_PROVIDER_ERROR)', {
      type: e.type,
      status: e.statusCode ?? null,
      code: e.code ?? null,
      stripe_request_id: e.requestId ?? null,
      message: maskKeys(String(e.message ?? '')).slice(0, 500),
    });
    throw new ServiceError('PAYMENT_PROVIDER_ERROR', 'The payment provider did not accept the request. Retry later; if it persists, contact support.', {
      provider_status: e.statusCode ?? null,
      provider_code: e.code ?? null,
    });
  }
  throw err;
}

export class StripePaymentProvider implements PaymentProvider {
  private readonly stripe: () => Promise<Stripe>;

  constructor(
    config: StripeConfig,
    private readonly log?: ProviderLog,
  ) {
    this.stripe = lazyStripe(config);
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      translate(err, this.log);
    }
  }

  async checkoutLineItems(sessionId: string) {
    const stripe = await this.stripe();
    const items = await this.call(() => stripe.checkout.sessions.listLineItems(sessionId, { limit: 100 }));
    // Stripe always sets a line item's quantity; a missing one is passed on as NaN, which the service refuses
    // (it must never count as one pack).
    return items.data.map((i) => ({ price_id: i.price?.id ?? null, quantity: typeof i.quantity === 'number' ? i.quantity : Number.NaN }));
  }

  async checkoutForPayment(paymentRef: string): Promise<CheckoutSession | null> {
    const stripe = await this.stripe();
    const sessions = await this.call(() => stripe.checkout.sessions.list({ payment_intent: paymentRef, limit: 1 }));
    return sessions.data[0] ? toCheckoutSession(sessions.data[0]) : null;
  }

  async refundedTotal(chargeRef: string): Promise<number> {
    const stripe = await this.stripe();
    let total = 0;
    // Pending and requires_action refunds are money on its way back; failed and canceled ones are not.
    await this.call(() =>
      stripe.refunds.list({ charge: chargeRef, limit: 100 }).autoPagingEach((refund) => {
        if (refund.status !== 'failed' && refund.status !== 'canceled') total += refund.amount;
      }),
    );
    return total;
  }

  async getSubscription(subscriptionId: string): Promise<ProviderSubscription> {
    const stripe = await this.stripe();
    return toProviderSubscription(await this.call(() => stripe.subscriptions.retrieve(subscriptionId)));
  }

  async cancelAtPeriodEnd(subscriptionId: string): Promise<ProviderSubscription> {
    const stripe = await this.stripe();
    return toProviderSubscription(await this.call(() => stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true })));
  }

  async resume(subscriptionId: string, pending: { cancel_at_period_end: boolean; cancel_at: string | null; pause_collection: boolean }) {
    const stripe = await this.stripe();
    const params: Stripe.SubscriptionUpdateParams = {};
    // Stripe refuses both cancel fields in one request: clear whichever the cancel was made with.
    if (pending.cancel_at_period_end) params.cancel_at_period_end = false;
    else if (pending.cancel_at) params.cancel_at = '';
    if (pending.pause_collection) params.pause_collection = '';
    return toProviderSubscription(await this.call(() => stripe.subscriptions.update(subscriptionId, params)));
  }

  async changePrice(subscriptionId: string, itemId: string, priceId: string, prorate: boolean, idempotencyKey: string): Promise<ProviderSubscription> {
    const stripe = await this.stripe();
    const updated = await this.call(() =>
      stripe.subscriptions.update(
        subscriptionId,
        {
          items: [{ id: itemId, price: priceId }],
          // Upgrade: invoice the prorated difference now and refuse if it cannot be paid. Downgrade: the new
          // price applies from the next renewal; this period was paid at the old price.
          proration_behavior: prorate ? 'always_invoice' : 'none',
          ...(prorate ? { payment_behavior: 'error_if_incomplete' as const } : {}),
        },
        { idempotencyKey },
      ),
    );
    return toProviderSubscription(updated);
  }

  async portalUrl(customerId: string, returnUrl: string | undefined): Promise<string> {
    const stripe = await this.stripe();
    const session = await this.call(() => stripe.billingPortal.sessions.create({ customer: customerId, ...(returnUrl ? { return_url: returnUrl } : {}) }));
    return session.url;
  }
}
