import { ServiceError } from '../errors';
import { FetchError, type HttpClient } from '../net/fetch';
import type { NetworkGuard } from '../net/guard';
import { redactUrl } from '../net/redact-url';

/**
 * URL input rules (document 1): HTTPS only, 5 MB, up to 5 redirects each re-checked, URL_FETCH_TIMEOUT when the
 * remote is silent for 10 seconds. A remote that keeps sending is given 20 seconds in all, so that a trickle cannot
 * take the quick job's whole 30 seconds from the render.
 */
export const URL_FETCH = { idleTimeoutMs: 10_000, timeoutMs: 20_000, maxBytes: 5 * 1024 * 1024, maxRedirects: 5 } as const;

export type UrlDocumentKind = 'html' | 'markdown' | 'image';

export interface FetchedDocument {
  kind: UrlDocumentKind;
  body: Buffer;
  /** The media type the server declared (lower case, without parameters). */
  contentType: string;
  charset: string | null;
  finalUrl: string;
}

const BY_TYPE: Record<string, UrlDocumentKind> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/jpg': 'image',
};

/** Types that say nothing about the content: the extension of the final URL decides. */
const GENERIC_TYPES = new Set(['', 'text/plain', 'application/octet-stream', 'binary/octet-stream', 'application/unknown', 'application/x-unknown', 'application/download', 'application/force-download']);

const BY_EXTENSION: Record<string, UrlDocumentKind> = { html: 'html', htm: 'html', md: 'markdown', markdown: 'markdown', png: 'image', jpg: 'image', jpeg: 'image' };

function invalidUrl(message: string, details: Record<string, unknown>): ServiceError {
  return new ServiceError('INVALID_URL', message, details);
}

/** The refused URL as the error shows it: without credentials (the error mapper bounds its length). */
const shown = (raw: string) => redactUrl(raw, { query: true });
/**
 * A URL the fetch reached, as refusals show it: the caller's own URL as sent (without credentials); one a redirect
 * chose (a third party's: a presigned link, an OAuth `?code=`) without its query either.
 */
export const shownReached = (reached: string, requested: string) => redactUrl(reached, { query: reached === requested });

/** 400 INVALID_URL before any network use: not a URL, not HTTPS, credentials in it, or a literal internal target. */
export function validateUrl(raw: string, guard: NetworkGuard): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidUrl('url is not a valid URL; send an absolute https:// address.', { url: shown(raw), reason: 'not_a_url' });
  }
  if (url.protocol !== 'https:') throw invalidUrl('Only https:// URLs can be converted.', { url: shown(raw), reason: 'not_https' });
  if (url.username || url.password) throw invalidUrl('URLs with user names or passwords are not accepted.', { url: shown(raw), reason: 'credentials' });
  if (raw.length > 8192) throw invalidUrl('url is longer than 8192 characters.', { reason: 'too_long' });
  const port = url.port ? Number(url.port) : 443;
  // The URL parser takes port 0, which nothing can be connected to: refused here, like any other invalid URL, rather
  // than after a job was recorded, where the connection-time guard would call it a private address.
  if (port < 1) throw invalidUrl(`url names port ${port}, which cannot be connected to; leave the port out (443) or name a real one.`, { url: shown(raw), reason: 'invalid_port' });
  const verdict = guard.checkLiteral(url.hostname, port);
  if (!verdict.allowed) throw invalidUrl(`The URL points to a private or internal address (${verdict.reason}); only public hosts can be fetched.`, { url: shown(raw), reason: 'private_address' });
  return url;
}

/** Which kind of document the response is: the declared type, else the final URL's extension. */
export function classifyResponse(contentType: string, finalUrl: string): UrlDocumentKind | null {
  const byType = BY_TYPE[contentType];
  if (byType) return byType;
  if (!GENERIC_TYPES.has(contentType)) return null;
  const ext = /\.([a-z0-9]+)$/i.exec(new URL(finalUrl).pathname)?.[1]?.toLowerCase();
  return ext ? (BY_EXTENSION[ext] ?? null) : null;
}

/** What to do about a remote that is too slow: its HTML can be sent instead (the quick job's other input). */
const SLOW_ADVICE = 'Check that the URL answers promptly from the public internet, or send the page\'s HTML (input_type "html") instead.';

/** The other network failures in the caller's terms (`details.reason` keeps the kind). */
const UNREACHABLE: Partial<Record<string, string>> = {
  connect: 'The remote server refused or dropped the connection. Check that the URL opens in a browser from the public internet; retry later if the server was down.',
  tls: 'The HTTPS connection to the remote server failed (for example an expired or untrusted certificate). Fix the server\'s certificate, or send the page\'s HTML (input_type "html") instead.',
  bad_response: 'The remote server\'s answer could not be read. Check that the URL opens in a browser, or send the page\'s HTML (input_type "html") instead.',
};

function mapFetchError(err: FetchError, requested: string): ServiceError {
  // A failure on a redirect's hop names that hop's URL.
  const hops = err.url === requested ? 0 : 1;
  const where = { url: shownReached(err.url, requested) };
  switch (err.kind) {
    case 'blocked':
      return invalidUrl(`${hops > 0 ? 'A redirect leads' : 'The URL leads'} to a private or internal address; only public hosts can be fetched.`, { ...where, reason: 'private_address' });
    case 'scheme':
      return invalidUrl('A redirect left https://; only HTTPS is followed.', { ...where, reason: 'not_https' });
    case 'invalid_url':
      return invalidUrl('url is not a valid URL; send an absolute https:// address.', { ...where, reason: 'not_a_url' });
    case 'credentials':
      return invalidUrl(`${hops > 0 ? 'A redirect leads' : 'The URL leads'} to an address with a user name or password; such URLs are not followed.`, { ...where, reason: 'credentials' });
    case 'timeout':
      return new ServiceError('URL_FETCH_TIMEOUT', `The remote server sent nothing for ${URL_FETCH.idleTimeoutMs / 1000} seconds. ${SLOW_ADVICE}`, { ...where, timeout_seconds: URL_FETCH.idleTimeoutMs / 1000, reason: 'silent' });
    case 'too_slow':
      return new ServiceError('URL_FETCH_TIMEOUT', `The remote server did not finish sending within ${URL_FETCH.timeoutMs / 1000} seconds. ${SLOW_ADVICE}`, {
        ...where,
        timeout_seconds: URL_FETCH.idleTimeoutMs / 1000,
        total_seconds: URL_FETCH.timeoutMs / 1000,
        reason: 'too_slow',
      });
    case 'dns':
      return new ServiceError('URL_FETCH_FAILED', 'The host name could not be resolved. Check the spelling of the URL and that its host is reachable from the public internet.', { ...where, reason: 'dns' });
    case 'too_large':
      return new ServiceError('URL_FETCH_FAILED', `The remote document is larger than ${URL_FETCH.maxBytes} bytes (5 MB), the most a URL may serve. Point url at a smaller document.`, { ...where, reason: 'too_large', max_bytes: URL_FETCH.maxBytes });
    case 'too_many_redirects':
      return new ServiceError('URL_FETCH_FAILED', `The URL redirects more than ${URL_FETCH.maxRedirects} times. Send the address the redirects end at instead.`, { ...where, reason: 'too_many_redirects', max_redirects: URL_FETCH.maxRedirects });
    default:
      return new ServiceError('URL_FETCH_FAILED', UNREACHABLE[err.kind] ?? UNREACHABLE.bad_response!, { ...where, reason: err.kind });
  }
}

/** Fetches a URL for conversion and decides what it is; every refusal carries its spec code. */
export async function fetchDocument(http: HttpClient, url: URL): Promise<FetchedDocument> {
  let result;
  try {
    result = await http.request({
      method: 'GET',
      url: url.href,
      headers: { Accept: 'text/html,application/xhtml+xml,text/markdown;q=0.9,image/png;q=0.8,image/jpeg;q=0.8,*/*;q=0.5' },
      schemes: ['https:'],
      maxRedirects: URL_FETCH.maxRedirects,
      maxBytes: URL_FETCH.maxBytes,
      timeoutMs: URL_FETCH.timeoutMs,
      idleTimeoutMs: URL_FETCH.idleTimeoutMs,
    });
  } catch (err) {
    if (err instanceof FetchError) throw mapFetchError(err, url.href);
    throw err;
  }
  if (result.status < 200 || result.status > 299) {
    throw new ServiceError('URL_FETCH_HTTP_ERROR', `The remote server answered HTTP ${result.status}. Check that the URL opens in a browser without signing in; for a page behind a login, send its HTML (input_type "html") instead.`, { url: shownReached(result.finalUrl, url.href), status_code: result.status });
  }
  const [type, ...params] = (result.headers['content-type'] ?? '').split(';');
  const contentType = type.trim().toLowerCase();
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";]+)"?/i.exec(p)?.[1]).find(Boolean)?.toLowerCase() ?? null;
  const kind = classifyResponse(contentType, result.finalUrl);
  if (!kind) {
    throw new ServiceError('URL_CONTENT_TYPE_NOT_SUPPORTED', `The URL serves ${contentType || 'an unlabelled document'}; HTML, Markdown, PNG and JPEG can be converted.`, {
      url: shownReached(result.finalUrl, url.href),
      content_type: contentType || null,
    });
  }
  return { kind, body: result.body, contentType, charset, finalUrl: result.finalUrl };
}

/** The encoding a byte-order mark names; as in browsers (WHATWG "decode"), it wins over any declared charset. */
function bomEncoding(body: Uint8Array): string | null {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return null;
}

/** What windows-1252 maps the bytes 0x80–0x9F to (WHATWG index-windows-1252); the other bytes are Latin-1. */
const WINDOWS_1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/**
 * windows-1252 text (also what the labels latin1, iso-8859-1 and ascii mean, as in browsers). Node's own decoder
 * (from 20.18.3, nodejs/node#60888) reads it as Latin-1, which turns €, curly quotes and dashes into C1 controls.
 */
function decodeWindows1252(body: Buffer): string {
  return body.toString('latin1').replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]);
}

/** A decoder for a charset label, or null for a label no browser knows (such a label is ignored, not fatal). */
function decoderFor(label: string | null | undefined): TextDecoder | null {
  if (!label) return null;
  try {
    return new TextDecoder(label);
  } catch {
    return null;
  }
}

/** The encoding a <meta> names; one naming UTF-16 was found in ASCII-compatible bytes, so it means UTF-8 (WHATWG prescan). */
function metaDecoder(body: Buffer): TextDecoder | null {
  const decoder = decoderFor(/<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(body.subarray(0, 4096).toString('latin1'))?.[1]);
  return decoder?.encoding.startsWith('utf-16') ? new TextDecoder('utf-8') : decoder;
}

/**
 * The encoding an XML declaration names (`<?xml version="1.0" encoding="…"?>`, at the very start). As for a <meta>,
 * one naming UTF-16 was found in ASCII-compatible bytes, so it means UTF-8.
 */
function xmlDeclarationDecoder(body: Buffer): TextDecoder | null {
  const declaration = /^<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][\w.-]*)["']/.exec(body.subarray(0, 1024).toString('latin1'));
  const decoder = decoderFor(declaration?.[1]);
  return decoder?.encoding.startsWith('utf-16') ? new TextDecoder('utf-8') : decoder;
}

/**
 * A text file whose charset was declared beside it (a multipart part's `Content-Type: text/html; charset=…`), as
 * UTF-8 behind a byte-order mark, so that it is read later as declared: the mark wins over a `<meta charset>`, as a
 * transport charset does in browsers. Unchanged when it already has a mark (which wins over the label) or the label
 * is no known charset.
 */
export function withDeclaredCharset(body: Buffer, charset: string | null): Buffer {
  if (!charset || bomEncoding(body) || !decoderFor(charset)) return body;
  const text = decodeText({ kind: 'html', body, contentType: '', charset, finalUrl: '' });
  return Buffer.from(`\ufeff${text}`, 'utf8');
}

/**
 * Text of an HTML or Markdown response: a byte-order mark, else the declared charset, else a <meta charset>, else
 * UTF-8. A header charset that is no known label (`charset=None`) is passed over for the <meta>, as in browsers.
 * XHTML (`application/xhtml+xml`) is read as browsers read XML: its XML declaration's encoding instead of a <meta>.
 */
export function decodeText(doc: FetchedDocument): string {
  const bom = bomEncoding(doc.body);
  if (bom) return new TextDecoder(bom).decode(doc.body); // the decoder drops the mark itself
  const inDocument = doc.contentType === 'application/xhtml+xml' ? xmlDeclarationDecoder(doc.body) : doc.kind === 'html' ? metaDecoder(doc.body) : null;
  const decoder = decoderFor(doc.charset) ?? inDocument ?? new TextDecoder('utf-8');
  return decoder.encoding === 'windows-1252' ? decodeWindows1252(doc.body) : decoder.decode(doc.body);
}
