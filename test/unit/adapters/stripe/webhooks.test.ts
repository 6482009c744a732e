/** POST /stripe/webhook through the real verifier: what a signed delivery is answered, before any billing rule runs. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import Stripe from 'stripe';
import { StripeWebhookVerifier } from '../../../../functions/adapters/stripe/webhooks';
import { type Services, setServices } from '../../../../functions/composition';
import { handler } from '../../../../functions/http/stripe/webhook';

const SECRET = 'whsec_test';

function setup() {
  const handleEvent = jest.fn(async () => ({ result: 'ignored' as const, reason: 'event_type_not_handled' }));
  const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
  setServices({ paymentEvents: new StripeWebhookVerifier(SECRET), subscriptions: { handleEvent }, log, config: { checkResponseContract: false } } as unknown as Services);
  return { handleEvent, log };
}

async function deliver(payload: string, signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET })) {
  const res = await handler({
    httpMethod: 'POST',
    path: '/stripe/webhook',
    headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature },
    body: payload,
    isBase64Encoded: false,
    requestContext: { requestId: 'req_1' },
  } as unknown as APIGatewayProxyEvent);
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

afterEach(() => setServices(null));

describe('POST /stripe/webhook: signed events that are not what Stripe documents', () => {
  const malformed: [string, string, string | null, string | null][] = [
    ['a checkout whose object is null', '{"id":"evt_r1","type":"checkout.session.completed","created":1795330000,"data":{"object":null}}', 'evt_r1', 'checkout.session.completed'],
    ['an invoice without created', '{"id":"evt_r2","type":"invoice.paid","data":{"object":{}}}', 'evt_r2', 'invoice.paid'],
    ['a subscription without a period', '{"id":"evt_r3","type":"customer.subscription.updated","created":1795330000,"data":{"object":{"id":"sub_r","customer":"cus_r","status":"active"}}}', 'evt_r3', 'customer.subscription.updated'],
    ['an empty object', '{}', null, null],
    ['an array', '[{"id":"evt_a"}]', null, null],
    ['null', 'null', null, null],
    ['an event whose created is a string', '{"id":"evt_s","type":"invoice.paid","created":"1795330000","data":{"object":{}}}', 'evt_s', 'invoice.paid'],
    ['an event without data', '{"id":"evt_d","type":"customer.subscription.deleted","created":1795330000}', 'evt_d', 'customer.subscription.deleted'],
    ['a signed body that is not JSON', '{"id": "evt_x", oops', null, null],
    ['an event without an id', '{"type":"checkout.session.completed","created":1795330000,"data":{"object":{"id":"cs_1","mode":"payment","payment_status":"paid","client_reference_id":"acc_1"}}}', null, 'checkout.session.completed'],
  ];
  it.each(malformed)('answers 200 ignored malformed_event for %s, logs it, and applies nothing', async (_what, payload, id, type) => {
    const { handleEvent, log } = setup();
    const res = await deliver(payload);
    expect(res).toEqual({ status: 200, body: { received: true, event_id: id, type, result: 'ignored', reason: 'malformed_event' } });
    expect(handleEvent).not.toHaveBeenCalled();
    expect(log.error).toHaveBeenCalledWith(expect.stringMatching(/malformed/), expect.objectContaining({ event_id: id, type, problem: expect.any(String) }));
  });

  it('still refuses a body whose signature does not verify (400, nothing read)', async () => {
    const { handleEvent } = setup();
    const res = await deliver('{"id":"evt_r1","type":"checkout.session.completed","created":1795330000,"data":{"object":null}}', 't=1,v1=deadbeef');
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
    expect(handleEvent).not.toHaveBeenCalled();
  });

  it("answers a fixed sentence, never the library's words about the configured secret, and logs those", async () => {
    const handleEvent = jest.fn();
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    // A secret pasted with a trailing space: Stripe's library says so in its error.
    setServices({ paymentEvents: new StripeWebhookVerifier('whsec_test '), subscriptions: { handleEvent }, log, config: { checkResponseContract: false } } as unknown as Services);
    const payload = '{"id":"evt_w","type":"customer.created","created":1795330000,"data":{"object":{}}}';
    const res = await deliver(payload, Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }));
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
    expect(JSON.stringify(res.body)).not.toMatch(/whitespace|secret contains/i);
    expect(log.warn).toHaveBeenCalledWith(expect.stringMatching(/signature refused/), { detail: expect.stringMatching(/whitespace/i) });
  });

  it('refuses a signature dated more than 5 minutes ahead, as one more than 5 minutes old (a replay window either way)', async () => {
    const { handleEvent } = setup();
    const payload = JSON.stringify({ id: 'evt_t', type: 'customer.created', created: Math.floor(Date.now() / 1000), data: { object: { id: 'cus_1' } } });
    for (const shift of [400, -400]) {
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) + shift });
      expect(await deliver(payload, signature)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
    }
    // The SDK verifies against the last `t`: a current one placed first must not hide one far ahead.
    const ahead = Math.floor(Date.now() / 1000) + 3600;
    const hidden = `t=${Math.floor(Date.now() / 1000)},${Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: ahead })}`;
    expect(await deliver(payload, hidden)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
    const soon = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) + 60 });
    expect((await deliver(payload, soon)).status).toBe(200);
    expect(handleEvent).toHaveBeenCalledTimes(1);
  });

  it('keeps the replay window at 300 s to the second, both ways', async () => {
    const { handleEvent } = setup();
    // A clock pinned mid-second, so that no second passes between signing and verifying.
    const now = 1_795_330_000;
    jest.spyOn(Date, 'now').mockReturnValue(now * 1000 + 500);
    try {
      const payload = JSON.stringify({ id: 'evt_b', type: 'customer.created', created: now, data: { object: { id: 'cus_1' } } });
      const signed = (shift: number) => Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now + shift });
      for (const shift of [301, -301]) expect(await deliver(payload, signed(shift))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
      for (const shift of [299, -300]) expect((await deliver(payload, signed(shift))).status).toBe(200);
      expect(handleEvent).toHaveBeenCalledTimes(2);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('verifies the bytes as delivered: a body with a trailing newline and non-ASCII text, sent base64-encoded', async () => {
    const { handleEvent } = setup();
    const payload = `${JSON.stringify({ id: 'evt_raw', type: 'customer.created', created: Math.floor(Date.now() / 1000), data: { object: { id: 'cus_1', name: 'Zoë Ünal' } } }, null, 2)}\n`;
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
    const res = await handler({
      httpMethod: 'POST',
      path: '/stripe/webhook',
      headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature },
      body: Buffer.from(payload, 'utf8').toString('base64'),
      isBase64Encoded: true,
      requestContext: { requestId: 'req_1' },
    } as unknown as APIGatewayProxyEvent);
    expect(res.statusCode).toBe(200);
    expect(handleEvent).toHaveBeenCalledTimes(1);
    // One byte changed is refused.
    expect((await deliver(payload.replace('Zoë', 'Zoe'), signature)).status).toBe(400);
  });

  it('accepts a header with several v1 signatures when one matches (a secret being rolled), and never a v0 one', async () => {
    const { handleEvent } = setup();
    const payload = JSON.stringify({ id: 'evt_v', type: 'customer.created', created: Math.floor(Date.now() / 1000), data: { object: { id: 'cus_1' } } });
    const t = Math.floor(Date.now() / 1000);
    const good = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: t });
    const goodSig = good.split('v1=')[1];
    expect((await deliver(payload, `t=${t},v1=${'0'.repeat(64)},v1=${goodSig}`)).status).toBe(200);
    expect((await deliver(payload, `t=${t},v0=${goodSig}`)).status).toBe(400);
    expect(handleEvent).toHaveBeenCalledTimes(1);
  });

  it("applies the verifier's own tolerance to old signatures, not only the default", async () => {
    const strict = new StripeWebhookVerifier(SECRET, 60);
    const payload = JSON.stringify({ id: 'evt_o', type: 'customer.created', created: Math.floor(Date.now() / 1000), data: { object: { id: 'cus_1' } } });
    const signed = (shift: number) => Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) + shift });
    await expect(strict.verify(Buffer.from(payload), signed(-120))).rejects.toMatchObject({ name: 'InvalidEventSignatureError' });
    await expect(strict.verify(Buffer.from(payload), signed(120))).rejects.toMatchObject({ name: 'InvalidEventSignatureError' });
    await expect(strict.verify(Buffer.from(payload), signed(-10))).resolves.toMatchObject({ id: 'evt_o' });
  });

  it('says a missing Stripe-Signature header is missing', async () => {
    const { handleEvent } = setup();
    const res = await handler({
      httpMethod: 'POST',
      path: '/stripe/webhook',
      headers: { 'Content-Type': 'application/json' },
      body: '{"id":"evt_n","type":"customer.created","created":1795330000,"data":{"object":{}}}',
      isBase64Encoded: false,
      requestContext: { requestId: 'req_1' },
    } as unknown as APIGatewayProxyEvent);
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'INVALID_SIGNATURE', message: expect.stringMatching(/header is missing/) } });
    expect(handleEvent).not.toHaveBeenCalled();
  });

  it('hands a well-formed event to the billing rules', async () => {
    const { handleEvent } = setup();
    const created = Math.floor(Date.now() / 1000);
    const res = await deliver(JSON.stringify({ id: 'evt_ok', type: 'customer.created', created, data: { object: { id: 'cus_1' } } }));
    expect(res).toEqual({ status: 200, body: { received: true, event_id: 'evt_ok', type: 'customer.created', result: 'ignored', reason: 'event_type_not_handled' } });
    expect(handleEvent).toHaveBeenCalledWith({ id: 'evt_ok', type: 'customer.created', created: new Date(created * 1000).toISOString(), kind: 'other' });
  });
});
