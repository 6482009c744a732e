import { classifyAddress } from '../../../../functions/core/net/address-rules';
import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { BlockedTargetError, NetworkGuard, ResolveError } from '../../../../functions/core/net/guard';
import { normalizeHost } from '../../../../functions/core/net/host-rules';
import type { ResolvedAddress, Resolver } from '../../../../functions/core/net/ports';

function stubResolver(answers: Record<string, ResolvedAddress[] | Error>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async resolve(host) {
      calls.push(host);
      const a = answers[host];
      if (!a) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      if (a instanceof Error) throw a;
      return a;
    },
  };
}
const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

describe('address rules', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.255',
    '198.18.0.1', '198.19.255.255', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.255', '240.0.0.1', '255.255.255.255', '192.0.2.1', '198.51.100.7', '203.0.113.9', '192.0.0.8', '192.88.99.1',
    '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:8.8.8.8', '::127.0.0.1', '::8.8.8.8',
    '64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b:1::1', '2002:7f00:1::', '2002:0808:0808::1', '2001:0:4136:e378::1', '2001:db8::1', '100::1', '3fff::1', '::ffff:0:7f00:1',
    '2002:c0a8:101::1', '2002:a9fe:a9fe::1', '1fff:ffff::1', '4000::1',
  ])('refuses %s', (ip) => {
    expect(classifyAddress(ip).allowed).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '198.20.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2000::1', '3ffe:1::1'])('allows %s', (ip) => {
    expect(classifyAddress(ip).allowed).toBe(true);
  });

  // The range is what the customer is told ("address is …"), so an embedded-IPv4 form is named as one, not as some other class.
  it.each([
    ['::ffff:127.0.0.1', /IPv4-mapped/],
    ['::ffff:0:7f00:1', /IPv4-translated/],
    ['::127.0.0.1', /IPv4-compatible/],
    ['64:ff9b::7f00:1', /NAT64/],
    ['2002:c0a8:101::1', /6to4/],
  ])('names the range that refuses %s', (ip, range) => {
    expect(classifyAddress(ip).range).toMatch(range);
  });
});

describe('host normalisation', () => {
  it.each([
    ['0x7f000001', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['LOCALHOST.', 'localhost'],
    ['Example.COM..', 'example.com'],
    ['ex%61mple.com', 'example.com'],
  ])('%s → %s', (raw, expected) => {
    expect(normalizeHost(raw)).toBe(expected);
  });

  it('rejects hosts carrying userinfo or paths', () => {
    expect(normalizeHost('evil.com@127.0.0.1')).toBeNull();
    expect(normalizeHost('a/b')).toBeNull();
    expect(normalizeHost('')).toBeNull();
  });
});

describe('NetworkGuard', () => {
  const guard = (answers: Record<string, ResolvedAddress[] | Error>, allow = '') => {
    const resolver = stubResolver(answers);
    return { resolver, guard: new NetworkGuard(resolver, new PrivateTargetAllowlist(allow)) };
  };

  it.each(['localhost', 'LocalHost.', 'printer.local', 'app.localhost', 'metadata.google.internal', 'intranet', '0x7f000001', '2130706433', '0177.0.0.1', '127.1', '[::ffff:127.0.0.1]', '[::1]', '169.254.169.254', '[fe80::1]'])(
    'refuses %s without resolving it',
    async (host) => {
      const { guard: g, resolver } = guard({});
      await expect(g.approve(host, 443)).rejects.toBeInstanceOf(BlockedTargetError);
      expect(resolver.calls).toEqual([]);
    },
  );

  it.each([0, -1, 65536, 1.5])('refuses port %s of a public name before resolving it', async (port) => {
    const { guard: g, resolver } = guard({ 'example.com': [v4('93.184.216.34')] });
    await expect(g.approve('example.com', port)).rejects.toThrow(/port .* is not valid/);
    expect(resolver.calls).toEqual([]);
  });

  it('refuses a public-looking name that resolves to a private address', async () => {
    const { guard: g } = guard({ 'rebind.example.com': [v4('127.0.0.1')] });
    await expect(g.approve('rebind.example.com', 443)).rejects.toThrow(/resolves to an address in 127\.0\.0\.0\/8/);
    // The range, not the address the service's resolver answered.
    await expect(g.approve('rebind.example.com', 443)).rejects.not.toThrow(/127\.0\.0\.1/);
  });

  it('refuses a name when any of its answers is private (mixed answers fail closed)', async () => {
    const { guard: g } = guard({ 'mixed.example.com': [v4('93.184.216.34'), v4('10.0.0.5')] });
    await expect(g.approve('mixed.example.com', 443)).rejects.toBeInstanceOf(BlockedTargetError);
    const { guard: g6 } = guard({ 'mixed6.example.com': [v6('2606:4700::1'), v6('::ffff:169.254.169.254')] });
    await expect(g6.approve('mixed6.example.com', 443)).rejects.toBeInstanceOf(BlockedTargetError);
  });

  it('reports resolver failures as ResolveError', async () => {
    const { guard: g } = guard({ 'broken.example.com': Object.assign(new Error('SERVFAIL'), { code: 'ESERVFAIL' }) });
    await expect(g.approve('broken.example.com', 443)).rejects.toMatchObject({ name: 'ResolveError', code: 'ESERVFAIL' });
    await expect(g.approve('nxdomain.example.com', 443)).rejects.toBeInstanceOf(ResolveError);
  });

  it('approves public names and returns exactly the checked addresses, resolving once', async () => {
    const { guard: g, resolver } = guard({ 'example.com': [v4('93.184.216.34'), v6('2606:2800:220:1::1')] });
    const approved = await g.approve('Example.com.', 443);
    expect(approved).toEqual({ host: 'example.com', port: 443, addresses: [v4('93.184.216.34'), v6('2606:2800:220:1::1')] });
    expect(resolver.calls).toEqual(['example.com']);
  });

  it('lets ALLOW_PRIVATE_TARGETS entries through, and only those', async () => {
    const { guard: g } = guard({ localhost: [v4('127.0.0.1')], 'svc.test.example': [v4('10.1.1.1')] }, 'localhost:8443, 10.1.1.1');
    await expect(g.approve('localhost', 8443)).resolves.toMatchObject({ addresses: [v4('127.0.0.1')] });
    await expect(g.approve('localhost', 9000)).rejects.toBeInstanceOf(BlockedTargetError);
    await expect(g.approve('10.0.0.1', 8443)).rejects.toBeInstanceOf(BlockedTargetError);
    await expect(g.approve('svc.test.example', 25)).resolves.toEqual({ host: 'svc.test.example', port: 25, addresses: [v4('10.1.1.1')] });
    expect(() => new PrivateTargetAllowlist('http://x')).toThrow();
  });

  it('reads a localhost entry as its loopback addresses too', async () => {
    const { guard: g } = guard({}, 'localhost:8443');
    await expect(g.approve('127.0.0.1', 8443)).resolves.toMatchObject({ addresses: [v4('127.0.0.1')] });
    await expect(g.approve('[::1]', 8443)).resolves.toMatchObject({ addresses: [v6('::1')] });
    await expect(g.approve('127.0.0.2', 8443)).rejects.toBeInstanceOf(BlockedTargetError);
  });

  it('lets a name through to the listed addresses among its answers, and connects to those only', async () => {
    const answers = { localhost: [v6('::1'), v4('127.0.0.1')], 'svc.example.com': [v4('93.184.216.34'), v4('10.1.1.1')], 'nas.local': new Error('ENOTFOUND') };
    const { guard: g } = guard(answers, '127.0.0.1:8443, 10.1.1.1');
    // An internal name is resolved only because an allowlist exists, and passes only to a listed address.
    await expect(g.approve('localhost', 8443)).resolves.toEqual({ host: 'localhost', port: 8443, addresses: [v4('127.0.0.1')] });
    await expect(g.approve('localhost', 9000)).rejects.toThrow(/host name localhost is internal/);
    await expect(g.approve('nas.local', 8443)).rejects.toBeInstanceOf(BlockedTargetError);
    await expect(g.approve('svc.example.com', 443)).resolves.toMatchObject({ addresses: [v4('10.1.1.1')] });
  });

  it('matches ALLOW_PRIVATE_TARGETS entries by the whole host, not by a suffix of it', async () => {
    const answers = { 'evil.localhost': [v4('10.0.0.5')], 'badexample.com': [v4('10.0.0.5')] };
    const { guard: g } = guard(answers, 'localhost:8443, example.com');
    await expect(g.approve('evil.localhost', 8443)).rejects.toBeInstanceOf(BlockedTargetError);
    await expect(g.approve('badexample.com', 443)).rejects.toBeInstanceOf(BlockedTargetError);
  });

  it('reports a name with no answers as ResolveError ENODATA, and an internal one as blocked', async () => {
    const { guard: g } = guard({ 'empty.example.com': [], 'empty.local': [] }, '10.1.1.1');
    await expect(g.approve('empty.example.com', 443)).rejects.toMatchObject({ name: 'ResolveError', code: 'ENODATA' });
    await expect(g.approve('empty.local', 443)).rejects.toBeInstanceOf(BlockedTargetError);
  });

  it('checks literals without DNS for stored URLs', () => {
    const { guard: g } = guard({});
    expect(g.checkLiteral('hooks.example.com', 443)).toEqual({ allowed: true });
    expect(g.checkLiteral('[::ffff:10.0.0.1]', 443).allowed).toBe(false);
    expect(g.checkLiteral('service.internal', 443).allowed).toBe(false);
    // With an allowlist an internal name may resolve to a listed address, which only `approve` can tell.
    expect(guard({}, '127.0.0.1:8443').guard.checkLiteral('localhost', 8443)).toEqual({ allowed: true });
  });
});
