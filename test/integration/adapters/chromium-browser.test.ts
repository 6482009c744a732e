import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { RenderNotStartedError, RenderTimeoutError, RendererStoppedError } from '../../../functions/core/render/ports';

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

  it('ends a document waiting on its page when the browser is closed, as stopped rather than at its own limit', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
    let asked!: () => void;
    const assetAsked = new Promise<void>((resolve) => (asked = resolve));
    // The document's stylesheet is read from its bundle, and that read never answers: the page waits on its load.
    const waiting = new ChromiumRenderer(browser).render({
      html: '<link rel="stylesheet" href="style.css"><p>x</p>',
      options,
      // Its own limit comes before its network budget runs out: left waiting, it would end as a render timeout.
      timeoutMs: 6_000,
      networkIdle: { quietMs: 100, maxMs: 12_000 },
      bundle: {
        documentPath: 'doc.html',
        read: async (path) => {
          if (path === 'doc.html') return Buffer.from('<link rel="stylesheet" href="style.css"><p>x</p>');
          asked();
          return new Promise<Buffer | null>(() => undefined);
        },
        size: () => 10,
      },
    });
    waiting.catch(() => undefined);
    await assetAsked;
    await browser.close();
    // Before, it waited out its time limit and failed as the document's render timeout (in a stopping local stack, a
    // bulk task that outlived the stop).
    await expect(waiting).rejects.toBeInstanceOf(RendererStoppedError);
  }, 30_000);

  it('leaves no timer of a bundle document behind when the browser closes while its script runs', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
    // Every timer set meanwhile (calls go through unchanged): a cleared or fired one is marked destroyed.
    const made: NodeJS.Timeout[] = [];
    const spies = (['setTimeout', 'setInterval'] as const).map((fn) => {
      const real = global[fn];
      return jest.spyOn(global, fn).mockImplementation(((...args: Parameters<typeof setTimeout>) => {
        const timer = (real as typeof setTimeout)(...args);
        made.push(timer);
        return timer;
      }) as never);
    });
    const html = '<p>busy</p><script>const t = Date.now(); while (Date.now() - t < 1500) {}</script>';
    let started!: () => void;
    const printing = new Promise<void>((resolve) => (started = resolve));
    const waiting = new ChromiumRenderer(browser).render({
      html,
      options,
      timeoutMs: 15_000,
      networkIdle: { quietMs: 100, maxMs: 12_000 },
      shouldStart: async () => (started(), true),
      bundle: { documentPath: 'doc.html', read: async (path) => (path === 'doc.html' ? Buffer.from(html) : null), size: () => 10 },
    });
    waiting.catch(() => undefined);
    await printing;
    await new Promise((r) => setTimeout(r, 300));
    await browser.close();
    await expect(waiting).rejects.toBeInstanceOf(RendererStoppedError);
    await new Promise((resolve) => setImmediate(resolve));
    for (const spy of spies) spy.mockRestore();
    // The load cap and the network watch ran on for their whole budget and kept a stopped process alive.
    const left = made.filter((t) => !(t as unknown as { _destroyed: boolean })._destroyed);
    expect(left.map((t) => (t as unknown as { _idleTimeout: number })._idleTimeout)).toEqual([]);
  }, 30_000);

  it('launches no Chromium for a document that asks for a page after the browser is closed', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH });
    await browser.close();
    await expect(new ChromiumRenderer(browser).render({ html: '<p>late</p>', options, timeoutMs: 20_000 })).rejects.toBeInstanceOf(RendererStoppedError);
    expect(await browser.processId()).toBeUndefined();
  });
});

describe('ChromiumBrowser slots', () => {
  it('takes no page for a document given up while it waited for its slot (timed out or called off)', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH });
    const prepare = jest.spyOn(browser as unknown as { prepare(): Promise<unknown> }, 'prepare');
    try {
      const renderer = new ChromiumRenderer(browser);
      await renderer.render({ html: '<p>warm</p>', options, timeoutMs: 20_000 });
      prepare.mockClear();
      // The one slot is busy for a while; two documents wait behind it: one past its limit, one called off.
      const busy = renderer.render({ html: '<p>busy</p><script>const t = Date.now(); while (Date.now() - t < 1500) {}</script>', options, timeoutMs: 20_000 });
      const late = renderer.render({ html: '<p>late</p>', options, timeoutMs: 300 });
      let asked = false;
      const calledOff = renderer.render({ html: '<p>off</p>', options, timeoutMs: 20_000, shouldStart: async () => ((asked = true), false) });
      const next = renderer.render({ html: '<p>next</p>', options, timeoutMs: 20_000 });
      await expect(late).rejects.toBeInstanceOf(RenderTimeoutError);
      await expect(calledOff).rejects.toBeInstanceOf(RenderNotStartedError);
      expect(asked).toBe(true);
      expect((await busy).pages).toBe(1);
      expect((await next).pages).toBe(1);
      // Pages for the busy and the next document only (each of the others used to take a fresh context for nothing).
      expect(prepare).toHaveBeenCalledTimes(2);
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe('ChromiumBrowser prepared pages', () => {
  it('gives no document a prepared page whose renderer died while it waited', async () => {
    const browser = new ChromiumBrowser({ prewarm: 2, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
    try {
      await browser.warmUp();
      // The prepared pages' renderers die while idle (killed, out of memory): their pages must not be handed out.
      const { renderers } = await (browser as unknown as { chromiumProcesses(): Promise<{ renderers: number[] }> }).chromiumProcesses();
      expect(renderers.length).toBeGreaterThanOrEqual(2);
      for (const pid of renderers) process.kill(pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 500));
      const renderer = new ChromiumRenderer(browser);
      // Before, the first two documents took the dead pages and failed with "the page crashed".
      for (let i = 0; i < 3; i++) expect((await renderer.render({ html: `<p>after ${i}</p>`, options, timeoutMs: 20_000 })).pages).toBe(1);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
