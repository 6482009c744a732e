/**
 * Header and footer templates ("bands"). Chromium fills an element of class `url` with the page's address, which for
 * a document printed from its text is `about:blank` (and for a bundle file an internal origin): such elements get
 * the document's own address instead — the URL a URL input was fetched from — or nothing.
 */
import { escapeHtml } from './markdown';

/** An opening tag and its attributes' text. Each `<` scans at most to the next `<` or `>`: linear on any template. */
const OPENING_TAG = /<([A-Za-z][^\s/<>]*)(\s[^<>]*)?>/g;
/** One attribute in a tag's text: its name, and its value quoted or not (as HTML allows). */
const ATTRIBUTE = /([^\s"'<>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g;

/**
 * `template` with every element of class `url` filled with `documentUrl` (escaped) rather than left to Chromium. The
 * class attribute is read as HTML reads it: any case (`CLASS=`), quoted or not (`class=url`), the first one counting.
 */
export function fillUrlClass(template: string, documentUrl: string): string {
  if (!/url/i.test(template)) return template;
  return template.replace(OPENING_TAG, (tag, name: string, attributes: string | undefined) => {
    if (!attributes) return tag;
    for (const m of attributes.matchAll(ATTRIBUTE)) {
      if (m[1].toLowerCase() !== 'class') continue;
      const value = m[2] ?? '';
      const classes = (value[0] === '"' || value[0] === "'" ? value.slice(1, -1) : value).split(/\s+/).filter(Boolean);
      if (!classes.includes('url')) return tag;
      // Renamed, so Chromium's own filling (which replaces the element's text) leaves it alone.
      const kept = classes.map((c) => (c === 'url' ? 'url-filled' : c)).join(' ');
      const at = m.index!;
      const rewritten = `${attributes.slice(0, at)}${m[1]}="${kept}"${attributes.slice(at + m[0].length)}`;
      return `<${name}${rewritten}>${escapeHtml(documentUrl)}`;
    }
    return tag;
  });
}
