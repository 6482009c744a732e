import { FetchError, type HttpClient, type HttpRequestSpec, type HttpResult } from '../../../../functions/core/net/fetch';
import { ATTEMPT_TIMEOUT_MS, type SeriesOptions, type SeriesStop, type SeriesTarget, runAttemptSeries } from '../../../../functions/core/webhooks/delivery';
import { verifyWebhookSignature } from '../../../../functions/core/webhooks/signature';

type Answer = number | Error | { status: number; location: string };

/** A receiver answering from a script, recording every request; time moves only when the series sleeps. */
function setup(script: Answer[]) {
  let now = Date.parse('2026-03-01T12:00:00.000Z');
  const requests: HttpRequestSpec[] = [];
  const sleeps: number[] = [];
  const http: HttpClient = {
    async request(spec): Promise<HttpResult> {
      requests.push(spec);
      const answer = script[Math.min(requests.length - 1, script.length - 1)];
      if (answer instanceof Error) throw answer;
      const status = typeof answer === 'number' ? answer : answer.status;
      const headers: Record<string, string> = typeof answer === 'number' ? {} : { location: answer.location };
      return { status, headers, body: Buffer.alloc(0), finalUrl: spec.url, redirects: [] };
    },
  };
  const deps = {
    http,
    clock: { now: () => new Date(now) },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
  };
  const run = (secrets = ['whsec_a'], opts: SeriesOptions = {}) =>
    runAttemptSeries(deps, { webhook_id: 'wh_1', url: 'https://hooks.example.com/in', secrets }, { delivery_id: '01HZZZZZZZZZZZZZZZZZZZZZZZ', event_type: 'job.completed', body: '{"event":"job.completed"}' }, opts);
  return { run, requests, sleeps };
}

const timeout = () => new FetchError('timeout', 'https://hooks.example.com/in', 'no complete answer within 10000 ms');

describe('one delivery attempt series', () => {
  it('sends the spec headers: POST, JSON, product token, event, webhook id, delivery id, timestamp, signature', async () => {
    const { run, requests } = setup([200]);
    const result = await run(['whsec_a', 'whsec_b']);
    expect(result).toMatchObject({ status: 'success', status_code: 200, error_message: null, retry_count: 0, payload_size_bytes: 25 });
    const [spec] = requests;
    expect(spec).toMatchObject({ method: 'POST', url: 'https://hooks.example.com/in', maxRedirects: 0, timeoutMs: ATTEMPT_TIMEOUT_MS, schemes: ['https:'] });
    expect(ATTEMPT_TIMEOUT_MS).toBe(10_000);
    expect(spec.headers).toMatchObject({
      'Content-Type': 'application/json',
      'User-Agent': expect.stringMatching(/^PdfService-Webhooks\//),
      'X-Webhook-Event': 'job.completed',
      'X-Webhook-Id': 'wh_1',
      'X-Webhook-Delivery-Id': '01HZZZZZZZZZZZZZZZZZZZZZZZ',
      'X-Webhook-Timestamp': '2026-03-01T12:00:00.000Z',
    });
    const t = Date.parse('2026-03-01T12:00:00.000Z') / 1000;
    expect(spec.headers!['Service-Signature']).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`));
    for (const s of ['whsec_a', 'whsec_b']) expect(verifyWebhookSignature(Buffer.from(spec.body!), spec.headers!['Service-Signature'], s, 300, t)).toBe(true);
  });

  it('retries 5xx three times after 1, 2 and 4 s, re-signing with a new t each time', async () => {
    const { run, requests, sleeps } = setup([500, 502, 503, 500]);
    expect(await run()).toMatchObject({ status: 'failed', status_code: 500, retry_count: 3 });
    expect(sleeps).toEqual([1000, 2000, 4000]);
    expect(requests).toHaveLength(4);
    const ts = requests.map((r) => Number(/^t=(\d+)/.exec(r.headers!['Service-Signature'])![1]));
    expect(ts.map((t) => t - ts[0])).toEqual([0, 1, 3, 7]);
    expect(new Set(requests.map((r) => r.headers!['X-Webhook-Delivery-Id'])).size).toBe(1);
    expect(new Set(requests.map((r) => Buffer.from(r.body!).toString())).size).toBe(1);
    expect(requests.map((r) => r.headers!['X-Webhook-Timestamp'])).toEqual(['2026-03-01T12:00:00.000Z', '2026-03-01T12:00:01.000Z', '2026-03-01T12:00:03.000Z', '2026-03-01T12:00:07.000Z']);
  });

  it.each([
    ['429 then success', [429, 200], { status: 'success', status_code: 200, retry_count: 1 }],
    ['connection refused then success', [new FetchError('connect', 'u', 'connection failed (ECONNREFUSED)'), 201], { status: 'success', status_code: 201, retry_count: 1 }],
    ['DNS failure then success', [new FetchError('dns', 'u', 'Could not resolve'), 200], { status: 'success', retry_count: 1 }],
    ['TLS failure then success', [new FetchError('tls', 'u', 'TLS failed'), 200], { status: 'success', retry_count: 1 }],
  ] as const)('retries %s', async (_what, script, expected) => {
    const { run } = setup([...script]);
    expect(await run()).toMatchObject(expected);
  });

  it('takes 299 as the acknowledgement and 300 as an unfollowed redirect, even without a Location', async () => {
    expect(await setup([299]).run()).toMatchObject({ status: 'success', status_code: 299, retry_count: 0 });
    const redirect = setup([300, 200]);
    expect(await redirect.run()).toMatchObject({ status: 'failed', status_code: 300, retry_count: 0, error_message: 'Redirect not followed: HTTP 300. Register the final URL.' });
    expect(redirect.requests).toHaveLength(1);
  });

  it('retries an error the client did not classify (not a FetchError) as a network error', async () => {
    const { run, requests } = setup([new Error('socket hang up'), 200]);
    expect(await run()).toMatchObject({ status: 'success', status_code: 200, retry_count: 1 });
    expect(requests).toHaveLength(2);
  });

  it('ends a series of timeouts as status timeout after 3 retries', async () => {
    const { run, requests } = setup([timeout()]);
    expect(await run()).toMatchObject({ status: 'timeout', status_code: null, retry_count: 3, error_message: expect.stringContaining('10 seconds') });
    expect(requests).toHaveLength(4);
  });

  it.each([
    ['a 401', 401, 'HTTP 401'],
    ['a 404', 404, 'HTTP 404'],
    ['a 410', 410, 'HTTP 410'],
    // Node's parser takes any three-digit status; the spec retries 5xx and 429 only, and 600–999 are neither.
    ['a 600', 600, 'HTTP 600'],
    ['a 999', 999, 'HTTP 999'],
    ['a 102 ending the exchange', 102, 'HTTP 102'],
  ])('does not retry %s', async (_what, status, message) => {
    const { run, requests } = setup([status, 200]);
    expect(await run()).toMatchObject({ status: 'failed', status_code: status, retry_count: 0, error_message: expect.stringContaining(message) });
    expect(requests).toHaveLength(1);
  });

  it('does not follow or retry a redirect', async () => {
    const { run, requests } = setup([{ status: 301, location: 'https://elsewhere.example.com/' }, 200]);
    const result = await run();
    expect(result).toMatchObject({ status: 'failed', status_code: 301, retry_count: 0 });
    expect(result.error_message).toMatch(/^Redirect not followed: HTTP 301 to https:\/\/elsewhere/);
    expect(requests).toHaveLength(1);
  });

  it("keeps a redirect target's credentials, query and fragment out of the record (a third party's tokens)", async () => {
    const { run } = setup([{ status: 302, location: 'https://bob:hunter2@elsewhere.example.com/next?token=abc#frag' }]);
    expect((await run()).error_message).toBe('Redirect not followed: HTTP 302 to https://elsewhere.example.com/next. Register the final URL.');
    const relative = await setup([{ status: 307, location: '/login?session=s3cr3t' }]).run();
    expect(relative.error_message).toBe('Redirect not followed: HTTP 307 to /login. Register the final URL.');
  });

  it('records a guard refusal as "Delivery blocked:" without retrying', async () => {
    const { run, requests } = setup([new FetchError('blocked', 'u', 'Blocked hooks.example.com: resolves to 10.0.0.5 (10.0.0.0/8 private)'), 200]);
    expect(await run()).toMatchObject({ status: 'failed', status_code: null, retry_count: 0, error_message: 'Delivery blocked: hooks.example.com: resolves to 10.0.0.5 (10.0.0.0/8 private)' });
    expect(requests).toHaveLength(1);
  });

  it('sends unsigned when the webhook has no secret', async () => {
    const { run, requests } = setup([200]);
    await run([]);
    expect(requests[0].headers).not.toHaveProperty('Service-Signature');
  });

  it('asks the client to decide on the status line and discard the body (a 2xx is the acknowledgement, whatever its size)', async () => {
    const { run, requests } = setup([200]);
    await run();
    expect(requests[0]).toMatchObject({ discardBody: true });
  });
});

describe('a series taken over from a worker that died', () => {
  it('goes on from the attempts already made: four attempts in all, whoever makes them', async () => {
    const { run, requests, sleeps } = setup([503]);
    const noted: number[] = [];
    const result = await run(['whsec_a'], { attemptsBefore: 2, onAttempt: async (n) => void noted.push(n) });
    // Attempts 3 and 4 here; no wait before the first (the lease already ran out), 4 s before the last.
    expect(requests).toHaveLength(2);
    expect(sleeps).toEqual([4000]);
    expect(noted).toEqual([3, 4]);
    expect(result).toMatchObject({ status: 'failed', status_code: 503, retry_count: 3 });
  });

  it('makes no attempt when all four were made, and records why', async () => {
    const { run, requests } = setup([200]);
    const result = await run(['whsec_a'], { attemptsBefore: 4 });
    expect(requests).toHaveLength(0);
    expect(result).toMatchObject({ status: 'failed', status_code: null, retry_count: 3, error_message: expect.stringContaining('all 4 attempts are used') });
  });

  it('notes every attempt after the first of a fresh series, and none when the first succeeds', async () => {
    const fresh = setup([500, 500, 200]);
    const noted: number[] = [];
    expect(await fresh.run(['whsec_a'], { onAttempt: async (n) => void noted.push(n) })).toMatchObject({ status: 'success', retry_count: 2 });
    expect(noted).toEqual([2, 3]);
    const quick = setup([200]);
    const none: number[] = [];
    await quick.run(['whsec_a'], { onAttempt: async (n) => void none.push(n) });
    expect(none).toEqual([]);
  });
});

describe('a series reloading its webhook before each retry', () => {
  it('asks before every retry, at the time of that attempt, and uses what it gets: URL and secrets', async () => {
    const { run, requests } = setup([500, 500, 200]);
    const asked: string[] = [];
    const reload = async (at: Date): Promise<SeriesTarget | SeriesStop> => {
      asked.push(at.toISOString());
      return { webhook_id: 'wh_1', url: `https://hooks.example.com/v${asked.length}`, secrets: [`whsec_v${asked.length}`] };
    };
    expect(await run(['whsec_a'], { reload })).toMatchObject({ status: 'success', retry_count: 2 });
    expect(asked).toEqual(['2026-03-01T12:00:01.000Z', '2026-03-01T12:00:03.000Z']);
    expect(requests.map((r) => r.url)).toEqual(['https://hooks.example.com/in', 'https://hooks.example.com/v1', 'https://hooks.example.com/v2']);
    requests.forEach((r, i) => {
      const t = Number(/^t=(\d+)/.exec(r.headers!['Service-Signature'])![1]);
      const secret = i === 0 ? 'whsec_a' : `whsec_v${i}`;
      expect(verifyWebhookSignature(Buffer.from(r.body!), r.headers!['Service-Signature'], secret, 300, t)).toBe(true);
      if (i > 0) expect(verifyWebhookSignature(Buffer.from(r.body!), r.headers!['Service-Signature'], 'whsec_a', 300, t)).toBe(false);
    });
  });

  it('stops when told, keeping the last attempt as the outcome and saying why', async () => {
    const { run, requests } = setup([502, 200]);
    const result = await run(['whsec_a'], { reload: async () => ({ stop: 'the webhook was deleted' }) });
    expect(requests).toHaveLength(1);
    expect(result).toMatchObject({
      status: 'failed',
      status_code: 502,
      retry_count: 0,
      error_message: 'HTTP 502 from the receiver; retries stopped: the webhook was deleted',
      delivered_at: '2026-03-01T12:00:00.000Z',
    });
  });

  it('is not asked when there is nothing to retry', async () => {
    const reload = jest.fn();
    await setup([200]).run(['whsec_a'], { reload });
    await setup([401]).run(['whsec_a'], { reload });
    expect(reload).not.toHaveBeenCalled();
  });
});
