/**
 * Addresses of bundle files (bulk jobs): a document of a bundle is opened at `https://bundle.invalid/<path>`, so its
 * relative references, and its links to the bundle's other files, are URLs of that origin.
 */
import { BUNDLE_ORIGIN } from './ports';

/** The URL of a bundle path, each segment percent-encoded. */
export function bundleUrl(path: string): string {
  return `${BUNDLE_ORIGIN}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The bundle path a request URL names (query and fragment ignored), or null when it names none. */
export function bundlePathOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.origin !== BUNDLE_ORIGIN) return null;
  const path = decodePath(parsed.pathname).replace(/^\/+/, '');
  return path === '' || path.endsWith('/') ? null : path;
}

/**
 * A URL path's escapes decoded; a `%` that starts none, or escapes that are no UTF-8, stay as they are. Browsers
 * keep such a `%` in the URL (`<img src="100%.png">` asks for `/100%.png`), and a browser opening the bundle's files
 * from disk finds `100%.png`; decoding all or nothing made it a missing asset.
 */
function decodePath(path: string): string {
  return path.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const escapes = run.match(/%../g)!;
    let text = '';
    // A UTF-8 character is 1 to 4 bytes: the longest that decodes wins, else the escape stays.
    for (let i = 0; i < escapes.length; ) {
      let taken = 0;
      for (let n = Math.min(4, escapes.length - i); n > 0 && !taken; n--) {
        try {
          text += decodeURIComponent(escapes.slice(i, i + n).join(''));
          taken = n;
        } catch {
          // not one character: try fewer bytes
        }
      }
      if (!taken) text += escapes[i];
      i += taken || 1;
    }
    return text;
  });
}
