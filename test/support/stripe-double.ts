/**
 * A loopback test double of the parts of Stripe's API the service calls, plus builders for Stripe-shaped
 * objects and events signed with the stripe library's own `webhooks.generateTestHeaderString`. The service
 * talks to it through the real `stripe` client (STRIPE_API_HOST/PORT/PROTOCOL).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export const TEST_SECRET_KEY = 'sk_test_double_0123456789';
export const TEST_WEBHOOK_SECRET = 'whsec_test_double_0123456789';
export const PRICES = {
  starter: 'price_test_starter',
  business: 'price_test_business',
  pack10: 'price_test_pack_10',
  pack100: 'price_test_pack_100',
  pack1500: 'price_test_pack_1500',
};
const UNIT_AMOUNTS: Record<string, number> = { [PRICES.starter]: 2000, [PRICES.business]: 10000 };
/** One-off prices, in cents: a pack costs its USD amount. */
const PACK_AMOUNTS: Record<string, number> = { [PRICES.pack10]: 1000, [PRICES.pack100]: 10000, [PRICES.pack1500]: 150000 };

export const seconds = (iso: string | Date) => Math.floor(new Date(iso).getTime() / 1000);
const rid = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export interface RecordedRequest {
  method: string;
  path: string;
  form: Record<string, string>;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  /** Answered from an earlier request with the same Idempotency-Key, as Stripe does (nothing was done again). */
  replayed: boolean;
}

export interface SubscriptionInit {
  customer: string;
  price: string;
  status?: string;
  periodStart: string;
  periodEnd: string;
  accountId?: string;
  cancelAtPeriodEnd?: boolean;
}

export class StripeDouble {
  readonly subscriptions = new Map<string, any>();
  readonly lineItems = new Map<string, { price: string; quantity: number }[]>();
  /** Checkout sessions made by checkoutSession(), by id (GET /v1/checkout/sessions lists them). */
  readonly sessions = new Map<string, any>();
  /** Refunds by charge id (GET /v1/refunds?charge= lists them): refundedCharge() and failRefund() keep them. */
  readonly refunds = new Map<string, any[]>();
  readonly requests: RecordedRequest[] = [];
  /** First answers of POSTs sent with an Idempotency-Key: a request with the same key gets the same answer. */
  private readonly idempotent = new Map<string, { form: string; status: number; body: unknown }>();
  /** Responses whose answer is kept under their request's Idempotency-Key once sent. */
  private readonly keyOf = new WeakMap<http.ServerResponse, { key: string; form: string }>();
  /** The next mutating call answers this Stripe error instead (e.g. a declined card). */
  failNext: { status: number; error: Record<string, unknown> } | null = null;
  /** Replies to lose (the connection is cut after the request was carried out): what a client's retry must survive. */
  dropReplies = 0;
  private server!: http.Server;
  port = 0;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Environment for the service: the double's address, its keys, and the test prices. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      STRIPE_SECRET_KEY: TEST_SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      STRIPE_API_HOST: '127.0.0.1',
      STRIPE_API_PORT: String(this.port),
      STRIPE_API_PROTOCOL: 'http',
      STRIPE_PRICE_STARTER: PRICES.starter,
      STRIPE_PRICE_BUSINESS: PRICES.business,
      STRIPE_PRICE_PACK_10: PRICES.pack10,
      STRIPE_PRICE_PACK_100: PRICES.pack100,
      STRIPE_PRICE_PACK_1500: PRICES.pack1500,
      STRIPE_PORTAL_RETURN_URL: 'https://dashboard.example.com/billing',
      ...extra,
    };
  }

  // ── Stripe-shaped objects ──────────────────────────────────────────────────────────────────────────

  subscription(init: SubscriptionInit): any {
    const id = rid('sub');
    const sub = {
      id,
      object: 'subscription',
      customer: init.customer,
      status: init.status ?? 'active',
      cancel_at_period_end: init.cancelAtPeriodEnd ?? false,
      cancel_at: init.cancelAtPeriodEnd ? seconds(init.periodEnd) : null,
      canceled_at: null,
      pause_collection: null,
      metadata: init.accountId ? { account_id: init.accountId } : {},
      start_date: seconds(init.periodStart),
      livemode: false,
      items: {
        object: 'list',
        has_more: false,
        url: `/v1/subscription_items?subscription=${id}`,
        data: [
          {
            id: rid('si'),
            object: 'subscription_item',
            subscription: id,
            quantity: 1,
            price: this.price(init.price),
            current_period_start: seconds(init.periodStart),
            current_period_end: seconds(init.periodEnd),
          },
        ],
      },
    };
    this.subscriptions.set(id, sub);
    return sub;
  }

  price(id: string) {
    return { id, object: 'price', active: true, currency: 'usd', unit_amount: UNIT_AMOUNTS[id] ?? PACK_AMOUNTS[id] ?? 1000, recurring: UNIT_AMOUNTS[id] ? { interval: 'month' } : null };
  }

  /** Moves a stored subscription into its next period (what Stripe does at renewal). */
  renew(subId: string, periodStart: string, periodEnd: string): any {
    const sub = this.subscriptions.get(subId);
    sub.items.data[0].current_period_start = seconds(periodStart);
    sub.items.data[0].current_period_end = seconds(periodEnd);
    return sub;
  }

  checkoutSession(init: { mode: 'payment' | 'subscription'; accountId?: string | null; customer?: string | null; subscription?: string; paymentStatus?: string; items?: { price: string; quantity?: number }[] }): any {
    const id = rid('cs_test');
    const items = (init.items ?? []).map((i) => ({ price: i.price, quantity: i.quantity ?? 1 }));
    if (init.items) this.lineItems.set(id, items);
    const amountTotal = items.reduce((sum, i) => sum + (UNIT_AMOUNTS[i.price] ?? PACK_AMOUNTS[i.price] ?? 0) * i.quantity, 0);
    const session = {
      id,
      object: 'checkout.session',
      mode: init.mode,
      // A payment-mode checkout is paid through a payment intent; refunds and disputes name it.
      payment_intent: init.mode === 'payment' ? rid('pi') : null,
      amount_total: amountTotal,
      currency: 'usd',
      payment_status: init.paymentStatus ?? 'paid',
      status: 'complete',
      client_reference_id: init.accountId ?? null,
      customer: init.customer ?? null,
      subscription: init.subscription ?? null,
      metadata: {},
      livemode: false,
    };
    this.sessions.set(id, session);
    return session;
  }

  /**
   * The charge of a checkout's payment as `charge.refunded` reports it: `refunded` cents given back so far. A refund
   * of what the total adds is recorded, as Stripe's refunds list would show it.
   */
  refundedCharge(session: { payment_intent: string; amount_total: number }, refunded: number): any {
    const charge = `ch_${session.payment_intent.slice(3)}`;
    const refunds = this.refunds.get(charge) ?? [];
    const live = refunds.filter((r) => r.status !== 'failed' && r.status !== 'canceled').reduce((sum, r) => sum + r.amount, 0);
    if (refunded > live) {
      refunds.push({ id: rid('re'), object: 'refund', amount: refunded - live, charge, payment_intent: session.payment_intent, currency: 'usd', status: 'succeeded' });
    }
    this.refunds.set(charge, refunds);
    return {
      id: charge,
      object: 'charge',
      amount: session.amount_total,
      amount_captured: session.amount_total,
      amount_refunded: refunded,
      refunded: refunded === session.amount_total,
      currency: 'usd',
      payment_intent: session.payment_intent,
      status: 'succeeded',
    };
  }

  /** Marks the charge's latest refund failed; returns it as `refund.failed` (and `refund.updated`) report it. */
  failRefund(session: { payment_intent: string }): any {
    const refund = this.refunds.get(`ch_${session.payment_intent.slice(3)}`)?.at(-1);
    if (!refund) throw new Error('no refund to fail');
    refund.status = 'failed';
    refund.failure_reason = 'expired_or_canceled_card';
    return { ...refund };
  }

  /** A dispute of a checkout's payment as `charge.dispute.closed` reports it. */
  dispute(session: { payment_intent: string; amount_total: number }, status: 'lost' | 'won' | 'warning_closed', amount = session.amount_total): any {
    return { id: rid('dp'), object: 'dispute', amount, currency: 'usd', charge: `ch_${session.payment_intent.slice(3)}`, payment_intent: session.payment_intent, status, reason: 'fraudulent' };
  }

  invoice(init: { customer: string; subscription: string; price: string; periodStart: string; periodEnd: string; billingReason?: string }): any {
    const sub = this.subscriptions.get(init.subscription);
    return {
      id: rid('in'),
      object: 'invoice',
      customer: init.customer,
      status: 'paid',
      billing_reason: init.billingReason ?? 'subscription_cycle',
      // Stripe's invoice-level period is the previous one; the line carries the period being paid for.
      period_start: seconds(init.periodStart) - 30 * 86_400,
      period_end: seconds(init.periodStart),
      parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: init.subscription, metadata: {} } },
      lines: {
        object: 'list',
        has_more: false,
        data: [
          {
            id: rid('il'),
            object: 'line_item',
            amount: UNIT_AMOUNTS[init.price] ?? 0,
            period: { start: seconds(init.periodStart), end: seconds(init.periodEnd) },
            pricing: { type: 'price_details', price_details: { price: init.price, product: 'prod_test' } },
            parent: {
              type: 'subscription_item_details',
              invoice_item_details: null,
              subscription_item_details: { subscription: init.subscription, subscription_item: sub?.items.data[0].id ?? 'si_x', proration: false, invoice_item: null, proration_details: null },
            },
          },
        ],
      },
    };
  }

  /** An event as Stripe sends it, with a valid Stripe-Signature made by the stripe library itself. */
  signedEvent(type: string, object: unknown, opts: { id?: string; created?: number; secret?: string; timestamp?: number } = {}) {
    const event = {
      id: opts.id ?? rid('evt'),
      object: 'event',
      api_version: '2026-10-28.endive',
      created: opts.created ?? Math.floor(Date.now() / 1000),
      type,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object },
    };
    const payload = JSON.stringify(event);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? TEST_WEBHOOK_SECRET, timestamp: opts.timestamp });
    return { event, payload, signature };
  }

  // ── the API ────────────────────────────────────────────────────────────────────────────────────────

  private send(res: http.ServerResponse, status: number, body: unknown) {
    const saving = this.keyOf.get(res);
    // Stripe replays the answer as it was sent, not the object as it is now.
    if (saving) this.idempotent.set(saving.key, { form: saving.form, status, body: JSON.parse(JSON.stringify(body)) });
    if (this.dropReplies > 0) {
      this.dropReplies--;
      res.socket?.destroy();
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': rid('req'), 'Content-Length': String(Buffer.byteLength(text)) });
    res.end(text);
  }

  private notFound(res: http.ServerResponse, what: string) {
    this.send(res, 404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}` } });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://double');
    const form = Object.fromEntries(new URLSearchParams(req.method === 'GET' ? url.search : Buffer.concat(chunks).toString('utf8')));
    const idempotencyKey = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    const saved = req.method === 'POST' && idempotencyKey ? this.idempotent.get(idempotencyKey) : undefined;
    this.requests.push({ method: req.method ?? '', path: url.pathname, form, authorization: req.headers.authorization, idempotencyKey, replayed: !!saved });
    if (req.headers.authorization !== `Bearer ${TEST_SECRET_KEY}`) {
      return this.send(res, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    }
    if (saved) {
      if (saved.form !== JSON.stringify(form)) {
        return this.send(res, 400, { error: { type: 'idempotency_error', message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.' } });
      }
      return this.send(res, saved.status, saved.body);
    }
    if (req.method === 'POST' && idempotencyKey) this.keyOf.set(res, { key: idempotencyKey, form: JSON.stringify(form) });
    if (req.method === 'POST' && this.failNext) {
      const { status, error } = this.failNext;
      this.failNext = null;
      return this.send(res, status, { error });
    }
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && (m = /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/.exec(url.pathname))) {
      const items = this.lineItems.get(m[1]);
      if (!items) return this.notFound(res, `checkout.session: ${m[1]}`);
      return this.send(res, 200, {
        object: 'list',
        has_more: false,
        url: url.pathname,
        data: items.map((i) => ({ id: rid('li'), object: 'item', quantity: i.quantity, price: this.price(i.price), amount_total: (UNIT_AMOUNTS[i.price] ?? PACK_AMOUNTS[i.price] ?? 0) * i.quantity, currency: 'usd' })),
      });
    }
    if (req.method === 'GET' && url.pathname === '/v1/refunds') {
      const all = [...(form.charge ? (this.refunds.get(form.charge) ?? []) : [...this.refunds.values()].flat())].reverse();
      // Paged as Stripe pages a list: `limit` (default 10) items after `starting_after`, newest first.
      const from = form.starting_after ? all.findIndex((r) => r.id === form.starting_after) + 1 : 0;
      const limit = Number(form.limit ?? 10);
      return this.send(res, 200, { object: 'list', has_more: all.length > from + limit, url: url.pathname, data: all.slice(from, from + limit) });
    }
    if (req.method === 'GET' && url.pathname === '/v1/checkout/sessions') {
      // Filtered as Stripe does (payment_intent, subscription, customer), newest first.
      const filters = (['payment_intent', 'subscription', 'customer'] as const).filter((f) => form[f] !== undefined);
      const found = [...this.sessions.values()].reverse().filter((cs) => filters.every((f) => cs[f] === form[f]));
      const limit = Number(form.limit ?? 10);
      return this.send(res, 200, { object: 'list', has_more: found.length > limit, url: url.pathname, data: found.slice(0, limit) });
    }
    if ((m = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname))) {
      const sub = this.subscriptions.get(m[1]);
      if (!sub) return this.notFound(res, `subscription: ${m[1]}`);
      if (req.method === 'GET') return this.send(res, 200, sub);
      if (req.method === 'POST') {
        if (form.cancel_at_period_end !== undefined) {
          sub.cancel_at_period_end = form.cancel_at_period_end === 'true';
          sub.cancel_at = sub.cancel_at_period_end ? sub.items.data[0].current_period_end : null;
        }
        if (form.cancel_at !== undefined) sub.cancel_at = form.cancel_at === '' ? null : Number(form.cancel_at);
        if (form.pause_collection !== undefined) sub.pause_collection = form.pause_collection === '' ? null : { behavior: form['pause_collection[behavior]'] ?? 'void' };
        if (form['pause_collection[behavior]'] !== undefined) sub.pause_collection = { behavior: form['pause_collection[behavior]'], resumes_at: null };
        if (form['items[0][price]']) {
          if (form['items[0][id]'] !== sub.items.data[0].id) return this.notFound(res, `subscription_item: ${form['items[0][id]']}`);
          sub.items.data[0].price = this.price(form['items[0][price]']);
        }
        return this.send(res, 200, sub);
      }
    }
    if (req.method === 'POST' && url.pathname === '/v1/billing_portal/sessions') {
      if (!form.customer) return this.send(res, 400, { error: { type: 'invalid_request_error', message: 'Missing required param: customer.' } });
      return this.send(res, 200, {
        id: rid('bps'),
        object: 'billing_portal.session',
        customer: form.customer,
        return_url: form.return_url ?? null,
        url: `https://billing.stripe.test/p/session/${randomBytes(6).toString('hex')}`,
      });
    }
    return this.notFound(res, `route ${req.method} ${url.pathname}`);
  }
}

export async function startStripeDouble(): Promise<StripeDouble> {
  return new StripeDouble().start();
}
