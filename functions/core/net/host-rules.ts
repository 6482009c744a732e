import { isIP } from 'node:net';

/**
 * Host names are judged after the same normalisation a client applies: the WHATWG URL parser turns
 * `0x7f000001`, `2130706433`, `0177.0.0.1` and `127.1` into `127.0.0.1`, lower-cases, applies IDNA and
 * percent-decoding; trailing dots are dropped (`localhost.` is `localhost`).
 */
export function normalizeHost(host: string): string | null {
  const trimmed = host.trim();
  if (!trimmed || /[\s/?#@\\]/.test(trimmed.replace(/^\[.*\]$/, ''))) return null;
  let hostname: string;
  try {
    hostname = new URL(`https://${trimmed.includes(':') && !trimmed.startsWith('[') && isIP(trimmed) === 6 ? `[${trimmed}]` : trimmed}/`).hostname;
  } catch {
    return null;
  }
  hostname = hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  return hostname || null;
}

/** Names that always mean "inside": refused whatever they resolve to. */
const BLOCKED_SUFFIXES = ['.localhost', '.local', '.internal', '.localdomain', '.home.arpa', '.in-addr.arpa', '.ip6.arpa', '.intranet', '.corp', '.lan'];

export function classifyHostName(hostname: string): { allowed: boolean; reason?: string } {
  if (isIP(hostname)) return { allowed: true };
  if (hostname === 'localhost' || BLOCKED_SUFFIXES.some((s) => hostname.endsWith(s))) {
    return { allowed: false, reason: `host name ${hostname} is internal` };
  }
  // Single-label names resolve through search domains to internal hosts ("metadata", "intranet").
  if (!hostname.includes('.')) return { allowed: false, reason: `single-label host name ${hostname}` };
  return { allowed: true };
}
