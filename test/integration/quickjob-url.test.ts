import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { errorOf } from '../support/errors';
import { MM_PER_POINT, readPdf, readPdfDrawing } from '../support/pdf';
import { png } from '../support/images';
import { type TestCa, type TestServer, closedPort, httpServer, httpsServer, makeTestCa } from '../support/servers';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let ca: TestCa;
let site: TestServer;
let privateSite: TestServer;
let untrusted: TestServer;
let plain: TestServer;
let refusedPort: number;
let stack: TestStack;
let user: TestAccount;

function routes(base: () => string) {
  return (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const url = req.url ?? '/';
    const send = (type: string, body: string | Buffer, status = 200, extra: Record<string, string> = {}) => res.writeHead(status, { 'Content-Type': type, ...extra }).end(body);
    if (url === '/page.html') return send('text/html; charset=utf-8', '<title>Remote</title><h1>Remote page</h1><img src="/logo.png"><img src="logo2.png"><p>Grüße</p>');
    if (url === '/notes.md') return send('text/markdown', '# Remote notes\n\n- first\n- second');
    if (url === '/plain.md') return send('text/plain', '# Plain markdown\n\n- item');
    if (url === '/plain.html') return send('text/plain', '<h1>Plain html</h1>');
    if (url === '/noext') return send('text/plain', 'just text');
    if (url === '/pic.png') return send('image/png', png(60, 40));
    if (url === '/data.json') return send('application/json', '{"a":1}');
    if (url === '/latin1') return send('text/html; charset=iso-8859-1', Buffer.from('<p>caf\xe9 cr\xe8me</p>', 'latin1'));
    // € “quoted” – em dash ™ in windows-1252 (bytes 0x80–0x9F), declared only by the header, or only by a <meta>.
    if (url === '/cp1252-header') return send('text/html; charset=windows-1252', Buffer.from('<p>\x80 5 \x93quoted\x94 \x96 \x97 \x99</p>', 'latin1'));
    if (url === '/cp1252-meta') return send('text/html', Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><p>\x80 5 \x93quoted\x94 \x96 \x97 \x99</p>', 'latin1'));
    // A header charset no browser knows (Python apps send "None"); a <meta> naming UTF-16 in an ASCII-compatible page.
    if (url === '/unknown-header-charset') return send('text/html; charset=None', Buffer.from('<meta charset="windows-1252"><p>caf\xe9 \x80</p>', 'latin1'));
    if (url === '/meta-utf16') return send('text/html', Buffer.from('<meta charset="utf-16"><p>Grüße</p>', 'utf8'));
    // Content-Encoding: deflate as HTTP means it (zlib-wrapped) and as some servers send it (raw): browsers read both.
    if (url === '/deflate') return send('text/html', deflateSync('<p>Zlib wrapped page</p>'), 200, { 'Content-Encoding': 'deflate' });
    if (url === '/deflate-raw') return send('text/html', deflateRawSync('<p>Raw stream page</p>'), 200, { 'Content-Encoding': 'deflate' });
    if (url === '/gzipped') return send('text/html', gzipSync('<p>Gzip page</p>'), 200, { 'Content-Encoding': 'gzip' });
    if (url === '/brotli') return send('text/html', brotliCompressSync('<p>Brotli page</p>'), 200, { 'Content-Encoding': 'br' });
    if (url === '/missing') return send('text/html', 'nope', 404);
    if (url === '/broken') return send('text/html', 'oops', 503);
    const r = /^\/r\/(\d+)$/.exec(url);
    if (r) return res.writeHead(302, { Location: Number(r[1]) > 1 ? `/r/${Number(r[1]) - 1}` : '/page.html' }).end();
    // A redirect with a body of its own over 5 MB: only the document it leads to is downloaded.
    if (url === '/heavy-redirect') return res.writeHead(302, { Location: '/page.html', 'Content-Type': 'text/html' }).end(Buffer.alloc(6 * 1024 * 1024, 'r'));
    if (url === '/to-http') return res.writeHead(302, { Location: `http://localhost:${plain.port}/page.html` }).end();
    if (url === '/to-private') return res.writeHead(302, { Location: `https://127.0.0.1:${privateSite.port}/page.html` }).end();
    if (url === '/to-metadata') return res.writeHead(301, { Location: 'https://169.254.169.254/latest/meta-data/' }).end();
    if (url === '/slow') return; // never answers
    if (url === '/big') return send('text/html', Buffer.alloc(6 * 1024 * 1024, 'a'));
    if (url === '/chunked-big') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      for (let i = 0; i < 7; i++) res.write(Buffer.alloc(1024 * 1024, 'b'));
      return res.end();
    }
    if (url === '/gzip-bomb') return send('text/html', gzipSync(Buffer.alloc(64 * 1024 * 1024)), 200, { 'Content-Encoding': 'gzip' });
    if (url === '/deflate-raw-bomb') return send('text/html', deflateRawSync(Buffer.alloc(64 * 1024 * 1024)), 200, { 'Content-Encoding': 'deflate' });
    if (url === '/lying-length') {
      res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip', 'Content-Length': '100' });
      return res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024)).subarray(0, 100));
    }
    send('text/plain', `unknown ${base()}`, 404);
  };
}

beforeAll(async () => {
  ca = makeTestCa();
  site = await httpsServer(ca, routes(() => site.url));
  privateSite = await httpsServer(ca, (_req, res) => res.end('<p>private</p>'));
  plain = await httpServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>plain http</p>'));
  untrusted = await httpsServer(makeTestCa(), (_req, res) => res.end('<p>untrusted</p>'));
  refusedPort = await closedPort();
  stack = await startTestStack({
    ALLOW_PRIVATE_TARGETS: [site.port, plain.port, untrusted.port, refusedPort].map((p) => `localhost:${p}`).join(','),
    NODE_EXTRA_CA_CERTS: ca.caFile,
  });
  user = await stack.account({ credits_usd: 5 });
});
afterAll(async () => {
  await stack?.stop();
  for (const s of [site, privateSite, untrusted, plain]) await s?.close();
});

const convert = (url: string, extra: Record<string, unknown> = {}) => stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'url', url, ...extra } });
const at = (path: string) => `https://localhost:${site.port}${path}`;

async function pdfText(res: Response) {
  expect(res.status).toBe(200);
  return (await readPdf(new Uint8Array(await res.arrayBuffer()))).map((p) => p.text).join(' ');
}


describe('POST /quickjob with input_type url', () => {
  it('converts an HTML page, leaving its relative assets unresolved', async () => {
    const res = await convert(at('/page.html'));
    const text = await pdfText(res);
    expect(text).toContain('Remote page');
    expect(text).toContain('Grüße');
    expect(site.hits).not.toContain('/logo.png');
    const job = await (await stack.request('GET', `/jobs/${res.headers.get('x-job-id')}`, { key: user.api_key })).json();
    expect(job).toMatchObject({ mode: 'url', status: 'completed', pages: 1 });
  });

  it("fills a footer's url class with the page's address (Chromium printed about:blank); HTML input leaves it empty", async () => {
    const options = { displayHeaderFooter: true, headerTemplate: '<span></span>', footerTemplate: '<p style="font-size:10px">From <b class="url"></b>.</p>', margin: { bottom: '20mm' } };
    const text = await pdfText(await convert(at('/r/1'), { options }));
    // The address reached (after the redirect); nothing of about:blank.
    expect(text.replace(/\s+/g, '')).toContain(`From${at('/page.html')}.`);
    const html = await pdfText(await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>Body</p>', options } }));
    expect(html).toContain('From .');
    expect(html).not.toContain('about:blank');
  });

  it('converts Markdown by its type, and generic types by the final URL extension', async () => {
    expect(await pdfText(await convert(at('/notes.md')))).toContain('Remote notes');
    expect(await pdfText(await convert(at('/plain.md')))).toContain('Plain markdown');
    expect(await pdfText(await convert(at('/plain.html')))).toContain('Plain html');
  });

  it('converts a PNG into a one-page PDF with image defaults (A4, 10 mm margins, contain)', async () => {
    const res = await convert(at('/pic.png'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('1');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const [page] = await readPdf(bytes);
    expect(page.width * MM_PER_POINT).toBeCloseTo(210, 0);
    expect(page.height * MM_PER_POINT).toBeCloseTo(297, 0);
    // The 60×40 image, kept in proportion, spans the 190 mm between the 10 mm side margins and is centred
    // between the 10 mm top and bottom margins.
    const [{ images }] = await readPdfDrawing(bytes);
    expect(images).toHaveLength(1);
    const [img] = images;
    const mm = (points: number) => points * MM_PER_POINT;
    // Within 0.5 mm (Chromium lays out in whole CSS pixels of 0.26 mm); a failure shows `what` and the value.
    const near = (what: string, actual: number, expected: number) => expect({ [what]: Math.abs(actual - expected) <= 0.5 ? expected : actual }).toEqual({ [what]: expected });
    near('left margin', mm(img.x), 10);
    near('width', mm(img.width), 190);
    near('height', mm(img.height), (190 * 40) / 60);
    near('centre from the top', 297 - mm(img.y + img.height / 2), 10 + 277 / 2);
  });

  it('decodes the declared charset', async () => {
    expect(await pdfText(await convert(at('/latin1')))).toContain('café crème');
  });

  it('decodes windows-1252 (the bytes 0x80–0x9F too) whether the header or only a <meta> declares it', async () => {
    // Node's TextDecoder (20.18.3 on) reads windows-1252 as Latin-1: € and curly quotes came out as C1 controls.
    for (const path of ['/cp1252-header', '/cp1252-meta']) {
      expect(await pdfText(await convert(at(path)))).toContain('€ 5 “quoted” – — ™');
    }
  });

  it('reads the <meta> when the header names no known charset, and takes a <meta> naming UTF-16 as UTF-8, as browsers do', async () => {
    expect(await pdfText(await convert(at('/unknown-header-charset')))).toContain('café €');
    expect(await pdfText(await convert(at('/meta-utf16')))).toContain('Grüße');
  });

  it('decodes compressed bodies: gzip, br, and deflate with or without its zlib header', async () => {
    expect(await pdfText(await convert(at('/gzipped')))).toContain('Gzip page');
    expect(await pdfText(await convert(at('/brotli')))).toContain('Brotli page');
    expect(await pdfText(await convert(at('/deflate')))).toContain('Zlib wrapped page');
    expect(await pdfText(await convert(at('/deflate-raw')))).toContain('Raw stream page');
  });

  it('follows up to 5 redirects, re-checking each', async () => {
    expect(await pdfText(await convert(at('/r/5')))).toContain('Remote page');
    expect(await errorOf(await convert(at('/r/6')))).toMatchObject({ status: 422, code: 'URL_FETCH_FAILED', details: { reason: 'too_many_redirects' } });
    expect(await pdfText(await convert(at('/heavy-redirect')))).toContain('Remote page');
  });

  it('refuses redirects that leave HTTPS or lead to private addresses', async () => {
    expect(await errorOf(await convert(at('/to-http')))).toMatchObject({ status: 400, code: 'INVALID_URL', details: { reason: 'not_https' } });
    expect(await errorOf(await convert(at('/to-private')))).toMatchObject({ status: 400, code: 'INVALID_URL', details: { reason: 'private_address' } });
    expect(await errorOf(await convert(at('/to-metadata')))).toMatchObject({ status: 400, code: 'INVALID_URL' });
    expect(privateSite.hits).toEqual([]);
    expect(plain.hits).toEqual([]);
  });

  it('maps remote failures to the 422 codes and records a failed job', async () => {
    const missing = await errorOf(await convert(at('/missing')));
    expect(missing).toMatchObject({ status: 422, code: 'URL_FETCH_HTTP_ERROR', details: { status_code: 404 } });
    expect(await stack.services.jobs.get(missing.details.job_id)).toMatchObject({ status: 'failed', error_code: 'URL_FETCH_HTTP_ERROR' });
    expect(await errorOf(await convert(at('/broken')))).toMatchObject({ status: 422, code: 'URL_FETCH_HTTP_ERROR', details: { status_code: 503 } });
    expect(await errorOf(await convert(at('/data.json')))).toMatchObject({ status: 422, code: 'URL_CONTENT_TYPE_NOT_SUPPORTED', details: { content_type: 'application/json' } });
    expect(await errorOf(await convert(at('/noext')))).toMatchObject({ status: 422, code: 'URL_CONTENT_TYPE_NOT_SUPPORTED' });
    expect(await errorOf(await convert('https://no-such-host.invalid/page.html'))).toMatchObject({ status: 422, code: 'URL_FETCH_FAILED', details: { reason: 'dns' } });
    expect(await errorOf(await convert(`https://localhost:${refusedPort}/`))).toMatchObject({ status: 422, code: 'URL_FETCH_FAILED', details: { reason: 'connect' } });
    expect(await errorOf(await convert(`https://localhost:${untrusted.port}/`))).toMatchObject({ status: 422, code: 'URL_FETCH_FAILED', details: { reason: 'tls' } });
  });

  it('caps the download at 5 MB of decoded bytes, whatever the headers say', async () => {
    for (const path of ['/big', '/chunked-big', '/gzip-bomb', '/deflate-raw-bomb']) {
      expect(await errorOf(await convert(at(path)))).toMatchObject({ status: 422, code: 'URL_FETCH_FAILED', details: { reason: 'too_large' } });
    }
    const lying = await errorOf(await convert(at('/lying-length')));
    expect(lying.status).toBe(422);
  });

  it('gives up on a silent server after 10 seconds', async () => {
    const started = Date.now();
    expect(await errorOf(await convert(at('/slow')))).toMatchObject({ status: 422, code: 'URL_FETCH_TIMEOUT', details: { timeout_seconds: 10, reason: 'silent' } });
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it.each([
    ['missing url', undefined, 'MISSING_URL'],
    ['empty url', '', 'MISSING_URL'],
    ['not a url', 'not a url', 'INVALID_URL'],
    ['http', 'http://example.com/', 'INVALID_URL'],
    ['ftp', 'ftp://example.com/file', 'INVALID_URL'],
    ['localhost', 'https://localhost/', 'INVALID_URL'],
    ['loopback', 'https://127.0.0.1/', 'INVALID_URL'],
    ['hex loopback', 'https://0x7f000001/', 'INVALID_URL'],
    ['decimal loopback', 'https://2130706433/', 'INVALID_URL'],
    ['octal loopback', 'https://0177.0.0.1/', 'INVALID_URL'],
    ['short loopback', 'https://127.1/', 'INVALID_URL'],
    ['mapped loopback', 'https://[::ffff:127.0.0.1]/', 'INVALID_URL'],
    ['ipv6 loopback', 'https://[::1]/', 'INVALID_URL'],
    ['trailing dot', 'https://localhost./', 'INVALID_URL'],
    ['userinfo trick', 'https://example.com@127.0.0.1/', 'INVALID_URL'],
    ['metadata', 'https://169.254.169.254/latest/meta-data/', 'INVALID_URL'],
    ['internal name', 'https://db.internal/', 'INVALID_URL'],
    ['local name', 'https://printer.local/', 'INVALID_URL'],
  ])('refuses %s with %s', async (_name, url, code) => {
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'url', ...(url === undefined ? {} : { url }) } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(code);
  });

  it('charges only successful URL conversions', async () => {
    const fresh = await stack.account({ credits_usd: 1 });
    await stack.request('POST', '/quickjob', { key: fresh.api_key, json: { input_type: 'url', url: at('/missing') } });
    await stack.request('POST', '/quickjob', { key: fresh.api_key, json: { input_type: 'url', url: at('/page.html') } });
    const account = await stack.services.accounts.get(fresh.account_id);
    expect(account).toMatchObject({ total_pdf_count: 1, credits_micros: 990_000 });
  });
});
