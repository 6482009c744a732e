/**
 * A URL as it may be shown back or written down: never with a user name or password, and — for URLs a third party
 * chose (a receiver's redirect target), which end up in logs and delivery history — without query or fragment,
 * where such parties put tokens.
 */
export function redactUrl(raw: string, keep: { query: boolean }): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    if (!keep.query) {
      url.search = '';
      url.hash = '';
    }
    return url.href;
  } catch {
    // Not a URL the parser accepts (`https://user:pa/ss@host/`, `//user:token@host/p`): anything before the last `@`
    // after the scheme may be credentials, so it goes — better a URL shown short than a password shown back.
    const [, prefix, rest] = /^((?:[a-z][a-z0-9+.-]*:)?\/*)([\s\S]*)$/i.exec(raw)!;
    const at = rest.lastIndexOf('@');
    const text = at >= 0 ? prefix + rest.slice(at + 1) : raw;
    return keep.query ? text : text.replace(/[?#][\s\S]*$/, '');
  }
}
