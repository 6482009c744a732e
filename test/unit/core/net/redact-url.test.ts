import { redactUrl } from '../../../../functions/core/net/redact-url';

describe('redactUrl', () => {
  it('drops the user name and password and keeps the rest when asked to', () => {
    expect(redactUrl('https://user:pa55@example.com:8443/a/b?x=1#top', { query: true })).toBe('https://example.com:8443/a/b?x=1#top');
    expect(redactUrl('http://only-user@example.com/', { query: true })).toBe('http://example.com/');
  });

  it('drops query and fragment for URLs a third party chose', () => {
    expect(redactUrl('https://user:pa55@example.com/next?token=abc#f', { query: false })).toBe('https://example.com/next');
  });

  it('still removes credentials and queries from strings the URL parser refuses', () => {
    expect(redactUrl('https://user:pa55@exa mple.com/x?t=1', { query: true })).toBe('https://exa mple.com/x?t=1');
    expect(redactUrl('https://user:pa55@exa mple.com/x?t=1', { query: false })).toBe('https://exa mple.com/x');
    expect(redactUrl('/relative/path?session=abc', { query: false })).toBe('/relative/path');
    expect(redactUrl('not a url at all', { query: true })).toBe('not a url at all');
    // Credentials with the characters that stop a simple match: a slash or a hash in the password, no scheme.
    expect(redactUrl('https://admin:pa/ss@hooks.example.com/x', { query: true })).toBe('https://hooks.example.com/x');
    expect(redactUrl('https://admin:p#ss@hooks.example.com/x?k=1', { query: false })).toBe('https://hooks.example.com/x');
    expect(redactUrl('//user:tok@other.example/p?code=1', { query: false })).toBe('//other.example/p');
    expect(redactUrl('https://admin:pa/ss@hooks.example.com/x', { query: true })).not.toContain('pa/ss');
  });
});
