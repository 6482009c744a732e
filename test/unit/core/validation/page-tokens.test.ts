import { ServiceError } from '../../../../functions/core/errors';
import { ScopedPageTokens } from '../../../../functions/core/validation/page-tokens';
import { refusal } from '../../../support/errors';

describe('ScopedPageTokens', () => {
  const tokens = new ScopedPageTokens('secret-for-tests', 'webhook-history.v1');
  const scope = ['acc_1', 'webhook:wh_1', null, null];

  it('round-trips a position within its scope', () => {
    const token = tokens.seal(scope, ['01J0000000000000000000000A']);
    expect(tokens.open(scope, token, 1)).toEqual(['01J0000000000000000000000A']);
  });

  it('refuses edited or made-up tokens, other scopes, other purposes and other keys', () => {
    const token = tokens.seal(scope, ['01J0000000000000000000000A']);
    const [payload, mac] = token.split('.');
    const edited = `${Buffer.from(JSON.stringify(['01J0000000000000000000000B'])).toString('base64url')}.${mac}`;
    const cases: [ScopedPageTokens, unknown[], string][] = [
      [tokens, scope, edited],
      [tokens, scope, `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`],
      [tokens, scope, 'garbage'],
      [tokens, ['acc_2', 'webhook:wh_1', null, null], token],
      [tokens, ['acc_1', 'webhook:wh_2', null, null], token],
      [tokens, ['acc_1', 'webhook:wh_1', 'failed', null], token],
      [new ScopedPageTokens('secret-for-tests', 'webhooks.v1'), scope, token],
      [new ScopedPageTokens('another-secret', 'webhook-history.v1'), scope, token],
    ];
    for (const [t, s, tok] of cases) {
      const err = refusal(() => t.open(s, tok, 1));
      expect(err).toBeInstanceOf(ServiceError);
      expect([err.code, err.details.parameter]).toEqual(['INVALID_PARAMETER', 'next_token']);
    }
    // A position of the wrong length is refused even with a valid MAC.
    expect(() => tokens.open(scope, tokens.seal(scope, ['a', 'b']), 1)).toThrow(ServiceError);
  });

  it('refuses with the message the route gives, or a general one', () => {
    expect(refusal(() => tokens.open(scope, 'garbage', 1)).message).toMatch(/^next_token is not valid here\./);
    expect(refusal(() => new ScopedPageTokens('k', 'p', 'Custom message.').open(scope, 'garbage', 1)).message).toBe('Custom message.');
  });

  it('needs a secret', () => {
    expect(() => new ScopedPageTokens('', 'jobs.v1')).toThrow('page tokens need a secret');
  });
});
