/**
 * Header and footer templates ("bands"). Chromium fills an element of class `url` with the page's address, which for
 * a document printed from its text is `about:blank` (and for a bundle file an internal origin): such elements get
 * the document's own address instead — the URL a URL input was fetched from — or nothing.
 */
import { escapeHtml } from './markdown';

/** An opening tag with a class attribute: name, what comes before the class value, the quoted value, the rest. */
const TAG_WITH_CLASS = /<([A-Za-z][\w-]*)(\s[^<>]*?\bclass\s*=\s*)("[^"]*"|'[^']*')([^<>]*)>/g;

/** `template` with every `class="url"` element filled with `documentUrl` (escaped) rather than left to Chromium. */
export function fillUrlClass(template: string, documentUrl: string): string {
  if (!template.includes('url')) return template;
  return template.replace(TAG_WITH_CLASS, (tag, name: string, before: string, quoted: string, after: string) => {
    const classes = quoted.slice(1, -1).split(/\s+/).filter(Boolean);
    if (!classes.includes('url')) return tag;
    // Renamed, so Chromium's own filling (which replaces the element's text) leaves it alone.
    const kept = classes.map((c) => (c === 'url' ? 'url-filled' : c)).join(' ');
    return `<${name}${before}"${kept}"${after}>${escapeHtml(documentUrl)}`;
  });
}
