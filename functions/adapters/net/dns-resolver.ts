import { Resolver as DnsClient } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { ResolvedAddress, Resolver } from '../../core/net/ports';

export interface SystemResolverOptions {
  /** First wait for a DNS server's answer; c-ares doubles it on each retry (default 1.5 s). */
  timeoutMs?: number;
  /** Attempts per server (default 2): with the defaults a name that gets no answer fails after ~4.5 s. */
  tries?: number;
  /** DNS servers to ask instead of the system's (tests). */
  servers?: string[];
  /** The hosts file, consulted first as getaddrinfo would (default /etc/hosts; null: none). */
  hostsFile?: string | null;
}

/**
 * The system's DNS servers, asked through c-ares rather than getaddrinfo. getaddrinfo blocks one of the four threads
 * of libuv's pool — which file, zlib and crypto work share — for as long as a server takes to answer, and cannot be
 * called off: a document asking for a few names whose servers never answer would stall the whole process. c-ares
 * queries run on the event loop, each with its own timeout. The hosts file is read first, as getaddrinfo does.
 */
export class SystemResolver implements Resolver {
  private readonly client: DnsClient;
  private hosts?: Map<string, ResolvedAddress[]>;

  constructor(private readonly options: SystemResolverOptions = {}) {
    this.client = new DnsClient({ timeout: options.timeoutMs ?? 1500, tries: options.tries ?? 2 });
    if (options.servers) this.client.setServers(options.servers);
  }

  /** Every address the name has: the hosts file's, else IPv4 then IPv6 answers. A name with neither gives []. */
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const listed = this.hostsFile().get(name);
    if (listed) return listed;
    const [v4, v6] = await Promise.allSettled([this.client.resolve4(name), this.client.resolve6(name)]);
    const addresses: ResolvedAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (addresses.length > 0) return addresses;
    const failures = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as { code?: string }] : []));
    // The name exists but has no address records: an empty answer. Otherwise the first real failure (ENOTFOUND, ETIMEOUT, …).
    const failure = failures.find((f) => f.code !== 'ENODATA');
    if (failure) throw failure;
    return [];
  }

  private hostsFile(): Map<string, ResolvedAddress[]> {
    if (!this.hosts) this.hosts = this.options.hostsFile === null ? new Map() : readHostsFile(this.options.hostsFile ?? '/etc/hosts');
    return this.hosts;
  }
}

/** `address name [aliases…]` lines of a hosts file, by lower-case name (an unreadable file: none). */
export function readHostsFile(file: string): Map<string, ResolvedAddress[]> {
  const table = new Map<string, ResolvedAddress[]>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return table;
  }
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = isIP(address ?? '');
    if (family === 0) continue;
    for (const name of names) {
      const key = name.toLowerCase();
      const entries = table.get(key) ?? [];
      if (!entries.some((e) => e.address === address)) entries.push({ address, family: family as 4 | 6 });
      table.set(key, entries);
    }
  }
  return table;
}

/** The resolver every function uses. */
export const systemResolver: Resolver = new SystemResolver();
