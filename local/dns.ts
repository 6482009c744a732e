import { isIP } from 'node:net';
import { systemResolver } from '../functions/adapters/net/dns-resolver';
import type { Resolver } from '../functions/core/net/ports';

/**
 * LOCAL_DNS_OVERRIDES (tests only): `name=address` pairs, comma-separated, answered instead of DNS — e.g.
 * `hooks.example.com=127.0.0.1` makes a public-looking name resolve to loopback, so tests can show that the
 * network guard refuses a name that resolves privately at connection time. The guard still judges every
 * answer; this changes what DNS says, never what is allowed. Unset: the system resolver.
 */
export function resolverFromOverrides(spec: string | undefined): Resolver | undefined {
  if (!spec) return undefined;
  const table = new Map<string, string>();
  for (const entry of spec.split(',').map((e) => e.trim()).filter(Boolean)) {
    const [name, address] = entry.split('=').map((p) => p.trim());
    if (!name || !address || !isIP(address)) throw new Error(`LOCAL_DNS_OVERRIDES entry "${entry}" is not name=address`);
    table.set(name.toLowerCase(), address);
  }
  return {
    async resolve(hostname) {
      const address = table.get(hostname.toLowerCase());
      return address ? [{ address, family: isIP(address) === 6 ? 6 : 4 }] : systemResolver.resolve(hostname);
    },
  };
}
