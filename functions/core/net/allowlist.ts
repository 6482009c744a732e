import { normalizeHost } from './host-rules';

/** What `localhost` names on every machine: an entry for it also covers these addresses. */
const LOOPBACK_OF_LOCALHOST = ['127.0.0.1', '::1'];

/**
 * ALLOW_PRIVATE_TARGETS: comma-separated `host` or `host:port` entries (IPv6 as `[::1]:8443`) that the rules
 * let through. It is the only way past them; the CDK app never sets it.
 */
export class PrivateTargetAllowlist {
  private readonly entries: { host: string; port: number | null }[];

  constructor(spec: string | undefined) {
    this.entries = (spec ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)
      .flatMap((entry) => {
        const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(entry);
        const host = m ? normalizeHost(m[1]) : null;
        if (!m || !host) throw new Error(`ALLOW_PRIVATE_TARGETS entry "${entry}" is not host or host:port (IPv6 as [::1] or [::1]:8443)`);
        const port = m[2] ? Number(m[2]) : null;
        if (port !== null && (port < 1 || port > 65_535)) throw new Error(`ALLOW_PRIVATE_TARGETS entry "${entry}" has no usable port (1-65535)`);
        return [host, ...(host === 'localhost' ? LOOPBACK_OF_LOCALHOST : [])].map((h) => ({ host: h, port }));
      });
  }

  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** True when `host` (a normalised name or address) and `port` match an entry. */
  allows(host: string, port: number): boolean {
    return this.entries.some((e) => e.host === host && (e.port === null || e.port === port));
  }
}
