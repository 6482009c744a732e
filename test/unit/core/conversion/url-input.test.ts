import { classifyResponse, decodeText, fetchDocument, validateUrl, withDeclaredCharset } from '../../../../functions/core/conversion/url-input';
import { FetchError, type HttpClient } from '../../../../functions/core/net/fetch';
import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../../functions/core/net/guard';
import { refusal } from '../../../support/errors';

const doc = (body: Buffer, charset: string | null = null) => ({ kind: 'html' as const, body, contentType: 'text/html', charset, finalUrl: 'https://example.com/' });
const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();

describe('withDeclaredCharset', () => {
  const page = '<meta charset="utf-8"><p>Grüße €</p>';
  const read = (body: Buffer) => decodeText({ kind: 'html', body, contentType: '', charset: null, finalUrl: '' });

  it('turns a file in its declared charset into UTF-8 behind a mark, which is then read as declared over its <meta>', () => {
    const out = withDeclaredCharset(Buffer.from(page.replace('€', '\x80'), 'latin1'), 'windows-1252');
    expect(out.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(read(out)).toBe(page);
    expect(read(withDeclaredCharset(Buffer.from(page, 'utf16le'), 'UTF-16LE'))).toBe(page);
  });

  it('leaves a file with a byte-order mark, without a charset, or with an unknown label as it is', () => {
    const marked = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page, 'utf16le')]);
    expect(withDeclaredCharset(marked, 'windows-1252')).toBe(marked);
    const plain = Buffer.from(page);
    expect(withDeclaredCharset(plain, null)).toBe(plain);
    expect(withDeclaredCharset(plain, 'None')).toBe(plain);
  });
});

describe('decodeText', () => {
  const page = '<html><body>Grüße</body></html>';

  it('follows a byte-order mark over any declared charset, as browsers do', () => {
    expect(decodeText(doc(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page, 'utf16le')])))).toBe(page);
    expect(decodeText(doc(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(page)]), 'utf-16'))).toBe(page);
    expect(decodeText(doc(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page)]), 'windows-1252'))).toBe(page);
  });

  it('uses the declared charset, then a <meta charset>, then UTF-8', () => {
    expect(decodeText(doc(Buffer.from(page, 'latin1'), 'iso-8859-1'))).toBe(page);
    expect(decodeText(doc(Buffer.from(`<meta charset="windows-1252">${page}`, 'latin1')))).toBe(`<meta charset="windows-1252">${page}`);
    expect(decodeText(doc(Buffer.from(page)))).toBe(page);
  });

  it("reads XHTML as XML: the declaration's encoding, not a <meta>, after the header charset; a declaration in HTML counts for nothing", () => {
    const xhtml = (body: Buffer, charset: string | null = null) => ({ ...doc(body, charset), contentType: 'application/xhtml+xml' });
    const declared = `<?xml version="1.0" encoding="ISO-8859-1"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><meta charset="utf-8"/><body>Grüße – €</body></html>`;
    // windows-1252 bytes (what the label ISO-8859-1 means in browsers): – is 0x96, € is 0x80.
    const bytes = Buffer.from(declared.replace('–', '\x96').replace('€', '\x80'), 'latin1');
    expect(decodeText(xhtml(bytes))).toBe(declared);
    // The header's charset wins over the declaration.
    const utf8 = `<?xml version="1.0" encoding="iso-8859-1"?><p>Grüße</p>`;
    expect(decodeText(xhtml(Buffer.from(utf8), 'utf-8'))).toBe(utf8);
    // A declaration naming UTF-16 in ASCII-compatible bytes means UTF-8; without one, XML is UTF-8 whatever a <meta> says.
    expect(decodeText(xhtml(Buffer.from(`<?xml version="1.0" encoding="UTF-16"?><p>Grüße</p>`)))).toBe(`<?xml version="1.0" encoding="UTF-16"?><p>Grüße</p>`);
    expect(decodeText(xhtml(Buffer.from(`<?xml version="1.0"?><meta charset="windows-1252"/><p>Grüße</p>`)))).toBe(`<?xml version="1.0"?><meta charset="windows-1252"/><p>Grüße</p>`);
    // Served as text/html, the declaration is not read (the HTML standard’s prescan looks for a <meta> only).
    const latin = Buffer.from(`<?xml version="1.0" encoding="iso-8859-1"?><p>Grüße</p>`, 'latin1');
    expect(decodeText(doc(latin))).not.toContain('Grüße');
  });
});

describe('validateUrl', () => {
  const guard = new NetworkGuard({ resolve: async () => [{ address: '93.184.216.34', family: 4 as const }] }, new PrivateTargetAllowlist(undefined));
  const refused = (url: string) => refusal(() => validateUrl(url, guard));

  it.each([
    ['credentials', 'https://bob:hunter2@example.com/doc?v=2', 'https://example.com/doc?v=2'],
    ['not HTTPS, with credentials', 'http://bob:hunter2@example.com/', 'http://example.com/'],
    ['a private address, with credentials', 'https://bob:hunter2@127.0.0.1/x', 'https://127.0.0.1/x'],
    ['not a URL, with credentials', 'https://bob:hunter2@exa mple.com/', 'https://exa mple.com/'],
  ])('refuses %s and echoes the URL without them', (_what, url, shown) => {
    const err = refused(url);
    expect(err.code).toBe('INVALID_URL');
    expect(err.details.url).toBe(shown);
    expect(JSON.stringify(err)).not.toContain('hunter2');
  });

  // Each refused here, before any network use or job, with its own reason (past this point a job is recorded).
  it.each([
    ['http://example.com/', 'not_https', 'http://example.com/'],
    ['ftp://example.com/file', 'not_https', 'ftp://example.com/file'],
    ['https://bob@example.com/', 'credentials', 'https://bob@example.com/'],
    ['https://:hunter2@example.com/', 'credentials', 'https://:hunter2@example.com/'],
    ['https://127.0.0.1/', 'private_address', 'https://127.0.0.1/'],
    ['https://0x7f000001/', 'private_address', 'https://0x7f000001/'],
    ['https://[::ffff:127.0.0.1]/', 'private_address', 'https://[::ffff:127.0.0.1]/'],
    ['https://169.254.169.254/latest/meta-data/', 'private_address', 'https://169.254.169.254/latest/meta-data/'],
    ['https://db.internal/', 'private_address', 'https://db.internal/'],
    ['https://localhost./', 'private_address', 'https://localhost./'],
    ['a URL of 8193 characters', 'too_long', `https://example.com/${'a'.repeat(8173)}`],
  ])('refuses %s as %s', (_what, reason, url) => {
    expect(refused(url)).toMatchObject({ code: 'INVALID_URL', details: { reason } });
  });

  it('takes a URL of 8192 characters, and public https hosts', () => {
    const longest = `https://example.com/${'a'.repeat(8172)}`;
    expect(longest).toHaveLength(8192);
    expect(validateUrl(longest, guard).hostname).toBe('example.com');
    expect(validateUrl('https://example.com:8443/a?b=c', guard).href).toBe('https://example.com:8443/a?b=c');
  });

  it('refuses port 0 before any job exists, as an invalid port rather than a private address', () => {
    const err = refused('https://example.com:0/doc');
    expect(err).toMatchObject({ code: 'INVALID_URL', details: { reason: 'invalid_port', url: 'https://example.com:0/doc' } });
    expect(err.message).not.toMatch(/private/);
    expect(guard.checkLiteral('example.com', 0)).toEqual({ allowed: false, reason: 'port 0 is not valid' });
  });
});

describe('fetchDocument', () => {
  const failing = (err: FetchError): HttpClient => ({ request: async () => Promise.reject(err) });

  it('refuses a redirect to a URL with credentials as credentials, naming the hop without them', async () => {
    const http = failing(new FetchError('credentials', 'https://bob:hunter2@example.org/next', 'credentials'));
    const err = await fetchDocument(http, new URL('https://example.com/start')).then(
      () => null,
      (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> },
    );
    expect(err).toMatchObject({ code: 'INVALID_URL', details: { reason: 'credentials', url: 'https://example.org/next' } });
    expect(err?.message).toMatch(/redirect/);
    expect(JSON.stringify(err)).not.toContain('hunter2');
  });

  it("shows a URL a redirect chose without its query (a third party's token), and the caller's own as sent", async () => {
    const answering = (status: number, finalUrl: string, contentType = 'text/html'): HttpClient => ({
      request: async () => ({ status, headers: { 'content-type': contentType }, body: Buffer.from('x'), finalUrl, redirects: [] }),
    });
    const presigned = 'https://bucket.s3.amazonaws.com/doc.html?X-Amz-Signature=secret&X-Amz-Credential=AKIA';
    const own = new URL('https://example.com/doc?v=2');
    await expect(fetchDocument(answering(403, presigned), own)).rejects.toMatchObject({ code: 'URL_FETCH_HTTP_ERROR', details: { url: 'https://bucket.s3.amazonaws.com/doc.html' } });
    await expect(fetchDocument(answering(200, presigned, 'application/zip'), own)).rejects.toMatchObject({ code: 'URL_CONTENT_TYPE_NOT_SUPPORTED', details: { url: 'https://bucket.s3.amazonaws.com/doc.html' } });
    await expect(fetchDocument(answering(404, own.href), own)).rejects.toMatchObject({ details: { url: 'https://example.com/doc?v=2' } });
    // A refused redirect hop: shown without its query too.
    await expect(fetchDocument(failing(new FetchError('blocked', 'https://10.0.0.1/x?token=abc', 'private')), own)).rejects.toMatchObject({ details: { url: 'https://10.0.0.1/x' } });
  });

  it('fetches with a 10 s silence at most and 20 s in all, and tells the two timeouts apart', async () => {
    let asked: Parameters<HttpClient['request']>[0] | undefined;
    const silent: HttpClient = {
      request: async (spec) => {
        asked = spec;
        throw new FetchError('timeout', spec.url, 'silent');
      },
    };
    await expect(fetchDocument(silent, new URL('https://example.com/'))).rejects.toMatchObject({ code: 'URL_FETCH_TIMEOUT', details: { timeout_seconds: 10, reason: 'silent' } });
    expect(asked).toMatchObject({ idleTimeoutMs: 10_000, timeoutMs: 20_000 });
    // HTTPS only on every hop, up to 5 redirects, 5 MB (document 1's URL input rules).
    expect(asked).toMatchObject({ method: 'GET', url: 'https://example.com/', schemes: ['https:'], maxRedirects: 5, maxBytes: 5 * 1024 * 1024 });
    await expect(fetchDocument(failing(new FetchError('too_slow', 'https://example.com/', 'slow')), new URL('https://example.com/'))).rejects.toMatchObject({
      code: 'URL_FETCH_TIMEOUT',
      message: expect.stringContaining('did not finish sending within 20 seconds'),
      details: { timeout_seconds: 10, total_seconds: 20, reason: 'too_slow' },
    });
  });
});

describe('classifyResponse (document 1: Content-Type, else the final URL\'s extension)', () => {
  it.each([
    ['text/html', 'html'], ['application/xhtml+xml', 'html'], ['text/markdown', 'markdown'], ['text/x-markdown', 'markdown'],
    ['image/png', 'image'], ['image/jpeg', 'image'], ['image/jpg', 'image'],
  ])('reads %s as %s whatever the extension', (type, kind) => {
    expect(classifyResponse(type, 'https://example.com/file.bin')).toBe(kind);
  });

  it.each([
    ['/a.html', 'html'], ['/a.HTM', 'html'], ['/a.md', 'markdown'], ['/a.markdown', 'markdown'], ['/a.png', 'image'], ['/a.jpg', 'image'], ['/a.jpeg', 'image'],
    ['/a.txt', null], ['/a', null],
    // The path's extension only: not one in the query or fragment.
    ['/download?name=page.html', null], ['/file#part.md', null],
  ])('reads a generic type by the final URL: %s as %s', (path, kind) => {
    expect(classifyResponse('text/plain', `https://example.com${path}`)).toBe(kind);
    expect(classifyResponse('application/octet-stream', `https://example.com${path}`)).toBe(kind);
  });

  it('refuses a specific type it does not convert, whatever the extension', () => {
    expect(classifyResponse('application/json', 'https://example.com/a.html')).toBeNull();
  });
});

describe('fetchDocument refusals say what to do', () => {
  it.each([
    ['an unknown host', new FetchError('dns', 'https://example.com/', 'getaddrinfo ENOTFOUND'), /Check the spelling of the URL/],
    ['endless redirects', new FetchError('too_many_redirects', 'https://example.com/', 'too many'), /Send the address the redirects end at/],
    ['a silent server', new FetchError('timeout', 'https://example.com/', 'silent'), /sent nothing for 10 seconds\. Check that the URL answers promptly .*send the page's HTML/],
    ['a slow server', new FetchError('too_slow', 'https://example.com/', 'slow'), /within 20 seconds\. Check that the URL answers promptly/],
    ['a document over 5 MB', new FetchError('too_large', 'https://example.com/', 'big'), /larger than 5242880 bytes \(5 MB\), the most a URL may serve\. Point url at a smaller document/],
    ['a refused connection', new FetchError('connect', 'https://example.com/', 'connection failed (ECONNREFUSED)'), /^The remote server refused or dropped the connection\. Check that the URL opens in a browser/],
    ['a failed TLS handshake', new FetchError('tls', 'https://example.com/', 'TLS failed (CERT_HAS_EXPIRED)'), /^The HTTPS connection to the remote server failed .*Fix the server's certificate/],
    ['an unreadable answer', new FetchError('bad_response', 'https://example.com/', 'could not decode the response (incorrect header check)'), /^The remote server's answer could not be read\. Check that the URL opens/],
  ])('%s', async (_what, failure, advice) => {
    const http: HttpClient = { request: async () => Promise.reject(failure) };
    const err = await fetchDocument(http, new URL('https://example.com/')).then(() => null, (e: unknown) => e as { message: string; details: { reason: string } });
    expect(err?.message).toMatch(advice);
    // The network layer's own words (error codes, library text) stay out of the answer; details.reason names the kind.
    expect(err?.message).not.toMatch(/ECONNREFUSED|CERT_HAS_EXPIRED|incorrect header check|\((connect|tls|bad_response)\)/);
    expect(err?.details.reason).toBe(failure.kind === 'timeout' ? 'silent' : failure.kind);
  });

  it.each([300, 302, 304, 199])('an answer that is not 2xx (%s, not followed) as URL_FETCH_HTTP_ERROR', async (status) => {
    const http: HttpClient = { request: async () => ({ status, headers: { 'content-type': 'text/html' }, body: Buffer.from('<p>x</p>'), finalUrl: 'https://example.com/', redirects: [] }) };
    await expect(fetchDocument(http, new URL('https://example.com/'))).rejects.toMatchObject({ code: 'URL_FETCH_HTTP_ERROR', details: { status_code: status } });
  });

  it('an HTTP error', async () => {
    const http: HttpClient = { request: async () => ({ status: 403, headers: { 'content-type': 'text/html' }, body: Buffer.from('no'), finalUrl: 'https://example.com/', redirects: [] }) };
    const err = await fetchDocument(http, new URL('https://example.com/')).then(() => null, (e: unknown) => e as { code: string; message: string });
    expect(err).toMatchObject({ code: 'URL_FETCH_HTTP_ERROR', message: expect.stringMatching(/answered HTTP 403\. Check that the URL opens in a browser/) });
  });
});
