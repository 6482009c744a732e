import dgram from 'node:dgram';
import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { systemResolver } from '../../../functions/adapters/net/dns-resolver';
import { PrivateTargetAllowlist } from '../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../functions/core/net/guard';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { readPdf } from '../../support/pdf';
import { type TestServer, httpServer, udpListener } from '../../support/servers';

let secret: TestServer;
let redirector: TestServer;
let browser: ChromiumBrowser;
let renderer: ChromiumRenderer;
/** Streams of /endless the server has seen end (the proxy must end them when the document is done). */
let endlessClosed = 0;
/** Resolves once /endless has started streaming: /after-endless.css answers only then, which holds the page's load. */
let endlessStarted: () => void;
const endlessStreaming = new Promise<void>((resolve) => (endlessStarted = resolve));

beforeAll(async () => {
  secret = await httpServer((_req, res) => res.end('secret'));
  redirector = await httpServer((req, res) => {
    if (req.url === '/page.css') return res.writeHead(200, { 'Content-Type': 'text/css' }).end('body { color: rgb(1, 2, 3); }');
    if (req.url === '/after-endless.css') {
      endlessStreaming.then(() => res.writeHead(200, { 'Content-Type': 'text/css' }).end('p { color: blue; }'));
      return;
    }
    if (req.url === '/endless') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      endlessStarted();
      const tick = setInterval(() => res.write('x'.repeat(1024)), 20);
      res.on('close', () => {
        clearInterval(tick);
        endlessClosed++;
      });
      return;
    }
    res.writeHead(302, { Location: `http://127.0.0.1:${secret.port}/after-redirect` }).end();
  });
  // Only the redirector is allowed; the secret server stays private.
  const guard = new NetworkGuard(systemResolver, new PrivateTargetAllowlist(`localhost:${redirector.port}`));
  browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, guard, executablePath: process.env.CHROMIUM_PATH });
  renderer = new ChromiumRenderer(browser);
});
afterAll(async () => {
  await browser?.close();
  await secret?.close();
  await redirector?.close();
});

const options = parsePdfOptions({});

describe('page sub-requests go through the network guard', () => {
  it('refuses loopback, private, metadata, internal and file: targets, counts them, and still prints the page', async () => {
    const p = secret.port;
    const html = `<p>visible text</p>
      <img src="http://127.0.0.1:${p}/img.png"><img src="http://localhost:${p}/b.png"><img src="http://[::1]:${p}/c.png">
      <img src="http://169.254.169.254/latest/meta-data/"><img src="http://0x7f000001:${p}/d.png"><iframe src="http://10.0.0.1/"></iframe>
      <img src="file:///etc/passwd"><link rel="stylesheet" href="file:///etc/hostname">`;
    // Waiting for the network to go quiet makes the count complete (printing at `load` may precede late requests).
    const result = await renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 300, maxMs: 10_000 } });
    expect((await readPdf(result.pdf))[0].text).toContain('visible text');
    expect(result.renderTimeout).toBe(false);
    expect(result.blockedRequests).toBe(8);
    expect(secret.hits).toEqual([]);
  });

  it('refuses the private target a permitted server redirects to', async () => {
    const blocked = await browser.withPage(async (page) => {
      await page.session.send('Page.setDocumentContent', { frameId: page.frameId, html: '<p>x</p>' });
      const { result } = await page.session.send('Runtime.evaluate', {
        expression: `new Promise((resolve) => { const img = new Image(); img.onload = () => resolve('loaded'); img.onerror = () => resolve('refused'); img.src = 'http://localhost:${redirector.port}/redirect.png'; })`,
        awaitPromise: true,
      });
      expect(result.value).toBe('refused');
      return page.proxy.refused;
    });
    expect(redirector.hits).toContain('/redirect.png');
    expect(secret.hits).toEqual([]);
    expect(blocked).toEqual([`127.0.0.1:${secret.port}`]);
  });

  it('lets allowed targets through', async () => {
    const result = await renderer.render({ html: `<link rel="stylesheet" href="http://localhost:${redirector.port}/page.css"><p>styled</p>`, options, timeoutMs: 20_000, networkIdle: { quietMs: 200, maxMs: 10_000 } });
    expect(redirector.hits).toContain('/page.css');
    expect(result.blockedRequests).toBe(0);
  });

  it('ends a plain-http response still streaming when its document is done (no upstream connection outlives it)', async () => {
    // The stylesheet holds the document's load until the stream has begun, so the print cannot come first.
    const html = `<p>streaming</p><script>fetch('http://localhost:${redirector.port}/endless')</script><link rel="stylesheet" href="http://localhost:${redirector.port}/after-endless.css">`;
    const result = await renderer.render({ html, options, timeoutMs: 20_000 });
    expect(result.pdf.length).toBeGreaterThan(0);
    const deadline = Date.now() + 5_000;
    while (endlessClosed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(endlessClosed).toBe(1);
  });

  it('refuses WebSockets to private targets', async () => {
    const blocked = await browser.withPage(async (page) => {
      await page.session.send('Page.setDocumentContent', { frameId: page.frameId, html: '<p>ws</p>' });
      const { result } = await page.session.send('Runtime.evaluate', {
        expression: `new Promise((resolve) => { const ws = new WebSocket('ws://127.0.0.1:${secret.port}/socket'); ws.onopen = () => resolve('open'); ws.onerror = () => resolve('error'); })`,
        awaitPromise: true,
      });
      expect(result.value).toBe('error');
      return page.blockedRequests();
    });
    expect(blocked).toBe(1);
    expect(secret.hits).toEqual([]);
  });

  it('prints a page whose resource never answers as it stands, once the idle wait runs out', async () => {
    const hang = await httpServer(() => undefined);
    const guard = new NetworkGuard(systemResolver, new PrivateTargetAllowlist(`localhost:${hang.port}`));
    const b = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, guard, executablePath: process.env.CHROMIUM_PATH });
    try {
      // Without the idle wait's 1.5 s cut-off the render would end in the 20 s limit's RenderTimeoutError instead.
      const result = await new ChromiumRenderer(b).render({ html: `<p>partial</p><img src="http://localhost:${hang.port}/never.png">`, options, timeoutMs: 20_000, networkIdle: { quietMs: 200, maxMs: 1500 } });
      expect(result.renderTimeout).toBe(true);
      expect((await readPdf(result.pdf))[0].text).toContain('partial');
    } finally {
      await b.close();
      await hang.close();
    }
  });

  it('sends no WebRTC UDP outside the proxy', async () => {
    const udp = await udpListener();
    try {
      // Positive control: the listener does count a datagram that reaches it.
      const sender = dgram.createSocket('udp4');
      await new Promise<void>((resolve, reject) => sender.send('probe', udp.port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
      sender.close();
      for (const until = Date.now() + 5_000; udp.packets === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
      expect(udp.packets).toBe(1);

      const evaluated = await browser.withPage(async (page) => {
        await page.session.send('Page.setDocumentContent', { frameId: page.frameId, html: '<p>rtc</p>' });
        return page.session.send('Runtime.evaluate', {
          expression: `(async () => {
            const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${udp.port}' }] });
            pc.createDataChannel('x');
            await pc.setLocalDescription(await pc.createOffer());
            await new Promise((r) => setTimeout(r, 1500));
            return pc.iceGatheringState;
          })()`,
          awaitPromise: true,
        });
      });
      // The script ran to its end, and gathering finished without any UDP candidate (with UDP allowed, Chromium
      // is still gathering against the silent STUN server at this point, and has sent it binding requests).
      expect(evaluated.exceptionDetails).toBeUndefined();
      expect(evaluated.result).toEqual({ type: 'string', value: 'complete' });
      expect(udp.packets).toBe(1);
    } finally {
      udp.close();
    }
  });
});
