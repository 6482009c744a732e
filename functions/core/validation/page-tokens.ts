import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidParameter } from '../errors';

const DEFAULT_REFUSAL =
  'next_token is not valid here. Send it back unchanged, to the same route with the same filters as the request that returned it.';

/**
 * `next_token` of every paginated route (GET /jobs, the webhook list, both history routes): the position of the
 * last row, sealed with an HMAC (PAGINATION_SECRET) over the route's purpose, the scope (account, parent resource,
 * filters) and the position. A token that was edited, made up, or is replayed by another account, on another parent
 * or with other filters is 400 INVALID_PARAMETER (`next_token`); the listing reads only the caller's own rows anyway.
 */
export class ScopedPageTokens {
  /**
   * `purpose` names the route family (`jobs.v1`, `webhooks.v1`, `webhook-history.v1`): it is part of the MAC, so
   * renaming it invalidates every token already issued. `refusal` is the 400's message.
   */
  constructor(
    private readonly secret: string,
    private readonly purpose: string,
    private readonly refusal: string = DEFAULT_REFUSAL,
  ) {
    if (!secret) throw new Error('page tokens need a secret');
  }

  private mac(scope: readonly unknown[], payload: string): Buffer {
    return createHmac('sha256', this.secret).update(`${this.purpose}\n${JSON.stringify(scope)}\n${payload}`).digest();
  }

  seal(scope: readonly unknown[], position: readonly string[]): string {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${payload}.${this.mac(scope, payload).toString('base64url')}`;
  }

  /** The sealed position, which must hold exactly `length` strings. */
  open(scope: readonly unknown[], token: string, length: number): string[] {
    const bad = () => invalidParameter('next_token', this.refusal);
    const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) throw bad();
    const expected = this.mac(scope, m[1]);
    const given = Buffer.from(m[2], 'base64url');
    // Canonical encoding only: the unused low bits of the last character must not make a second valid token.
    if (given.length !== expected.length || given.toString('base64url') !== m[2] || !timingSafeEqual(given, expected)) throw bad();
    try {
      const position = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
      if (!Array.isArray(position) || position.length !== length || position.some((p) => typeof p !== 'string')) throw new Error('shape');
      return position;
    } catch {
      throw bad();
    }
  }
}
