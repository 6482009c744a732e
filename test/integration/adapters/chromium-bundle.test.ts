import { readFileSync } from 'node:fs';
import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer, MAX_LINKS_TO_BUNDLE_FILES } from '../../../functions/adapters/chromium/renderer';
import { systemResolver } from '../../../functions/adapters/net/dns-resolver';
import { PrivateTargetAllowlist } from '../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../functions/core/net/guard';
import { hasNamedDestination } from '../../../functions/core/pdf/links';
import { parsePdfOptions } from '../../../functions/core/render/options';
import type { RenderBundle } from '../../../functions/core/render/ports';
import { png } from '../../support/images';
import { pdfFontNames, pdfOpacities, readPdf, readPdfDrawing, readPdfLinks } from '../../support/pdf';
import { type TestCa, type TestServer, httpServer, httpsServer, makeTestCa } from '../../support/servers';

let remote: TestServer;
const remoteCookies: string[] = [];
let secret: TestServer;
let ca: TestCa;
let browser: ChromiumBrowser;
let renderer: ChromiumRenderer;
const options = parsePdfOptions({});

beforeAll(async () => {
  ca = makeTestCa();
  // "Remote" https host: allowed through the guard; Chromium is told to accept its test certificate.
  remote = await httpsServer(ca, (req, res) => {
    if (req.url === '/remote.png') return res.writeHead(200, { 'Content-Type': 'image/png' }).end(png(7, 5));
    // A cookie set by one document's request to another site, and the cookies later requests send there.
    if (req.url === '/set-cookie.png') return res.writeHead(200, { 'Content-Type': 'image/png', 'Set-Cookie': 'seen=1; Path=/; Max-Age=3600; SameSite=None; Secure' }).end(png(1, 1));
    if (req.url?.startsWith('/cookie.png')) {
      remoteCookies.push(req.headers.cookie ?? 'none');
      return res.writeHead(200, { 'Content-Type': 'image/png' }).end(png(1, 1));
    }
    res.writeHead(404).end();
  });
  secret = await httpServer((_req, res) => res.end('secret'));
  const guard = new NetworkGuard(systemResolver, new PrivateTargetAllowlist(`localhost:${remote.port}`));
  browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, guard, executablePath: process.env.CHROMIUM_PATH, extraArgs: ['--ignore-certificate-errors'] });
  renderer = new ChromiumRenderer(browser);
});
afterAll(async () => {
  await browser?.close();
  await remote?.close();
  await secret?.close();
});

function bundleOf(files: Record<string, string | Buffer>, documentPath: string, reads: string[] = []): RenderBundle {
  return {
    documentPath,
    read: async (path) => {
      reads.push(path);
      const f = files[path];
      return f === undefined ? null : Buffer.from(f);
    },
    size: (path) => (files[path] === undefined ? null : Buffer.byteLength(files[path])),
  };
}

/** Reports what the page saw as text, so the PDF shows whether each reference resolved. */
const REPORT = `<p id="out"></p><script>
  addEventListener('load', () => {
    const imgs = [...document.images].map((i) => i.id + '=' + i.naturalWidth + 'x' + i.naturalHeight).join(' ');
    const color = getComputedStyle(document.querySelector('h1')).color;
    const size = getComputedStyle(document.querySelector('h1')).fontSize;
    document.getElementById('out').textContent = 'color=' + color + ' size=' + size + ' ' + imgs + ' loc=' + location.href;
  });
</script>`;

describe('rendering with a bundle as the page world', () => {
  it('resolves relative and bundle-root references from the bundle, loads remote https and data:, counts missing files', async () => {
    const files = {
      'docs/guide/intro.html': 'unused: the html comes with the request',
      'docs/css/site.css': 'h1 { color: rgb(10, 20, 30); }',
      'shared/base.css': 'h1 { font-size: 31px; }',
      'docs/img/logo.png': png(3, 2),
    };
    const html = `<!DOCTYPE html><html><head><link rel="stylesheet" href="../css/site.css"><link rel="stylesheet" href="/shared/base.css">
      <link rel="stylesheet" href="../css/absent.css"></head><body><h1>Guide</h1>
      <img id="rel" src="../img/logo.png"><img id="root" src="/docs/img/logo.png"><img id="gone" src="nothing.png"><img id="gone2" src="/nothing.png">
      <img id="remote" src="https://localhost:${remote.port}/remote.png">
      <img id="data" src="data:image/png;base64,${png(4, 4).toString('base64')}">${REPORT}</body></html>`;
    const reads: string[] = [];
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 200, maxMs: 10_000 }, bundle: bundleOf(files, 'docs/guide/intro.html', reads) });
    const text = (await readPdf(result.pdf))[0].text;
    expect(text).toContain('color=rgb(10, 20, 30)');
    expect(text).toContain('size=31px');
    expect(text).toContain('rel=3x2 root=3x2 gone=0x0 gone2=0x0 remote=7x5 data=4x4');
    expect(text).toContain('loc=https://bundle.invalid/docs/guide/intro.html');
    expect(result.missingAssets).toBe(3); // absent.css, nothing.png, /nothing.png
    expect(result.blockedRequests).toBe(0);
    expect(result.renderTimeout).toBe(false);
    expect(remote.hits).toContain('/remote.png');
    // The document itself comes from the request; the bundle is read only for what the page asked for.
    expect(reads.sort()).toEqual(['docs/css/absent.css', 'docs/css/site.css', 'docs/guide/nothing.png', 'docs/img/logo.png', 'nothing.png', 'shared/base.css']);
  });

  it('keeps links to other documents of the bundle (at their bundle URL, counted) and prints links to its other files as text; links within the page and elsewhere stay', async () => {
    const html = `<a href="docs/guide.html#setup">Guide</a> <a href="/files/report.xlsx">Sheet</a> <a href="docs/gone.html">Gone</a> <a href="#end">End</a>
      <a href="https://example.com/x">Out</a> <a href="docs/guide.html?v=2">Again</a><div style="height:2000px"></div><h2 id="end">End</h2>`;
    const documents = new Set(['index.html', 'docs/guide.html']);
    const bundle = { ...bundleOf({ 'index.html': html }, 'index.html'), isDocument: (path: string) => documents.has(path) };
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle });
    const links = (await readPdfLinks(result.pdf)).flat();
    expect(links.map((l) => `${l.text} -> ${l.target}`)).toEqual([
      'Guide -> https://bundle.invalid/docs/guide.html#setup',
      'End -> page:1',
      'Out -> https://example.com/x',
      'Again -> https://bundle.invalid/docs/guide.html?v=2',
    ]);
    expect(result.documentLinks).toBe(2);
    expect((await readPdf(result.pdf))[0].text).toContain('Guide Sheet Gone End Out Again');

    // Without isDocument (no documents named), every link to a bundle file prints as its text.
    const plain = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle: bundleOf({ 'index.html': html }, 'index.html') });
    expect((await readPdfLinks(plain.pdf)).flat().map((l) => l.text)).toEqual(['End', 'Out']);
    expect(plain.documentLinks).toBeUndefined();

    // Past MAX_LINKS_TO_BUNDLE_FILES they all print as text (each kept one costs the job's Finish a rewrite).
    const many = `${'<a href="docs/guide.html">G</a> '.repeat(MAX_LINKS_TO_BUNDLE_FILES + 1)}<a href="https://example.com/x">Out</a>`;
    const capped = await renderer.render({ html: many, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle: { ...bundleOf({ 'index.html': many }, 'index.html'), isDocument: (path: string) => documents.has(path) } });
    expect((await readPdfLinks(capped.pdf)).flat().map((l) => l.target)).toEqual(['https://example.com/x']);
    expect(capped.documentLinks).toBeUndefined();
  });

  it("finds its links and names its destinations whatever the page's scripts replaced (they run in a world of their own)", async () => {
    const documents = new Set(['index.html', 'docs/guide.html']);
    const render = (html: string) =>
      renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle: { ...bundleOf({ 'index.html': html }, 'index.html'), isDocument: (path: string) => documents.has(path) } });
    // Element.prototype.append throwing stopped the script before it answered: the stylesheet's link kept the internal address.
    const throwing = await render(`<a href="docs/guide.html">Guide</a> <a href="site.css">Css</a><h2 id="a">A</h2>
      <script>Element.prototype.append = () => { throw new Error('no'); };</script>`);
    expect((await readPdfLinks(throwing.pdf)).flat().map((l) => `${l.text} -> ${l.target}`)).toEqual(['Guide -> https://bundle.invalid/docs/guide.html']);
    expect(throwing.documentLinks).toBe(1);
    expect(hasNamedDestination(throwing.pdf)('a')).toBe(true);
    // A querySelectorAll answering one link kept all of them past MAX_LINKS_TO_BUNDLE_FILES.
    const hiding = await render(`${'<a href="docs/guide.html">G</a> '.repeat(MAX_LINKS_TO_BUNDLE_FILES + 1)}
      <script>const all = Document.prototype.querySelectorAll; document.querySelectorAll = function (s) { return [...all.call(this, s)].slice(0, 1); };</script>`);
    expect((await readPdfLinks(hiding.pdf)).flat()).toEqual([]);
    expect(hiding.documentLinks).toBeUndefined();
  });

  it("names a destination for each element with an id (for other files' links to land on), adding no link, text or layout", async () => {
    // A script printing its links' addresses as notes (on beforeprint) lists the page's one link, not those naming destinations.
    const html = `<script>addEventListener('beforeprint', () => { document.getElementById('a').textContent += ' notes ' + document.querySelectorAll('a[href]').length; });</script>
      <style>body > :last-child { color: rgb(255, 0, 0) } body:last-child h2 { color: rgb(0, 0, 255) }</style><h2 id="a">A</h2><p id="two words">B</p><p>last</p>`;
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle: bundleOf({ 'index.html': html }, 'index.html') });
    const has = hasNamedDestination(result.pdf);
    expect([has('a'), has('two%20words'), has('c')]).toEqual([true, true, false]);
    expect((await readPdfLinks(result.pdf)).flat()).toEqual([]);
    expect((await readPdf(result.pdf)).map((p) => p.text)).toEqual(['A notes 0 B last']);
    // The page's own `body > :last-child` still finds its last paragraph, and `body:last-child` the body: the
    // destinations' links live in the head.
    expect((await readPdfDrawing(result.pdf))[0].fillColors).toEqual(expect.arrayContaining(['#ff0000', '#0000ff']));
  });

  it('prints animations started after load at their end too (a bundle page waits for quiet after its load)', async () => {
    const html = `<style>@keyframes fade { from { opacity: 0 } to { opacity: 1 } } .fade { animation: fade 5s both }</style>
      <p id="late">Shown late</p><script>setTimeout(() => document.getElementById('late').classList.add('fade'), 30);</script>`;
    const { pdf } = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 300, maxMs: 8_000 }, bundle: bundleOf({ 'index.html': html }, 'index.html') });
    const opacities = await pdfOpacities(pdf);
    expect(opacities.filter((o) => o !== 1)).toEqual([]);
  });

  it('blocks and counts private, local and file: requests while the page still renders', async () => {
    const html = `<h1>Blocked</h1><img id="a" src="http://127.0.0.1:${secret.port}/x.png"><img id="b" src="http://localhost:${secret.port}/y.png">
      <img id="c" src="file:///etc/passwd"><img id="d" src="http://169.254.169.254/latest/meta-data">${REPORT}`;
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 200, maxMs: 10_000 }, bundle: bundleOf({}, 'index.html') });
    expect((await readPdf(result.pdf))[0].text).toContain('Blocked');
    expect(result.blockedRequests).toBe(4);
    expect(result.missingAssets).toBe(0);
    expect(secret.hits).toEqual([]);
  });

  it('counts shared workers (allowed at the bundle origin) against the document\'s worker limit', async () => {
    const files = { 'busy.js': 'for (;;) {}' };
    const html = `<p>x</p><script>for (const name of ['a', 'b', 'c']) new SharedWorker('busy.js', { name });</script>`;
    await expect(renderer.render({ html, options, timeoutMs: 20_000, bundle: bundleOf(files, 'index.html') })).rejects.toMatchObject({
      code: 'INVALID_PARAMETER',
      details: { reason: 'too_many_workers' },
    });
  });

  it('cannot climb out of the bundle: ".." stops at the bundle root', async () => {
    const html = `<h1>Up</h1><img id="up" src="../../../../etc/logo.png">${REPORT}`;
    const reads: string[] = [];
    const result = await renderer.render({ html, options, timeoutMs: 20_000, bundle: bundleOf({ 'etc/logo.png': png(2, 2) }, 'a/b.html', reads) });
    expect((await readPdf(result.pdf))[0].text).toContain('up=2x2');
    expect(reads).toEqual(['etc/logo.png']);
  });

  it('serves a file asked for many times with one read at a time, and refuses files or totals over the serving limits', async () => {
    const limited = new ChromiumRenderer(browser, { maxPdfBytes: 10 * 1024 * 1024, bundleServing: { assetBytes: 200_000, documentBytes: 1_000_000, concurrent: 2 } });
    const reads: string[] = [];
    const files = { 'big.bin': Buffer.alloc(300_000, 1), 'mid.bin': Buffer.alloc(150_000, 2) };
    const html = `<h1>Limits</h1><p id="out"></p><script>
      const size = (p) => fetch(p).then((r) => r.arrayBuffer()).then((b) => b.byteLength, () => 'refused');
      Promise.all([...Array(10)].map((_, i) => size('big.bin?' + i)).concat([...Array(10)].map((_, i) => size('mid.bin?' + i))))
        .then((sizes) => { document.getElementById('out').textContent = sizes.join(' '); });
    </script>`;
    const result = await limited.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 300, maxMs: 10_000 }, bundle: bundleOf(files, 'index.html', reads) });
    const sizes = (await readPdf(result.pdf))[0].text.split(/\s+/).filter((t) => /^\d+$|^refused$/.test(t));
    // big.bin is over the asset limit: refused every time, and never read (its size is known without reading).
    expect(sizes.slice(0, 10)).toEqual(Array(10).fill('refused'));
    expect(reads.filter((p) => p === 'big.bin')).toEqual([]);
    // Once the document's budget is spent, further files are refused without being read either.
    expect(reads.filter((p) => p === 'mid.bin').length).toBeLessThanOrEqual(7);
    // mid.bin fits, but only six copies fit the document's budget (the page itself is a few hundred bytes of it).
    expect(sizes.slice(10).filter((x) => x === '150000')).toHaveLength(6);
    expect(sizes.slice(10).filter((x) => x === 'refused')).toHaveLength(4);
  });

  it('fails the render when the bundle cannot be read (storage trouble), rather than counting a missing file', async () => {
    const bundle: RenderBundle = {
      documentPath: 'a.html',
      read: async () => {
        throw new Error('storage unavailable');
      },
      size: () => 10,
    };
    await expect(renderer.render({ html: '<img src="x.png"><p>x</p>', options, timeoutMs: 20_000, bundle })).rejects.toThrow('storage unavailable');
    // And the browser keeps working for the next document.
    expect((await renderer.render({ html: '<p>next</p>', options, timeoutMs: 20_000 })).pages).toBe(1);
  });

  it('keeps a cleanly printed page for the next document of its scope only', async () => {
    const pageOf = (scope: string | undefined, keep: boolean) =>
      browser.withPage(async (page) => {
        if (keep) page.markReusable();
        return { targetId: page.targetId, reused: page.reused };
      }, { scope });
    const first = await pageOf('job-a', true);
    expect(await pageOf('job-a', true)).toEqual({ targetId: first.targetId, reused: true });
    // Another scope, or no scope, never gets it; a page not marked reusable is disposed.
    expect((await pageOf('job-b', false)).targetId).not.toBe(first.targetId);
    expect((await pageOf(undefined, true)).targetId).not.toBe(first.targetId);
    expect((await pageOf('job-a', false)).targetId).toBe(first.targetId);
    expect((await pageOf('job-a', true)).targetId).not.toBe(first.targetId);
  });

  it('gives no document of a scope a kept page whose renderer died while it waited', async () => {
    const kept = await browser.withPage(async (page) => (page.markReusable(), page), { scope: 'job-died' });
    kept.session.send('Page.crash').catch(() => undefined);
    await kept.crashed.catch(() => undefined);
    const next = await browser.withPage(async (page) => ({ targetId: page.targetId, reused: page.reused }), { scope: 'job-died' });
    expect(next).toEqual({ targetId: expect.not.stringMatching(kept.targetId), reused: false });
  });

  it('hands no page whose network never went quiet to the next document of its scope (it may still be loading)', async () => {
    const pages: string[] = [];
    const withPage = browser.withPage.bind(browser);
    const spy = jest.spyOn(browser, 'withPage').mockImplementation((work, placement) => withPage((page) => (pages.push(page.targetId), work(page)), placement));
    try {
      const scope = 'job-still-loading';
      const idle = { quietMs: 100, maxMs: 1_000 };
      // The stylesheet's read never answers: printed as it stands once the idle wait runs out.
      const hanging: RenderBundle = { documentPath: 'a.html', read: () => new Promise<null>(() => undefined), size: () => 10, scope };
      const first = await renderer.render({ html: '<link rel="stylesheet" href="s.css"><p>first</p>', options, timeoutMs: 20_000, networkIdle: idle, bundle: hanging });
      expect(first.renderTimeout).toBe(true);
      const second = await renderer.render({ html: '<p>second</p>', options, timeoutMs: 20_000, networkIdle: idle, bundle: { ...bundleOf({}, 'b.html'), scope } });
      expect(second.renderTimeout).toBe(false);
      expect(pages).toHaveLength(2);
      expect(pages[1]).not.toBe(pages[0]);
    } finally {
      spy.mockRestore();
    }
  });

  it('gives each document of a scope a clean origin and its own counts, on the same warm page', async () => {
    const pages: string[] = [];
    const withPage = browser.withPage.bind(browser);
    const spy = jest.spyOn(browser, 'withPage').mockImplementation((work, placement) => withPage((page) => (pages.push(page.targetId), work(page)), placement));
    try {
      const scope = 'job-storage';
      const report = `<h1>Seen</h1><p id="out"></p><script>document.getElementById('out').textContent =
        'local=' + localStorage.getItem('k') + ' session=' + sessionStorage.getItem('k') + ' cookie=' + (document.cookie || 'none');</script>`;
      const writer = `<h1>Writer</h1><img src="http://127.0.0.1:${secret.port}/x.png"><script>localStorage.setItem('k', 'L'); sessionStorage.setItem('k', 'S');
        document.cookie = 'k=C; path=/; max-age=3600'; document.write('<p>wrote ' + localStorage.getItem('k') + sessionStorage.getItem('k') + document.cookie + '</p>');</script>`;
      const first = await renderer.render({ html: writer, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 5_000 }, bundle: { ...bundleOf({}, 'a.html'), scope } });
      expect((await readPdf(first.pdf))[0].text).toContain('wrote LSk=C');
      expect(first.blockedRequests).toBe(1);
      const second = await renderer.render({ html: report, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 5_000 }, bundle: { ...bundleOf({}, 'b.html'), scope } });
      expect((await readPdf(second.pdf))[0].text).toContain('local=null session=null cookie=none');
      expect(second.blockedRequests).toBe(0);
      expect(pages).toHaveLength(2);
      expect(pages[1]).toBe(pages[0]);
    } finally {
      spy.mockRestore();
    }
  });

  it("sends none of a document's cookies for other sites with the requests of the next document of its scope", async () => {
    const pages: string[] = [];
    const withPage = browser.withPage.bind(browser);
    const spy = jest.spyOn(browser, 'withPage').mockImplementation((work, placement) => withPage((page) => (pages.push(page.targetId), work(page)), placement));
    try {
      const scope = 'job-remote-cookies';
      const idle = { quietMs: 300, maxMs: 5_000 };
      const site = `https://localhost:${remote.port}`;
      // The first document's request to the site stores a cookie, which its next request there sends (shown here).
      const setter = `<h1>Setter</h1><img src="${site}/set-cookie.png" onload="const i = new Image(); i.src = '${site}/cookie.png?first'; document.body.append(i)">`;
      await renderer.render({ html: setter, options, timeoutMs: 20_000, networkIdle: idle, bundle: { ...bundleOf({}, 'a.html'), scope } });
      await renderer.render({ html: `<h1>Next</h1><img src="${site}/cookie.png?second">`, options, timeoutMs: 20_000, networkIdle: idle, bundle: { ...bundleOf({}, 'b.html'), scope } });
      expect(pages).toHaveLength(2);
      expect(pages[1]).toBe(pages[0]);
      expect(remoteCookies).toEqual(['seen=1', 'none']);
    } finally {
      spy.mockRestore();
    }
  });

  it("sizes the window by a document's own @page rules on a page kept from the scope's last document too, whose scripts replaced DOMParser", async () => {
    const scope = 'job-page-box';
    const idle = { quietMs: 100, maxMs: 5_000 };
    // The first document breaks what reading @page rules uses in its own world; the page is kept for the next file.
    const saboteur = '<h1>First</h1><script>window.DOMParser = function () { throw new Error("no"); }; window.CSSStyleSheet = null;</script>';
    await renderer.render({ html: saboteur, options, timeoutMs: 20_000, networkIdle: idle, bundle: { ...bundleOf({}, 'a.html'), scope } });
    const measured = '<style>@page { margin: 30mm }</style><p id="out"></p><script>document.getElementById("out").textContent = innerWidth + " x " + innerHeight;</script>';
    const second = await renderer.render({ html: measured, options, timeoutMs: 20_000, networkIdle: idle, bundle: { ...bundleOf({}, 'b.html'), scope } });
    expect((await readPdf(second.pdf))[0].text).toBe('566 x 895'); // A4 less 30 mm a side, not the options' 793 x 1122
  });

  it('goes idle with dedicated workers running: a worker\'s script is not a request left in flight for ever', async () => {
    // A worker's own script is announced on the page's session (loaderId "") but finishes on the worker's target:
    // waiting for it held every such document the full idle limit and reported render_timeout.
    const files = { 'w.js': 'postMessage("from-file")' };
    const html = `<h1>Workers</h1><p id="out"></p><script>
      const out = (t) => document.getElementById('out').append(' ' + t);
      new Worker('w.js').onmessage = (e) => out(e.data);
      new Worker(URL.createObjectURL(new Blob(['postMessage("from-blob")'], { type: 'text/javascript' }))).onmessage = (e) => out(e.data);
    </script>`;
    const started = Date.now();
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle: bundleOf(files, 'index.html') });
    expect(result.renderTimeout).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
    const text = (await readPdf(result.pdf))[0].text.replace(/\s+/g, '');
    expect(text).toContain('from-file');
    expect(text).toContain('from-blob');
  });

  it('decodes stylesheets and scripts as browsers do: byte-order mark, then @charset (or the document\'s UTF-8)', async () => {
    const files = {
      'latin1.css': Buffer.concat([Buffer.from('@charset "iso-8859-1"; #a::after { content: "L:caf'), Buffer.from([0xe9]), Buffer.from('"; }')]),
      'utf8.css': '#b::after { content: "U:caf\u00e9"; }',
      'bom.css': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('#c::after { content: "B:caf\u00e9"; }')]),
      'latin1.js': Buffer.concat([Buffer.from('document.getElementById("d").textContent = "J:caf'), Buffer.from([0xe9]), Buffer.from('";')]),
    };
    const html = `<link rel="stylesheet" href="latin1.css"><link rel="stylesheet" href="utf8.css"><link rel="stylesheet" href="bom.css">
      <p id="a"></p><p id="b"></p><p id="c"></p><p id="d"></p><script src="latin1.js" charset="iso-8859-1"></script>`;
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle: bundleOf(files, 'index.html') });
    const text = (await readPdf(result.pdf))[0].text.replace(/\s+/g, '');
    expect(text).toContain('L:caf\u00e9');
    expect(text).toContain('U:caf\u00e9');
    expect(text).toContain('B:caf\u00e9');
    expect(text).toContain('J:caf\u00e9');
  });

  it('loads what only print styles use (a print stylesheet\'s web font and image) before printing', async () => {
    const files = {
      'print.css': '@font-face { font-family: PrintOnly; src: url(fonts/p.ttf); } p { font-family: PrintOnly; } .logo { content: url(img/logo.png); }',
      'fonts/p.ttf': readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSerifCondensed-BoldItalic.ttf')),
      'img/logo.png': png(30, 20),
    };
    const html = `<link rel="stylesheet" media="print" href="print.css"><style>@media screen { p { font-family: monospace; } }</style><p>Printed</p><div class="logo"></div>`;
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 8_000 }, bundle: bundleOf(files, 'index.html') });
    expect(await pdfFontNames(result.pdf)).toEqual(['DejaVuSerifCondensed-BoldItalic']);
    expect((await readPdfDrawing(result.pdf))[0].images).toHaveLength(1);
  });
});
