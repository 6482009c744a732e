import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../../functions/core/net/guard';
import {
  parseCreateWebhook,
  parseEvents,
  parseHistoryQuery,
  parseRotation,
  parseUpdateWebhook,
  parseWebhookListQuery,
  assertPublicWebhookHost,
  validateWebhookUrl,
} from '../../../../functions/core/webhooks/requests';
import { refusal } from '../../../support/errors';
import { runIsolated } from '../../../support/hang-guard';

const resolver = { resolve: jest.fn(async () => [{ address: '93.184.216.34', family: 4 as const }]) };
const guard = new NetworkGuard(resolver, new PrivateTargetAllowlist(undefined));
// The resolver is shared: each test sees only its own lookups.
beforeEach(() => resolver.resolve.mockClear());

describe('webhook URL rules (the literal part)', () => {
  const refused = (url: unknown) => refusal(() => validateWebhookUrl(url, guard));

  it.each([
    ['missing', undefined],
    ['not a string', ['https://example.com']],
    ['empty', ''],
    ['over 2048 characters', `https://example.com/${'x'.repeat(2029)}`],
    ['not HTTPS', 'http://example.com/hook'],
    ['relative', '/hook'],
    ['credentials', 'https://a:b@example.com/'],
    ['a password without a user name', 'https://:b@example.com/'],
    ['localhost', 'https://localhost/'],
    ['localhost with trailing dot', 'https://localhost./'],
    ['.localhost', 'https://x.localhost/'],
    ['.local', 'https://nas.local/'],
    ['.internal', 'https://db.internal/'],
    ['127.0.0.0/8', 'https://127.255.0.1/'],
    ['10/8', 'https://10.1.2.3/'],
    ['172.16/12', 'https://172.20.0.1/'],
    ['192.168/16', 'https://192.168.0.1/'],
    ['169.254/16', 'https://169.254.169.254/'],
    ['100.64/10', 'https://100.127.255.254/'],
    ['0.0.0.0', 'https://0.0.0.0/'],
    ['::1', 'https://[::1]/'],
    ['fc00::/7', 'https://[fdff::1]/'],
    ['fe80::/10', 'https://[fe80::abcd]/'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/'],
    ['IPv4-mapped hex', 'https://[::ffff:a00:1]/'],
    ['IPv4-mapped public', 'https://[::ffff:1.1.1.1]/'],
    ['hex IPv4', 'https://0x7f000001/'],
    ['decimal IPv4', 'https://2130706433/'],
    ['octal IPv4', 'https://0177.0.0.1/'],
    ['short IPv4', 'https://127.1/'],
    // Parsers drop these, so the stored URL would not be the one called.
    ['a tab in the host', 'https://exa\tmple.com/a'],
    ['a line break in the path', 'https://example.com/a\r\nb'],
    ['a NUL', 'https://example.com/a\u0000c'],
    ['a space', 'https://example.com/a b'],
    ['a leading space', ' https://example.com/'],
    ['DEL', 'https://example.com/\u007f'],
    // Parsers repair these spellings (into https://example.com/h), so the stored URL would not be the one called either.
    ['backslashes for slashes', 'https:\\\\example.com\\h'],
    ['no // after the scheme', 'https:example.com/h'],
    ['one / after the scheme', 'https:/example.com/h'],
    ['a backslash after the host', 'https://example.com\\h'],
  ])('refuses %s', (_what, url) => {
    const err = refused(url);
    expect(err.code).toBe('INVALID_WEBHOOK_URL');
    expect(typeof err.details.reason).toBe('string');
  });

  it('says which scheme it refused rather than how to respell it', () => {
    expect(refused('http://example.com/hook').details.reason).toBe('the scheme is http, not https');
    expect(refused('ftp://example.com/hook').details.reason).toBe('the scheme is ftp, not https');
  });

  it('echoes a refused URL without its user name and password', () => {
    expect(refused('http://bob:hunter2@example.com/hook?k=1').details).toMatchObject({ url: 'http://example.com/hook?k=1' });
  });

  it('accepts public HTTPS URLs up to 2048 characters without resolving them', () => {
    const long = `https://example.com/${'x'.repeat(2048 - 20)}`;
    expect(long).toHaveLength(2048);
    for (const url of ['https://example.com/hooks?x=1', 'https://8.8.8.8:8443/', 'https://[2001:4860:4860::8888]/', 'HTTPS://Example.com/h', long]) expect(validateWebhookUrl(url, guard)).toBe(url);
    expect(resolver.resolve).not.toHaveBeenCalled();
  });

  it('lets ALLOW_PRIVATE_TARGETS entries through (local tests only)', async () => {
    const local = new NetworkGuard(resolver, new PrivateTargetAllowlist('localhost:8443'));
    const register = async (url: string) => {
      const checked = validateWebhookUrl(url, local);
      await assertPublicWebhookHost(checked, local);
      return checked;
    };
    await expect(register('https://localhost:8443/hook')).resolves.toBe('https://localhost:8443/hook');
    // The literal check leaves an internal name to the resolving one when an allowlist exists; that one refuses it.
    await expect(register('https://localhost:8444/hook')).rejects.toMatchObject({ code: 'INVALID_WEBHOOK_URL' });
    // An https URL without a port is port 443, which is what an address:port entry has to name.
    const literal = new NetworkGuard(resolver, new PrivateTargetAllowlist('127.0.0.1:443'));
    expect(validateWebhookUrl('https://127.0.0.1/hook', literal)).toBe('https://127.0.0.1/hook');
  });
});

describe('webhook URL rules (the resolving part, at registration)', () => {
  const guardAnswering = (answer: () => Promise<{ address: string; family: 4 | 6 }[]>) => new NetworkGuard({ resolve: answer }, new PrivateTargetAllowlist(undefined));

  it('refuses a name with a private address among its answers', async () => {
    const guard = guardAnswering(async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.7', family: 4 }]);
    await expect(assertPublicWebhookHost('https://hooks.example.com/x', guard)).rejects.toMatchObject({ code: 'INVALID_WEBHOOK_URL', details: { reason: expect.stringContaining('10.0.0.0/8') } });
  });

  it('accepts a public name, a name that does not resolve yet, and one whose DNS is too slow (delivery checks again)', async () => {
    await expect(assertPublicWebhookHost('https://hooks.example.com/x', guardAnswering(async () => [{ address: '93.184.216.34', family: 4 }]))).resolves.toBeUndefined();
    const nxdomain = guardAnswering(async () => Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })));
    await expect(assertPublicWebhookHost('https://not-yet.example.com/x', nxdomain)).resolves.toBeUndefined();
    jest.useFakeTimers();
    try {
      const pending = assertPublicWebhookHost('https://slow.example.com/x', guardAnswering(() => new Promise(() => undefined)));
      await jest.advanceTimersByTimeAsync(2_000);
      await expect(pending).resolves.toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('lets an allowlisted private target through (ALLOW_PRIVATE_TARGETS)', async () => {
    const guard = new NetworkGuard({ resolve: async () => [{ address: '127.0.0.1', family: 4 }] }, new PrivateTargetAllowlist('hooks.test:8443'));
    await expect(assertPublicWebhookHost('https://hooks.test:8443/x', guard)).resolves.toBeUndefined();
    await expect(assertPublicWebhookHost('https://hooks.test/x', guard)).rejects.toMatchObject({ code: 'INVALID_WEBHOOK_URL' });
  });
});

describe('webhook bodies and queries', () => {
  it('defaults events to job.completed, is_active to true and name to the host', () => {
    expect(parseCreateWebhook({ url: 'https://hooks.example.com/a' }, guard)).toEqual({ url: 'https://hooks.example.com/a', name: 'hooks.example.com', events: ['job.completed'], is_active: true });
    expect(parseCreateWebhook({ url: 'https://x.example.com/', name: ' Orders ', events: ['job.failed', 'job.failed'], is_active: false }, guard)).toMatchObject({ name: 'Orders', events: ['job.failed'], is_active: false });
  });

  it('refuses empty or unknown events with INVALID_EVENTS', () => {
    // No wildcards: the spec lists the names to subscribe to, and `*` / `job.*` are none of them.
    for (const events of [[], 'job.completed', null, [null], ['job.done'], ['JOB.COMPLETED'], ['*'], ['job.*'], ['job.completed', '*'], new Array(101).fill('job.completed')]) {
      expect(refusal(() => parseEvents(events))).toMatchObject({ code: 'INVALID_EVENTS', details: { parameter: 'events' } });
    }
    expect(parseEvents(['job.timeout', 'mailmerge.campaign.cancelled'])).toEqual(['job.timeout', 'mailmerge.campaign.cancelled']);
  });

  it('refuses more than 100 names before reading them (a 6 MB body of 1.5 million names took 15 s)', () => {
    const outcome = runIsolated(`
      const { parseEvents } = load('functions/core/webhooks/requests.ts');
      try { parseEvents(new Array(1_500_000).fill('x')); console.log('null'); } catch (err) { console.log(JSON.stringify({ code: err.code, details: err.details })); }
    `) as { code: string; details: Record<string, unknown> };
    expect(outcome).toMatchObject({ code: 'INVALID_EVENTS', details: { max_events: 100 } });
    expect(refusal(() => parseEvents(new Array(101).fill('job.completed'))).code).toBe('INVALID_EVENTS');
    expect(parseEvents(new Array(100).fill('job.completed'))).toEqual(['job.completed']);
  });

  it('takes any subset of fields on update, but not none', () => {
    expect(parseUpdateWebhook({ is_active: false, unknown: 1 }, guard)).toEqual({ is_active: false });
    expect(refusal(() => parseUpdateWebhook({}, guard)).code).toBe('INVALID_PARAMETER');
    expect(refusal(() => parseUpdateWebhook('x', guard)).code).toBe('INVALID_PARAMETER');
    expect(refusal(() => parseUpdateWebhook({ name: null }, guard)).details.parameter).toBe('name');
  });

  it('reads grace_period_seconds: whole numbers 0 to 604800, default 86400', () => {
    expect(parseRotation(undefined)).toEqual({ graceSeconds: 86400 });
    expect(parseRotation({})).toEqual({ graceSeconds: 86400 });
    expect(parseRotation({ grace_period_seconds: 0 })).toEqual({ graceSeconds: 0 });
    expect(parseRotation({ grace_period_seconds: 604800 })).toEqual({ graceSeconds: 604800 });
    for (const g of [-1, 604801, 2.5, '10', false, Number.NaN]) expect(refusal(() => parseRotation({ grace_period_seconds: g })).details.parameter).toBe('grace_period_seconds');
    expect(refusal(() => parseRotation([])).code).toBe('INVALID_PARAMETER');
  });

  it('validates list and history queries', () => {
    expect(parseWebhookListQuery({})).toEqual({ limit: 50, nextToken: undefined, event: undefined });
    expect(parseWebhookListQuery({ limit: '100', is_active: 'false', event: 'job.failed', next_token: 'abc' })).toEqual({ limit: 100, isActive: false, event: 'job.failed', nextToken: 'abc' });
    expect(parseHistoryQuery({ status: 'timeout', event_type: 'bulk.job.partial' })).toMatchObject({ status: 'timeout', eventType: 'bulk.job.partial', limit: 50 });
    for (const [q, parameter] of [[{ limit: '101' }, 'limit'], [{ limit: '1.5' }, 'limit'], [{ is_active: '1' }, 'is_active'], [{ event: 'x' }, 'event']] as const) {
      expect(refusal(() => parseWebhookListQuery(q as Record<string, string>)).details.parameter).toBe(parameter);
    }
    for (const [q, parameter] of [[{ status: 'pending' }, 'status'], [{ event_type: 'job' }, 'event_type'], [{ limit: '0' }, 'limit']] as const) {
      expect(refusal(() => parseHistoryQuery(q as Record<string, string>)).details.parameter).toBe(parameter);
    }
  });
});
