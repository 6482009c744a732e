import { isIP } from 'node:net';
import { classifyAddress } from './address-rules';
import type { PrivateTargetAllowlist } from './allowlist';
import { classifyHostName, normalizeHost } from './host-rules';
import type { ResolvedAddress, Resolver } from './ports';

/** A target the rules refuse; `reason` is safe to show to the customer. */
export class BlockedTargetError extends Error {
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`Blocked ${host}: ${reason}`);
    this.name = 'BlockedTargetError';
  }
}

/** The name did not resolve (or the resolver failed). */
export class ResolveError extends Error {
  constructor(
    readonly host: string,
    readonly code: string,
  ) {
    super(`Could not resolve ${host} (${code})`);
    this.name = 'ResolveError';
  }
}

export interface ApprovedTarget {
  /** Normalised host name (or address literal). */
  host: string;
  port: number;
  /** The checked addresses; connect only to these (pinning defeats DNS rebinding). */
  addresses: ResolvedAddress[];
}

/**
 * The one network guard for every connection the service makes on a customer's behalf (URL input,
 * page sub-requests through the render proxy, webhook deliveries; not service email, which nodemailer sends
 * straight to the operator's MAIL_SMTP_URL server). It decides on the addresses
 * that will actually be connected to: the name is resolved once, every answer is checked (one private
 * answer refuses the whole name, unless ALLOW_PRIVATE_TARGETS lists some answers: then only those are
 * returned), and callers connect to the returned addresses, never resolving again.
 */
export class NetworkGuard {
  constructor(
    private readonly resolver: Resolver,
    private readonly allowlist: PrivateTargetAllowlist,
  ) {}

  /** Checks a host name or address literal and port; throws BlockedTargetError or ResolveError. */
  async approve(rawHost: string, port: number): Promise<ApprovedTarget> {
    const host = normalizeHost(rawHost);
    if (!host) throw new BlockedTargetError(rawHost, 'not a valid host');
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new BlockedTargetError(host, `port ${port} is not valid`);
    const allowlisted = this.allowlist.allows(host, port);

    let nameRefusal: string | null = null;
    if (!allowlisted) {
      const name = classifyHostName(host);
      // Such a name gets through only to an address the allowlist names; without an allowlist it is not even resolved.
      if (!name.allowed && this.allowlist.empty) throw new BlockedTargetError(host, name.reason!);
      if (!name.allowed) nameRefusal = name.reason!;
    }

    let addresses: ResolvedAddress[];
    if (isIP(host)) {
      addresses = [{ address: host, family: isIP(host) as 4 | 6 }];
    } else {
      try {
        addresses = await this.resolver.resolve(host);
      } catch (err) {
        if (nameRefusal) throw new BlockedTargetError(host, nameRefusal);
        throw new ResolveError(host, (err as { code?: string }).code ?? 'ERESOLVE');
      }
      if (addresses.length === 0) throw nameRefusal ? new BlockedTargetError(host, nameRefusal) : new ResolveError(host, 'ENODATA');
    }

    if (!allowlisted) {
      // Answers the allowlist names are the operator's own targets: when there are any, only they are connected to.
      const listed = addresses.filter(({ address }) => this.allowlist.allows(address, port));
      if (listed.length > 0) return { host, port, addresses: listed };
      if (nameRefusal) throw new BlockedTargetError(host, nameRefusal);
      for (const { address } of addresses) {
        const verdict = classifyAddress(address);
        if (!verdict.allowed) {
          // Not the address itself: what this service's resolver answers (a private zone, in a VPC) is not the caller's to learn.
          throw new BlockedTargetError(host, isIP(host) ? `address is ${verdict.range}` : `resolves to an address in ${verdict.range}`);
        }
      }
    }
    return { host, port, addresses };
  }

  /**
   * The syntactic part alone (no DNS): for validating a URL when it is stored (webhook registration),
   * before the real check at connection time.
   */
  checkLiteral(rawHost: string, port: number): { allowed: true } | { allowed: false; reason: string } {
    const host = normalizeHost(rawHost);
    if (!host) return { allowed: false, reason: 'not a valid host' };
    // The same port rule as `approve`: a URL stored now must not be refused only when it is first called.
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { allowed: false, reason: `port ${port} is not valid` };
    if (this.allowlist.allows(host, port)) return { allowed: true };
    const name = classifyHostName(host);
    // With an allowlist, an internal name may resolve to a listed address: `approve` decides once it has resolved.
    if (!name.allowed) return this.allowlist.empty ? { allowed: false, reason: name.reason! } : { allowed: true };
    if (isIP(host)) {
      const verdict = classifyAddress(host);
      if (!verdict.allowed) return { allowed: false, reason: `address is ${verdict.range}` };
    }
    return { allowed: true };
  }
}
