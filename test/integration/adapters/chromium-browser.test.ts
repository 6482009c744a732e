import type { CDPSession } from 'puppeteer-core';
import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import type { FairSlots } from '../../../functions/adapters/chromium/fair-slots';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { RenderNotStartedError, RenderTimeoutError, RendererStoppedError } from '../../../functions/core/render/ports';

const options = parsePdfOptions({});

/** The browser contexts Chromium has now (the pool's own root session; no page of ours is left open to ask). */
async function liveContexts(browser: ChromiumBrowser): Promise<string[]> {
  const { root } = await (browser as unknown as { instance: Promise<{ root: CDPSession }> }).instance;
  return ((await root.send('Target.getBrowserContexts')) as { browserContextIds: string[] }).browserContextIds;
}

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

  it('gives back the slot a page takes again after waiting idle, when its document ended meanwhile', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH });
    try {
      const slots = (browser as unknown as { slots: FairSlots }).slots;
      const acquire = slots.acquire.bind(slots);
      let resumed!: () => void;
      const idleEnded = new Promise<void>((resolve) => (resumed = resolve));
      jest.spyOn(slots, 'acquire').mockImplementation(async (tenant, resume) => {
        const release = await acquire(tenant, resume);
        if (resume) resumed();
        return release;
      });
      // Loaded, the page waits for a fetch that is never answered (no slot held meanwhile); during that wait its third
      // worker ends the document, and the wait ends later, at the idle limit, taking a slot again.
      const html = `<p>x</p><script>onload = () => { fetch('never.json').catch(() => {});
        setTimeout(() => { for (let i = 0; i < 3; i++) new Worker(URL.createObjectURL(new Blob(['for (;;) {}']))); }, 300); };</script>`;
      const bundle = { documentPath: 'doc.html', read: () => new Promise<null>(() => undefined), size: () => 10 };
      const renderer = new ChromiumRenderer(browser);
      await expect(renderer.render({ html, options, timeoutMs: 20_000, networkIdle: { quietMs: 100, maxMs: 3_000 }, bundle })).rejects.toMatchObject({ details: { reason: 'too_many_workers' } });
      await idleEnded;
      await new Promise((resolve) => setImmediate(resolve));
      // Kept, that slot was lost for good: with one slot, no document would print again.
      expect(slots.load).toEqual({ active: 0, waiting: 0 });
      expect((await renderer.render({ html: '<p>next</p>', options, timeoutMs: 10_000 })).pages).toBe(1);
    } finally {
      await browser.close();
    }
  }, 30_000);
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

describe('ChromiumBrowser relaunch', () => {
  it('fails a document waiting on its page when the browser dies under it, for that reason rather than at its own limit, and relaunches', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
    try {
      const renderer = new ChromiumRenderer(browser);
      let asked!: () => void;
      const assetAsked = new Promise<void>((resolve) => (asked = resolve));
      // The stylesheet's read never answers: the page waits on its load, with no command pending that could fail.
      const waiting = renderer.render({
        html: '<link rel="stylesheet" href="style.css"><p>x</p>',
        options,
        timeoutMs: 40_000,
        bundle: { documentPath: 'doc.html', read: () => (asked(), new Promise<null>(() => undefined)), size: () => 10 },
      });
      waiting.catch(() => undefined);
      await assetAsked;
      const pid = (await browser.processId())!;
      process.kill(pid, 'SIGKILL');
      await expect(waiting).rejects.toThrow(/its browser went away \(browser disconnected\)/);
      expect((await renderer.render({ html: '<p>after</p>', options, timeoutMs: 20_000 })).pages).toBe(1);
      expect(await browser.processId()).not.toBe(pid);
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe('ChromiumBrowser contexts', () => {
  it("disposes a document's browser context once its work is done, whether it succeeded or failed", async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH });
    try {
      const used: string[] = [];
      await browser.withPage(async (page) => {
        used.push(page.browserContextId);
      });
      await expect(
        browser.withPage(async (page) => {
          used.push(page.browserContextId);
          throw new Error('the document failed');
        }),
      ).rejects.toThrow('the document failed');
      expect(new Set(used).size).toBe(2);
      // A context left behind keeps its renderer, its storage and its proxy for as long as the browser lives.
      expect((await liveContexts(browser)).filter((id) => used.includes(id))).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('gives back the slot and the context of a document at its time limit, while its page still waits for what never comes', async () => {
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH });
    try {
      const renderer = new ChromiumRenderer(browser);
      const used: string[] = [];
      const withPage = browser.withPage.bind(browser);
      jest.spyOn(browser, 'withPage').mockImplementation((work, placement) =>
        withPage((page) => {
          used.push(page.browserContextId);
          return work(page);
        }, placement),
      );
      // The stylesheet's read never answers: the page never loads, and no command of the render is pending to time out.
      const stuck = renderer.render({
        html: '<link rel="stylesheet" href="style.css"><p>stuck</p>',
        options,
        timeoutMs: 1_000,
        bundle: { documentPath: 'doc.html', read: (path) => (path === 'doc.html' ? null : new Promise<null>(() => undefined)), size: () => 10 },
      });
      await expect(stuck).rejects.toBeInstanceOf(RenderTimeoutError);
      // The one slot is free again: the next document prints (it waited for ever behind the stuck one before).
      expect((await renderer.render({ html: '<p>next</p>', options, timeoutMs: 10_000 })).pages).toBe(1);
      expect((await liveContexts(browser)).filter((id) => used.includes(id))).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 30_000);
});
