/** Half of a surrogate pair (JSON lets a string say "\ud800"): no character at all. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with every half surrogate pair replaced by U+FFFD, as a browser decoding bytes would show it. Written into a
 * PDF as is, a half pair is invalid UTF-16 that readers decode with the next character swallowed.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}
