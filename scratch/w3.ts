import { ChromiumBrowser } from '../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../functions/core/render/options';
import { NetworkGuard } from '../functions/core/net/guard';
import { PrivateTargetAllowlist } from '../functions/core/net/allowlist';
import { readPdf } from '../test/support/pdf';
(async () => {
  const guard = new NetworkGuard({ resolve: async () => [] }, new PrivateTargetAllowlist(undefined));
  const browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, guard } as any);
  const renderer = new ChromiumRenderer(browser);
  const files: Record<string, string> = {
    'sw.js': 'onconnect = e => e.ports[0].postMessage("shared ran")',
    'svc.js': 'self.addEventListener("install", () => {})',
  };
  const html = `<p id=s>none</p><p id=v>none</p><script>
    try { const sw = new SharedWorker('sw.js'); sw.port.onmessage = e => document.getElementById('s').textContent = e.data; } catch (e) { document.getElementById('s').textContent = 'sw error ' + e; }
    navigator.serviceWorker ? navigator.serviceWorker.register('svc.js').then(() => document.getElementById('v').textContent = 'svc registered', e => document.getElementById('v').textContent = 'svc error ' + e) : (document.getElementById('v').textContent = 'no serviceWorker');
  </script>`;
  const bundle = { documentPath: 'index.html', read: async (p: string) => (files[p] ? Buffer.from(files[p]) : null), size: (p: string) => (files[p] ? files[p].length : null) };
  const r = await renderer.render({ html, options: parsePdfOptions({}), timeoutMs: 20000, networkIdle: { quietMs: 500, maxMs: 5000 }, bundle } as any);
  console.log((await readPdf(r.pdf)).map((p) => p.text));
  await browser.close();
})();
