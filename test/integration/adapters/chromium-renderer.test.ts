import { readFileSync } from 'node:fs';
import { ChromiumBrowser, ChromiumFaultError, launchArgs, roomyDevShm } from '../../../functions/adapters/chromium/browser';
import { BUNDLE_SERVING_LIMITS } from '../../../functions/adapters/chromium/bundle-origin';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { RenderTimeoutError, TooManyPagesError } from '../../../functions/core/render/ports';
import { pdfFontNames, readPdf } from '../../support/pdf';
import { descendants } from '../../support/processes';

const browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 4, executablePath: process.env.CHROMIUM_PATH });
const renderer = new ChromiumRenderer(browser);
const options = parsePdfOptions({});
afterAll(() => browser.close());

const render = (html: string, timeoutMs = 20_000) => renderer.render({ html, options, timeoutMs });

describe('ChromiumRenderer', () => {
  it('prints HTML and counts pages', async () => {
    const result = await render('<p>one</p><p style="page-break-before:always">two</p>');
    expect(result.pages).toBe(2);
    expect((await readPdf(result.pdf)).map((p) => p.text)).toEqual(['one', 'two']);
  });

  it('loads a web font that only print styles use before printing (it was fetched only once printing had begun: too late)', async () => {
    const font = readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSerifCondensed-BoldItalic.ttf')).toString('base64');
    const html = `<style>@font-face { font-family: PrintOnly; src: url(data:font/ttf;base64,${font}); } @media print { p { font-family: PrintOnly; } }</style><p>Printed</p>`;
    expect(await pdfFontNames((await render(html)).pdf)).toEqual(['DejaVuSerifCondensed-BoldItalic']);
  });

  it("launches with its own flags, and keeps puppeteer's /dev/shm opt-out only where /dev/shm is small", async () => {
    await render('<p>warm</p>');
    const commandLine = readFileSync(`/proc/${await browser.processId()}/cmdline`, 'utf8').split('\0');
    // puppeteer merges every --disable-features list into one flag.
    const features = (args: string[]) => args.filter((a) => a.startsWith('--disable-features=')).flatMap((a) => a.slice('--disable-features='.length).split(','));
    const ours = launchArgs({ onLambda: false, roomyDevShm: roomyDevShm() });
    expect(commandLine).toEqual(expect.arrayContaining(ours.filter((a) => !a.startsWith('--disable-features='))));
    expect(features(commandLine)).toEqual(expect.arrayContaining(features(ours)));
    expect(commandLine.includes('--disable-dev-shm-usage')).toBe(!roomyDevShm());
    expect(commandLine).not.toContain('--disable-ipc-flooding-protection');
  });

  it('gives a document no second page: window.open and target=_blank create nothing, and printing is not held up', async () => {
    await render('<p>warm</p>');
    const root = (await browser.processId())!;
    const processes = () => descendants(root).length;
    const before = processes();
    const result = await render(
      `<p>opener</p><a id="a" href="about:blank" target="_blank">x</a><script>
        for (let i = 0; i < 40; i++) window.open('about:blank', '_blank', 'noopener');
        window.open('about:blank');
        document.getElementById('a').click();
      </script>`,
    );
    expect((await readPdf(result.pdf))[0].text).toContain('opener');
    expect(processes()).toBeLessThanOrEqual(before + 2); // the document's own renderer (and a prepared one), not 40 more
  });

  it('prints a document that floods its history (pushState, replaceState, location.hash in a loop), and a document printing beside it', async () => {
    // With puppeteer's --disable-ipc-flooding-protection the browser process handled every one of these navigations:
    // both documents (and those after them) timed out while it worked through the backlog.
    const flood = (step: string) => `<p>moving</p><script>for (let i = 0; i < 300000; i++) ${step}</script>`;
    for (const step of ['history.pushState({}, "", "#" + i)', 'history.replaceState({}, "", "#" + i)', 'location.hash = "#" + i']) {
      const [flooding, beside] = await Promise.all([render(flood(step)), render('<p>beside</p>')]);
      expect((await readPdf(flooding.pdf))[0].text).toBe('moving');
      expect((await readPdf(beside.pdf))[0].text).toBe('beside');
    }
  });

  it("holds a preferCSSPageSize @page size to the options' 200 in cap (a 5000in page printed, which viewers refuse)", async () => {
    const css = (size: string) => `<style>@page { size: ${size} }</style><p>page</p>`;
    const prefer = parsePdfOptions({ preferCSSPageSize: true });
    await expect(renderer.render({ html: css('5000in 5000in'), options: prefer, timeoutMs: 20_000 })).rejects.toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'html', reason: 'page_too_large' } });
    const atCap = await renderer.render({ html: css('200in 10in'), options: prefer, timeoutMs: 20_000 });
    expect((await readPdf(atCap.pdf))[0]).toMatchObject({ width: 14400, text: 'page' });
    // Without preferCSSPageSize the page is scaled onto the options' paper, as before.
    expect((await readPdf((await render(css('5000in 5000in'))).pdf))[0].width).toBeLessThan(600);
  });

  it('prints on landscape paper when asked, portrait otherwise', async () => {
    const [turned] = await readPdf((await renderer.render({ html: '<p>wide</p>', options: parsePdfOptions({ landscape: true }), timeoutMs: 20_000 })).pdf);
    const [upright] = await readPdf((await render('<p>tall</p>')).pdf);
    expect(turned.text).toBe('wide');
    expect(upright.height).toBeGreaterThan(upright.width);
    // The same A4 sheet, turned.
    expect([turned.width, turned.height]).toEqual([upright.height, upright.width]);
  });

  it('prints a document that opens dialogs (alert, confirm, prompt): nobody is there to answer them', async () => {
    const result = await render('<p id="o"></p><script>alert("a"); document.getElementById("o").textContent = "answered " + confirm("b") + " " + JSON.stringify(prompt("c"));</script>', 10_000);
    expect((await readPdf(result.pdf))[0].text).toBe('answered true ""');
  });

  it('refuses a PDF over the size limit while reading it, and keeps working', async () => {
    const small = new ChromiumRenderer(browser, { maxPdfBytes: 20_000, bundleServing: BUNDLE_SERVING_LIMITS });
    const pages = Array.from({ length: 30 }, (_, i) => `<p style="break-after: page">page ${i} ${'text '.repeat(200)}</p>`).join('');
    await expect(small.render({ html: pages, options, timeoutMs: 20_000 })).rejects.toMatchObject({ code: 'PDF_GENERATION_FAILED', details: { reason: 'output_too_large', max_bytes: 20_000 } });
    expect((await small.render({ html: '<p>small</p>', options, timeoutMs: 20_000 })).pages).toBe(1);
  });

  it('with maxPages prints no more than one page past it (of the document or of a pageRanges selection) and says there is more', async () => {
    const pages = (n: number) => Array.from({ length: n }, (_, i) => `<p style="break-after: page">page ${i + 1}</p>`).join('');
    expect(await renderer.render({ html: pages(3), options, timeoutMs: 20_000, maxPages: 5 })).toMatchObject({ pages: 3, morePages: false });
    // Exactly maxPages pages is not more than maxPages.
    expect(await renderer.render({ html: pages(5), options, timeoutMs: 20_000, maxPages: 5 })).toMatchObject({ pages: 5, morePages: false });
    const long = await renderer.render({ html: pages(40), options, timeoutMs: 20_000, maxPages: 5 });
    expect(long).toMatchObject({ pages: 6, morePages: true });
    expect((await readPdf(long.pdf)).map((p) => p.text)).toEqual(['page 1', 'page 2', 'page 3', 'page 4', 'page 5', 'page 6']);
    // A selection is cut the same way; one that fits prints as chosen.
    const chosen = await renderer.render({ html: pages(40), options: parsePdfOptions({ pageRanges: '30-, 2' }), timeoutMs: 20_000, maxPages: 5 });
    expect(chosen).toMatchObject({ pages: 6, morePages: true });
    expect((await readPdf(chosen.pdf)).map((p) => p.text)).toEqual(['page 2', 'page 30', 'page 31', 'page 32', 'page 33', 'page 34']);
    const fits = await renderer.render({ html: pages(40), options: parsePdfOptions({ pageRanges: '2-4' }), timeoutMs: 20_000, maxPages: 5 });
    expect(fits.pages).toBe(3);
    expect(fits.morePages).toBeUndefined();
  });

  describe('page-count bombs (laid out in full to print even one page)', () => {
    const words = (n: number) => `<p>${'ab '.repeat(n)}</p>`;
    const tooMany = async (html: string, pdfOptions = options, maxPages = 25) => {
      const err = await renderer.render({ html, options: pdfOptions, timeoutMs: 30_000, maxPages }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TooManyPagesError);
      return (err as TooManyPagesError).estimatedPages;
    };

    it('refuses documents far past maxPages unprinted: forced breaks, tiny paper, @page size and margins', async () => {
      // Printed, each of these took 4 s to minutes of layout or passed the renderer memory cap.
      expect(await tooMany(`<style>p { break-after: page; margin: 0 }</style>${'<p>x</p>'.repeat(100_000)}`)).toBeGreaterThanOrEqual(100_000);
      expect(await tooMany(`<div style="page-break-before: always">x</div>`.repeat(1500))).toBeGreaterThanOrEqual(1500);
      // Empty elements after content make a blank page each.
      expect(await tooMany(`<p>x</p>${'<div style="break-before: page"></div>'.repeat(3000)}`)).toBeGreaterThanOrEqual(3000);
      expect(await tooMany(words(20_000), parsePdfOptions({ format: null, width: '10px', height: '10px' }))).toBeGreaterThan(5000);
      expect(await tooMany(`<style>@page { size: 10px 10px; margin: 0 }</style>${words(20_000)}`)).toBeGreaterThan(5000);
      expect(await tooMany(`<style>@media print { @page { margin: 5.8in 4in } }</style>${words(20_000)}`, parsePdfOptions({ preferCSSPageSize: true }))).toBeGreaterThan(1000);
      expect(await tooMany('<div style="height: 3000000px">tall</div>', options, 100)).toBeGreaterThan(2000);
    }, 90_000);

    it('prints documents the estimate must not refuse as they print without it', async () => {
      // Breaks of elements without a box make no page; nested and neighbouring breaks at one place make one.
      expect(await renderer.render({ html: `<p>x</p>${'<div style="display: none; break-before: page">hidden</div>'.repeat(3000)}`, options, timeoutMs: 20_000, maxPages: 25 })).toMatchObject({ pages: 1 });
      const together = '<div style="break-before: page; break-after: page"><p style="break-before: page; break-after: page">x</p></div>'.repeat(600);
      expect(await renderer.render({ html: together, options, timeoutMs: 20_000, maxPages: 25 })).toMatchObject({ pages: 26, morePages: true });
      // Breaks of inline-level boxes and table cells make no page (Chromium ignores them): a two-page document.
      const inline = `<p>${'<span style="break-after: page">ab </span>'.repeat(1500)}</p><table><tr>${'<td style="break-before: page">c</td>'.repeat(1500)}</tr></table>`;
      expect(await renderer.render({ html: inline, options, timeoutMs: 20_000, maxPages: 25 })).toMatchObject({ pages: 2, morePages: false });
      // Many elements, few pages.
      expect(await renderer.render({ html: `<p>${'<span>a</span> '.repeat(3000)}</p>`, options, timeoutMs: 20_000, maxPages: 25 })).toMatchObject({ pages: 1, morePages: false });
      // @page rules for the screen only, and a small page only for a named page nobody uses.
      const screenOnly = `<style>@media screen { @page { size: 10px } } @page tiny { size: 10px }</style>${words(1000)}`;
      expect(await renderer.render({ html: screenOnly, options, timeoutMs: 20_000, maxPages: 25 })).toMatchObject({ pages: 1 });
      // Long, but within the estimate's margin: printed and counted as before.
      expect(await renderer.render({ html: `<div style="page-break-before: always">x</div>`.repeat(300), options, timeoutMs: 20_000, maxPages: 25 })).toMatchObject({ pages: 26, morePages: true });
      // A selection that fits is printed as chosen, however long the document.
      const chosen = await renderer.render({ html: `<div style="page-break-before: always">x</div>`.repeat(3000), options: parsePdfOptions({ pageRanges: '2-3' }), timeoutMs: 20_000, maxPages: 25 });
      expect(chosen.pages).toBe(2);
      // A document that was estimated prints as it would have without the estimate.
      const probed = `<style>@page { size: 300px 300px; margin: 0 }</style><p>${'word '.repeat(40)}</p>${'<div>filler</div>'.repeat(1200)}`;
      const [estimated, plain] = await Promise.all([renderer.render({ html: probed, options, timeoutMs: 20_000, maxPages: 25 }), renderer.render({ html: probed, options, timeoutMs: 20_000 })]);
      expect(estimated.morePages).toBe(true);
      expect((await readPdf(estimated.pdf)).slice(0, 3)).toEqual((await readPdf(plain.pdf)).slice(0, 3));
    }, 90_000);
  });

  it('stops a document whose renderer passes the memory cap (typed arrays escape V8\'s heap limit), and keeps working', async () => {
    const capped = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, maxPageMemoryBytes: 400 * 2 ** 20, executablePath: process.env.CHROMIUM_PATH });
    try {
      const cappedRenderer = new ChromiumRenderer(capped);
      // 1.5 GB held by the page: without the cap it prints fine, so only the watch can make this fail.
      const hog = '<script>window.keep = []; for (let i = 0; i < 15; i++) keep.push(new Uint8Array(100 * 2 ** 20).fill(1));</script><p>hog</p>';
      await expect(cappedRenderer.render({ html: hog, options, timeoutMs: 20_000 })).rejects.toMatchObject({
        code: 'PDF_GENERATION_FAILED',
        details: { reason: 'memory_limit', max_memory_mb: 400 },
      });
      expect((await cappedRenderer.render({ html: '<p>after</p>', options, timeoutMs: 20_000 })).pages).toBe(1);
    } finally {
      await capped.close();
    }
  });

  it('says the memory cap stopped a document whose printing passed it (the print fails before the crash is reported)', async () => {
    const capped = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, maxPageMemoryBytes: 400 * 2 ** 20, executablePath: process.env.CHROMIUM_PATH });
    try {
      const cappedRenderer = new ChromiumRenderer(capped);
      // 100,000 one-line pages, all to print (with maxPages the estimate would refuse it unprinted), past the cap.
      const bomb = `<style>p { break-after: page; margin: 0 }</style>${'<p>x</p>'.repeat(100_000)}`;
      await expect(cappedRenderer.render({ html: bomb, options, timeoutMs: 60_000 })).rejects.toMatchObject({
        code: 'PDF_GENERATION_FAILED',
        details: { reason: 'memory_limit', max_memory_mb: 400 },
      });
    } finally {
      await capped.close();
    }
  }, 90_000);

  it('restarts the browser when Blobs kept by a page pass its cap, fails that document, and keeps working', async () => {
    const capped = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, maxBrowserMemoryBytes: 500 * 2 ** 20, executablePath: process.env.CHROMIUM_PATH });
    try {
      const cappedRenderer = new ChromiumRenderer(capped);
      await cappedRenderer.render({ html: '<p>warm</p>', options, timeoutMs: 20_000 });
      const pid = await capped.processId();
      // ~1.5 GB of Blob data, in small pieces so that the renderer itself stays small: the data moves to the browser
      // process. Without the cap it prints fine after its network is quiet, so only the watch can make this fail. The
      // quiet time is long enough for the loop to pass the cap on a busy machine (it printed first under load).
      const hog =
        '<script>window.keep = []; (async () => { for (let i = 0; i < 150; i++) { const a = new Uint8Array(10 * 2 ** 20); a.fill(1); keep.push(new Blob([a])); await new Promise((r) => setTimeout(r, 5)); } })();</script><p>hog</p>';
      await expect(cappedRenderer.render({ html: hog, options, timeoutMs: 40_000, networkIdle: { quietMs: 15_000, maxMs: 30_000 } })).rejects.toMatchObject({
        code: 'PDF_GENERATION_FAILED',
        details: { reason: 'browser_memory_limit', max_memory_mb: 500 },
      });
      expect((await cappedRenderer.render({ html: '<p>after</p>', options, timeoutMs: 20_000 })).pages).toBe(1);
      expect(await capped.processId()).not.toBe(pid);
    } finally {
      await capped.close();
    }
  }, 90_000);

  it('relaunches the browser after it dies', async () => {
    await render('<p>warm</p>');
    const pid = await browser.processId();
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    // Until the pool has noticed the disconnect and dropped the dead browser (bounded; a pool that never notices fails below).
    for (const until = Date.now() + 10_000; (await browser.processId()) === pid && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    expect(await browser.processId()).toBeUndefined();
    const result = await render('<p>after crash</p>');
    expect((await readPdf(result.pdf))[0].text).toBe('after crash');
    expect(await browser.processId()).not.toBe(pid);
  });

  it("lets a document's commands run as long as the document may, past the browser's protocol timeout", async () => {
    // Long jobs have 15 minutes; the protocol timeout (180 s by default) failed any of them that took longer than it.
    const strict = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, protocolTimeoutMs: 1_500, executablePath: process.env.CHROMIUM_PATH });
    try {
      const slow = new ChromiumRenderer(strict);
      // The script runs while the document is set, and the print lays out the pages it made: both commands take ~3 s.
      const html = '<p>slow</p><script>const t = Date.now(); while (Date.now() - t < 3000) {}</script>';
      expect((await slow.render({ html, options, timeoutMs: 20_000 })).pages).toBe(1);
      // The document's own deadline still ends it.
      await expect(slow.render({ html: '<script>for(;;){}</script>', options, timeoutMs: 2_500 })).rejects.toBeInstanceOf(RenderTimeoutError);
    } finally {
      await strict.close();
    }
  });

  it('gives up on a page that never finishes, and keeps working', async () => {
    await expect(render('<script>for(;;){}</script>', 1500)).rejects.toBeInstanceOf(RenderTimeoutError);
    expect((await render('<p>next</p>')).pages).toBe(1);
  });

  it('renders documents concurrently, each in its own context', async () => {
    // Counts documents holding a page at once (the calls go through unchanged), and the contexts they print in.
    let inFlight = 0;
    let mostInFlight = 0;
    const contexts = new Set<string>();
    const withPage = browser.withPage.bind(browser);
    const spy = jest.spyOn(browser, 'withPage').mockImplementation((work, placement) =>
      withPage(async (page) => {
        contexts.add(page.browserContextId);
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        try {
          return await work(page);
        } finally {
          inFlight--;
        }
      }, placement),
    );
    try {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => render(`<title>t${i}</title><p>doc ${i}</p>`)));
      const texts = await Promise.all(results.map(async (r) => (await readPdf(r.pdf))[0].text));
      expect(texts).toEqual(Array.from({ length: 8 }, (_, i) => `doc ${i}`));
    } finally {
      spy.mockRestore();
    }
    // One document at a time would have printed the same PDFs.
    expect(mostInFlight).toBeGreaterThan(1);
    expect(contexts.size).toBe(8);
  });

  it('fails a document whose renderer crashes, and keeps working', async () => {
    const failing = browser.withPage(async (page) => {
      page.session.send('Page.crash').catch(() => undefined);
      return Promise.race([page.crashed, new Promise((r) => setTimeout(() => r('no crash reported'), 5000))]);
    });
    await expect(failing).rejects.toThrow(/it crashed \(termination status \w+/);
    expect((await render('<p>fine</p>')).pages).toBe(1);
  });

  it("prints a document again, once, on a fresh page when Chromium killed its renderer over an internal message (the document's not at fault); other crashes are not retried", async () => {
    // What Chromium reports then (seen in CI under load): the renderer killed with RESULT_CODE_KILLED_BAD_MESSAGE (3).
    const killUnder = (kills: number, errorCode = 3) => {
      const original = browser.withPage.bind(browser);
      let attempts = 0;
      const spy = jest.spyOn(browser, 'withPage').mockImplementation((work, placement) =>
        original(async (page) => {
          if (++attempts <= kills) page.session.connection()!.emit('Target.targetCrashed', { targetId: page.targetId, status: 'killed', errorCode });
          return work(page);
        }, placement),
      );
      return { attempts: () => attempts, restore: () => spy.mockRestore() };
    };
    const once = killUnder(1);
    try {
      expect((await readPdf((await render('<p>printed again</p>')).pdf))[0].text).toBe('printed again');
      expect(once.attempts()).toBe(2);
    } finally {
      once.restore();
    }
    const always = killUnder(5);
    try {
      await expect(render('<p>x</p>')).rejects.toBeInstanceOf(ChromiumFaultError);
      expect(always.attempts()).toBe(2);
    } finally {
      always.restore();
    }
    const crash = killUnder(5, 139);
    try {
      await expect(render('<p>x</p>')).rejects.toThrow(/termination status killed, code 139/);
      expect(crash.attempts()).toBe(1);
    } finally {
      crash.restore();
    }
    expect((await render('<p>fine</p>')).pages).toBe(1);
  });

  it('refuses a document that navigates away, committed or not, instead of printing the page it went to; a move to its own fragment prints', async () => {
    const away = { code: 'INVALID_PARAMETER', details: { parameter: 'html', reason: 'navigated_away' } };
    // Refused targets: Chromium's error page took the document's place and printed blank, charged as a PDF.
    await expect(render('<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/x"><h1>VISIBLE</h1>')).rejects.toMatchObject(away);
    await expect(render('<h1>x</h1><script>onload = () => (location.href = "https://example.invalid/")</script>')).rejects.toMatchObject(away);
    await expect(render('<form action="https://example.invalid/"><input name="q"></form><script>document.forms[0].submit()</script>')).rejects.toMatchObject(away);
    const fragment = await render('<h1 id="top">kept</h1><script>location.hash = "#top"</script>');
    expect((await readPdf(fragment.pdf)).map((p) => p.text)).toEqual(['kept']);
  });

  describe('web workers (each a thread beside the page)', () => {
    const tooMany = { code: 'INVALID_PARAMETER', details: { parameter: 'html', reason: 'too_many_workers', max_workers: 2 } };
    const worker = (body: string) => `new Worker(URL.createObjectURL(new Blob([${JSON.stringify(body)}])))`;

    it('refuses a document running more than two at once when the third starts (not at its time limit), and keeps working', async () => {
      await expect(render(`<p>x</p><script>for (let i = 0; i < 3; i++) ${worker('for (;;) {}')};</script>`, 20_000)).rejects.toMatchObject(tooMany);
      // Nested workers count too. The outer worker starts its own only once the page's thread is free, after load: the
      // render waits for a quiet network (as bulk files do) so that they start before printing on a busy machine too
      // (a document that finished printing first is not refused).
      const nested = `<p>x</p><script>${worker(`for (let i = 0; i < 3; i++) ${worker('for (;;) {}')}`)}</script>`;
      await expect(renderer.render({ html: nested, options, timeoutMs: 20_000, networkIdle: { quietMs: 3000, maxMs: 5000 } })).rejects.toMatchObject(tooMany);
      expect((await render('<p>next</p>')).pages).toBe(1);
    });

    it('prints a document with two busy workers', async () => {
      const result = await render(`<p>two workers</p><script>for (let i = 0; i < 2; i++) ${worker('for (;;) {}')};</script>`);
      expect((await readPdf(result.pdf))[0].text).toBe('two workers');
    });

    it('counts workers alive at once: a document may start and end as many as it likes, one after another', async () => {
      const answers = await browser.withPage(async (page) => {
        await page.session.send('Page.setDocumentContent', { frameId: page.frameId, html: '<p>chain</p>' });
        const chain = `new Promise((resolve) => {
          const answers = [];
          const next = () => {
            if (answers.length === 6) return resolve(answers.join(','));
            const w = ${worker('onmessage = (e) => postMessage(e.data * 2)')};
            w.onmessage = (e) => { answers.push(e.data); w.terminate(); setTimeout(next, 100); };
            w.postMessage(answers.length + 1);
          };
          next();
        })`;
        const { result } = (await Promise.race([page.session.send('Runtime.evaluate', { expression: chain, awaitPromise: true, returnByValue: true }), page.tooManyWorkers])) as { result: { value: string } };
        return result.value;
      });
      expect(answers).toBe('2,4,6,8,10,12');
    });
  });

  it('refuses a document that closes its own window as a 400 (it fails every time: not a 500 to retry), and keeps working', async () => {
    await expect(render('<script>window.close()</script><p>x</p>')).rejects.toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'html', reason: 'closed_itself' } });
    // While the render waits for the network to go quiet (as bulk files print), no command is in flight: the next one
    // fails as "Session closed", not "Target closed", and a bulk file failed as a renderer fault ("the page crashed").
    const afterLoad = '<p>x</p><script>onload = () => setTimeout(() => window.close(), 200)</script>';
    await expect(renderer.render({ html: afterLoad, options, timeoutMs: 20_000, maxPages: 100, networkIdle: { quietMs: 500, maxMs: 5000 } })).rejects.toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'html', reason: 'closed_itself' } });
    // A crash is still a crash, not a document that closed itself.
    const crashing = browser.withPage(async (page) => {
      page.session.send('Page.crash').catch(() => undefined);
      // The crash must have happened (and been reported) for the answer below to be about a crash.
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        page.crashed.then(
          () => 'resolved',
          () => 'crashed',
        ),
        new Promise((r) => (timer = setTimeout(() => r('no crash reported'), 5000))),
      ]);
      clearTimeout(timer);
      return { outcome, closedItself: await page.closedItself(500) };
    });
    expect(await crashing).toEqual({ outcome: 'crashed', closedItself: false });
    expect((await render('<p>fine</p>')).pages).toBe(1);
  });

  it('does not let one document see state left by another', async () => {
    // A document can't reach storage or cookies of a previous one: each runs in a fresh context.
    await render('<script>try { document.cookie = "leak=1"; } catch (e) {} window.name = "leak";</script><p>first</p>');
    const second = await render('<p id="o"></p><script>let c; try { c = document.cookie || "empty"; } catch (e) { c = "blocked"; } document.getElementById("o").textContent = "name=" + (window.name || "empty") + " cookie=" + c;</script>');
    expect((await readPdf(second.pdf))[0].text).toMatch(/^name=empty cookie=(empty|blocked)$/);
  });
});
