import { resolverFromOverrides } from '../../../local/dns';

describe('LOCAL_DNS_OVERRIDES (tests only)', () => {
  it('answers listed names with their address, case-insensitively', async () => {
    const resolver = resolverFromOverrides('hooks.example.com=127.0.0.1, v6.example.com=::1')!;
    expect(await resolver.resolve('Hooks.Example.com')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await resolver.resolve('v6.example.com')).toEqual([{ address: '::1', family: 6 }]);
  });

  it('is off when unset and refuses malformed entries', () => {
    expect(resolverFromOverrides(undefined)).toBeUndefined();
    expect(resolverFromOverrides('')).toBeUndefined();
    expect(() => resolverFromOverrides('hooks.example.com')).toThrow(/name=address/);
    expect(() => resolverFromOverrides('hooks.example.com=not-an-ip')).toThrow(/name=address/);
  });
});
