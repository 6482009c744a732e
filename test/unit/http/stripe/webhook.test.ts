import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../../functions/composition';
import { InvalidEventSignatureError, MalformedPaymentEventError } from '../../../../functions/core/subscriptions/ports';
import { handler } from '../../../../functions/http/stripe/webhook';

afterEach(() => setServices(null));

// Stripe signs the bytes it sends (pretty-printed JSON): a body parsed and serialised again would not verify.
const RAW = '{\n  "id": "evt_1",\n  "type": "checkout.session.completed"\n}\n';
const event = { httpMethod: 'POST', resource: '/stripe/webhook', path: '/stripe/webhook', headers: { 'Stripe-Signature': 't=1,v1=abc' }, body: RAW, isBase64Encoded: false, requestContext: { requestId: 'req-1' } } as unknown as APIGatewayProxyEvent;

function useVerifier(verify: (body: Buffer, signature: string | undefined) => Promise<unknown>) {
  const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
  const handleEvent = jest.fn(async () => ({ result: 'applied' }));
  setServices({ paymentEvents: { verify }, subscriptions: { handleEvent }, config: {}, log } as unknown as Services);
  return { log, handleEvent };
}

describe('POST /stripe/webhook', () => {
  it('verifies the raw body against the Stripe-Signature header and applies only the verified event', async () => {
    const seen: [string, string | undefined][] = [];
    const { handleEvent } = useVerifier(async (body, signature) => (seen.push([body.toString('utf8'), signature]), { id: 'evt_1', type: 'checkout.session.completed' }));
    const res = await handler(event);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ received: true, event_id: 'evt_1', type: 'checkout.session.completed', result: 'applied' });
    expect(seen).toEqual([[RAW, 't=1,v1=abc']]);
    expect(handleEvent).toHaveBeenCalledWith({ id: 'evt_1', type: 'checkout.session.completed' });
  });

  it('refuses a signature that does not verify with 400 INVALID_SIGNATURE, applying nothing', async () => {
    const { handleEvent } = useVerifier(async () => Promise.reject(new InvalidEventSignatureError('no signature matches', 'v1 mismatch')));
    const res = await handler(event);
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body).error.code).toBe('INVALID_SIGNATURE');
    expect(handleEvent).not.toHaveBeenCalled();
  });

  it('settles a signed but malformed event with 200 ignored (a redelivery would not change it)', async () => {
    const { handleEvent, log } = useVerifier(async () => Promise.reject(new MalformedPaymentEventError('no type', 'evt_2', null)));
    const res = await handler(event);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ received: true, event_id: 'evt_2', type: null, result: 'ignored', reason: 'malformed_event' });
    expect(handleEvent).not.toHaveBeenCalled();
    expect(log.error).toHaveBeenCalled();
  });

  it('answers 5xx, not a signature refusal, when verifying fails for another reason, so Stripe delivers the event again', async () => {
    const { handleEvent } = useVerifier(async () => Promise.reject(new Error('secret store unavailable')));
    const res = await handler(event);
    // A 4xx would tell Stripe the event is refused for good; it retries only on 5xx and timeouts.
    expect(res.statusCode).toBe(500);
    expect(handleEvent).not.toHaveBeenCalled();
  });
});
