import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses the service may connect to on a customer's behalf. Everything that is not plainly
 * public unicast is refused: IPv4 private, loopback, link-local, CGNAT, benchmark, documentation,
 * multicast, reserved and "this network" ranges; for IPv6 only global unicast (2000::/3) is allowed, minus
 * the ranges inside it that embed IPv4 or are special (Teredo, 6to4, documentation, benchmarking, ORCHID).
 * IPv4-mapped, IPv4-compatible, NAT64 and translated IPv6 forms are refused outright rather than unwrapped.
 */
export interface AddressVerdict {
  allowed: boolean;
  /** The named range that refused the address. */
  range?: string;
}

const V4_DENY: [string, number, string][] = [
  ['0.0.0.0', 8, 'this network (unspecified)'],
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1)'],
  ['192.31.196.0', 24, 'AS112'],
  ['192.52.193.0', 24, 'AMT'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['192.175.48.0', 24, 'AS112'],
  ['198.18.0.0', 15, 'benchmarking (RFC 2544)'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2)'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved (incl. broadcast)'],
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const V4_RANGES = V4_DENY.map(([base, bits, name]) => {
  const size = 2 ** (32 - bits);
  const start = Math.floor(v4ToInt(base) / size) * size;
  return { start, end: start + size - 1, name: `${base}/${bits} ${name}` };
});

export function classifyIpv4(ip: string): AddressVerdict {
  const n = v4ToInt(ip);
  const hit = V4_RANGES.find((r) => n >= r.start && n <= r.end);
  return hit ? { allowed: false, range: hit.name } : { allowed: true };
}

/** Expands an IPv6 address (with optional embedded IPv4 tail) to 8 16-bit groups. */
export function ipv6Groups(ip: string): number[] {
  let text = ip.replace(/^\[|\]$/g, '').split('%')[0];
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4Tail) {
    const n = v4ToInt(v4Tail[1]);
    text = `${text.slice(0, -v4Tail[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail !== undefined ? 8 - h.length - t.length : 0;
  return [...h, ...Array(fill).fill('0'), ...t].map((g) => parseInt(g, 16));
}

const V6_DENY_IN_GLOBAL: [number[], number, string][] = [
  [[0x2001, 0x0000], 32, 'Teredo (2001::/32)'],
  [[0x2001, 0x0002, 0x0000], 48, 'benchmarking (2001:2::/48)'],
  [[0x2001, 0x0010], 28, 'ORCHID (2001:10::/28)'],
  [[0x2001, 0x0020], 28, 'ORCHIDv2 (2001:20::/28)'],
  [[0x2001, 0x0db8], 32, 'documentation (2001:db8::/32)'],
  [[0x2002], 16, '6to4 (2002::/16)'],
  [[0x3fff, 0x0000], 20, 'documentation (3fff::/20)'],
];

function inPrefix(groups: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i * 16 < bits; i++) {
    const take = Math.min(16, bits - i * 16);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((groups[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

export function classifyIpv6(ip: string): AddressVerdict {
  const g = ipv6Groups(ip);
  if (g.length !== 8 || g.some((x) => Number.isNaN(x))) return { allowed: false, range: 'unparseable IPv6' };
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return { allowed: false, range: 'IPv4-mapped (::ffff:0:0/96)' };
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) return { allowed: false, range: 'IPv4-translated (::ffff:0:0:0/96)' };
  if (g.slice(0, 6).every((x) => x === 0)) {
    if (g[6] === 0 && g[7] === 0) return { allowed: false, range: 'unspecified (::)' };
    if (g[6] === 0 && g[7] === 1) return { allowed: false, range: 'loopback (::1)' };
    return { allowed: false, range: 'IPv4-compatible (::/96)' };
  }
  if (inPrefix(g, [0x0064, 0xff9b], 32) && g.slice(2, 6).every((x) => x === 0)) return { allowed: false, range: 'NAT64 (64:ff9b::/96)' };
  // Only global unicast (2000::/3) may be reached; this refuses ULA fc00::/7, link-local fe80::/10,
  // site-local fec0::/10, multicast ff00::/8, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, discard 100::/64, …
  if ((g[0] & 0xe000) !== 0x2000) {
    const named = (g[0] & 0xfe00) === 0xfc00 ? 'unique local (fc00::/7)' : (g[0] & 0xffc0) === 0xfe80 ? 'link-local (fe80::/10)' : (g[0] & 0xff00) === 0xff00 ? 'multicast (ff00::/8)' : 'not global unicast';
    return { allowed: false, range: named };
  }
  const hit = V6_DENY_IN_GLOBAL.find(([prefix, bits]) => inPrefix(g, prefix, bits));
  return hit ? { allowed: false, range: hit[2] } : { allowed: true };
}

export function classifyAddress(ip: string): AddressVerdict {
  const bare = ip.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) return classifyIpv4(bare);
  if (isIPv6(bare.split('%')[0])) return classifyIpv6(bare);
  return { allowed: false, range: 'not an IP address' };
}
