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
    // Not a URL the parser accepts: remove what still reads as credentials (and the query, when asked).
    const text = raw.replace(/^([a-z][a-z0-9+.-]*:\/*)[^/?#]*@/i, '$1');
    return keep.query ? text : text.replace(/[?#][\s\S]*$/, '');
  }
}
