import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { systemResolver } from '../../../functions/adapters/net/dns-resolver';
import { PrivateTargetAllowlist } from '../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../functions/core/net/guard';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { png } from '../../support/images';
import { pdfOpacities, readPdf, readPdfDrawing } from '../../support/pdf';
import { type TestServer, httpServer } from '../../support/servers';

/** Every answer comes 300 ms late, as from a real remote host (a loopback answer came before the print either way). */
const LATE_MS = 300;
let assets: TestServer;
let browser: ChromiumBrowser;
let renderer: ChromiumRenderer;

beforeAll(async () => {
  assets = await httpServer((req, res) => {
    setTimeout(() => {
      if (req.url?.startsWith('/green.png')) return res.writeHead(200, { 'Content-Type': 'image/png' }).end(png(200, 100, [0, 170, 0]));
      if (req.url === '/style.css') return res.writeHead(200, { 'Content-Type': 'text/css' }).end('p.styled { background: #123456; }');
      if (req.url === '/frame.html') return res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>framed text</p>');
      res.writeHead(404).end();
    }, LATE_MS);
  });
  const guard = new NetworkGuard(systemResolver, new PrivateTargetAllowlist(`localhost:${assets.port}`));
  browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, guard, executablePath: process.env.CHROMIUM_PATH });
  renderer = new ChromiumRenderer(browser);
});
afterAll(async () => {
  await browser?.close();
  await assets?.close();
});

const render = (html: string) => renderer.render({ html, options: parsePdfOptions({}), timeoutMs: 20_000 });

describe('a quick document prints once it has loaded', () => {
  it("waits for its images, stylesheets and frames (readyState said 'complete' at once and it printed without them)", async () => {
    const at = `http://localhost:${assets.port}`;
    const html = `<link rel="stylesheet" href="${at}/style.css"><p class="styled">text</p><img src="${at}/green.png"><iframe src="${at}/frame.html"></iframe>`;
    const { pdf } = await render(html);
    const [page] = await readPdfDrawing(pdf);
    expect(page.images).toHaveLength(1);
    expect(page.fillColors).toContain('#123456');
    expect((await readPdf(pdf))[0].text).toContain('framed text');
  });

  it('runs animation-frame and observer callbacks while it loads (charts and lazy patterns drawn in them printed empty)', async () => {
    // The late image holds load back; meanwhile the page's frames, IntersectionObserver and ResizeObserver run.
    const html = `<p id="raf">raf:none</p><p id="io">io:none</p><p id="ro">ro:none</p><img src="http://localhost:${assets.port}/green.png?hold"><script>
      requestAnimationFrame(() => (document.getElementById('raf').textContent = 'raf:ran'));
      new IntersectionObserver((e) => e[0].isIntersecting && (document.getElementById('io').textContent = 'io:ran')).observe(document.getElementById('io'));
      new ResizeObserver(() => (document.getElementById('ro').textContent = 'ro:ran')).observe(document.getElementById('ro'));
    </script>`;
    const text = (await readPdf((await render(html)).pdf))[0].text;
    expect(text.match(/\w+:\w+/g)).toEqual(['raf:ran', 'io:ran', 'ro:ran']);
  });

  it('prints CSS animations and transitions at their end (a fade-in on load printed invisible, opacity 0)', async () => {
    const html = `<style>@keyframes fade { from { opacity: 0 } to { opacity: 1 } } .fade { animation: fade 5s both }
      .spin { animation: fade 1s infinite }</style><p class="fade">Faded in</p><div class="fade" style="height:40px;background:#0000cc"></div><p class="spin">Spinner</p>`;
    const opacities = await pdfOpacities((await render(html)).pdf);
    expect(opacities.filter((o) => o !== 1)).toEqual([]);
  });

  it('prints images marked loading="lazy" below the first screen (they were never fetched and printed blank)', async () => {
    const inline = `data:image/png;base64,${png(200, 100, [0, 0, 204]).toString('base64')}`;
    const html = `<div style="height:2500px">top</div><img loading="lazy" src="http://localhost:${assets.port}/green.png?lazy"><div style="height:2500px"></div><img loading="lazy" src="${inline}">`;
    const pages = await readPdfDrawing((await render(html)).pdf);
    expect(pages.flatMap((page) => page.images)).toHaveLength(2);
  });

  it('prints a document that a script reopened after load and never closed (it stayed "loading" and waited out its time limit)', async () => {
    const quick = (html: string) => renderer.render({ html, options: parsePdfOptions({}), timeoutMs: 5_000 });
    // document.write after load opens the document anew; without document.close() its readyState stays "loading".
    const written = await quick(`<p>first</p><script>onload = () => setTimeout(() => document.write('<p>written late</p>'), 0)</script>`);
    expect((await readPdf(written.pdf)).map((p) => p.text)).toEqual(['written late']);
    const reopened = await quick(`<p>first</p><script>setTimeout(() => { document.open(); document.write('<p>reopened</p>'); }, 0)</script>`);
    expect((await readPdf(reopened.pdf)).map((p) => p.text)).toEqual(['reopened']);
  });
});
