import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import Stripe from 'stripe';
import { computeSignature, parseSignatureHeader, signatureHeader, verifyWebhookSignature } from '../../../../functions/core/webhooks/signature';

const secret = 'whsec_test_secret_one';
const other = 'whsec_test_secret_two';
const body = '{"event":"job.completed","job_id":"job_1","timestamp":"2026-01-01T00:00:00.000Z"}';
const now = 1_780_000_000;

describe('webhook signatures', () => {
  it('is the hex HMAC-SHA256 of "<t>.<raw body>"', () => {
    const expected = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    expect(computeSignature(secret, now, body)).toBe(expected);
    expect(computeSignature(secret, now, Buffer.from(body))).toBe(expected);
    expect(signatureHeader(body, [secret, other], now)).toBe(`t=${now},v1=${expected},v1=${computeSignature(other, now, body)}`);
  });

  it('verifies with any active secret within the tolerance', () => {
    const header = signatureHeader(body, [secret, other], now);
    expect(verifyWebhookSignature(body, header, secret, 300, now)).toBe(true);
    expect(verifyWebhookSignature(Buffer.from(body), header, [other], 300, now)).toBe(true);
    expect(verifyWebhookSignature(body, header, ['whsec_unrelated', other], 300, now)).toBe(true);
    expect(verifyWebhookSignature(body, header, 'whsec_unrelated', 300, now)).toBe(false);
    expect(verifyWebhookSignature(body, header, [], 300, now)).toBe(false);
  });

  it('rejects a t more than 5 minutes away, either way', () => {
    const header = signatureHeader(body, [secret], now);
    expect(verifyWebhookSignature(body, header, secret, undefined, now + 300)).toBe(true);
    expect(verifyWebhookSignature(body, header, secret, undefined, now + 301)).toBe(false);
    expect(verifyWebhookSignature(body, header, secret, undefined, now - 301)).toBe(false);
    expect(verifyWebhookSignature(body, header, secret, 600, now + 500)).toBe(true);
  });

  it('rejects any changed byte of the body', () => {
    const header = signatureHeader(body, [secret], now);
    fc.assert(
      fc.property(fc.nat(body.length - 1), fc.integer({ min: 1, max: 255 }), (index, mask) => {
        const changed = Buffer.from(body);
        changed[index] ^= mask;
        return verifyWebhookSignature(changed, header, secret, 300, now) === false;
      }),
    );
  });

  it('rejects malformed headers and non-raw bodies', () => {
    const v1 = computeSignature(secret, now, body);
    for (const header of [undefined, null, '', `v1=${v1}`, `t=${now}`, `t=abc,v1=${v1}`, `t=${now},t=${now},v1=${v1}`, `t=${now},v1=${v1.slice(1)}`, `t=${now},v0=${v1}`]) {
      expect(verifyWebhookSignature(body, header as string, secret, 300, now)).toBe(false);
    }
    expect(verifyWebhookSignature(JSON.parse(body), `t=${now},v1=${v1}`, secret, 300, now)).toBe(false);
    // Upper-case hex and spaces after commas are tolerated.
    expect(verifyWebhookSignature(body, `t=${now}, v1=${v1.toUpperCase()}`, secret, 300, now)).toBe(true);
    expect(parseSignatureHeader(`t=${now},v1=${v1},v1=zz`)).toEqual({ timestamp: now, signatures: [v1] });
    // A header with no usable v1 is not of the documented form.
    expect(parseSignatureHeader(`t=${now}`)).toBeNull();
    expect(parseSignatureHeader(`t=${now},v1=zz`)).toBeNull();
  });

  it('never verifies with an empty secret (an unset environment variable), even against a header signed with one', () => {
    const header = signatureHeader(body, [''], now);
    expect(verifyWebhookSignature(body, header, '', 300, now)).toBe(false);
    expect(verifyWebhookSignature(body, header, ['', other], 300, now)).toBe(false);
  });

  it("produces headers Stripe's own verifier accepts", () => {
    const stripe = new Stripe('sk_test_unused');
    const t = Math.floor(Date.now() / 1000);
    const header = signatureHeader(body, [other, secret], t);
    expect(stripe.webhooks.constructEvent(body, header, secret)).toMatchObject({ event: 'job.completed', job_id: 'job_1' });
    expect(() => stripe.webhooks.constructEvent(body.replace('job_1', 'job_2'), header, secret)).toThrow();
  });
});
