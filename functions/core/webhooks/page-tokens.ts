import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidParameter } from '../errors';

/**
 * `next_token` of the webhook list and the history routes, as GET /jobs does it (core/jobs/list.ts): the
 * position of the last row, sealed with an HMAC (PAGINATION_SECRET) over the route, the account, the parent
 * resource and the filters. A token that was edited, made up, or is replayed by another account, on another
 * webhook or job, or with other filters is 400 INVALID_PARAMETER (`next_token`).
 */
export class ScopedPageTokens {
  constructor(
    private readonly secret: string,
    private readonly purpose: string,
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

  open(scope: readonly unknown[], token: string, length: number): string[] {
    const bad = () =>
      invalidParameter('next_token', 'next_token is not valid here. Send it back unchanged, to the same route with the same filters as the request that returned it.');
    const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) throw bad();
    const expected = this.mac(scope, m[1]);
    const given = Buffer.from(m[2], 'base64url');
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
