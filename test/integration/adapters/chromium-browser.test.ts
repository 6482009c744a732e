import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { RendererStoppedError } from '../../../functions/core/render/ports';

const options = parsePdfOptions({});

describe('ChromiumBrowser shutdown', () => {
  it('does not launch a new Chromium for a document still printing when the browser is closed', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
    const renderer = new ChromiumRenderer(browser);
    await renderer.render({ html: '<p>warm</p>', options, timeoutMs: 20_000 });
    // A document that holds its page for a while: closing the browser ends it mid-way.
    const inFlight = renderer.render({ html: '<p>slow</p><script>const t = Date.now(); while (Date.now() - t < 1500) {}</script>', options, timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300));
    await browser.close();
    // Not the document's failure: callers retry it elsewhere instead of recording it as failed.
    await expect(inFlight).rejects.toBeInstanceOf(RendererStoppedError);
    // Its page's clean-up ran after close(): nothing may have started a browser again.
    await new Promise((r) => setTimeout(r, 500));
    expect(await browser.processId()).toBeUndefined();
  });

  it('launches no Chromium for a document that asks for a page after the browser is closed', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH });
    await browser.close();
    await expect(new ChromiumRenderer(browser).render({ html: '<p>late</p>', options, timeoutMs: 20_000 })).rejects.toBeInstanceOf(RendererStoppedError);
    expect(await browser.processId()).toBeUndefined();
  });
});
