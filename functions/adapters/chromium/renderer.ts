import type { CDPSession } from 'puppeteer-core';
import { ServiceError, invalidParameter, isServiceError } from '../../core/errors';
import { fillUrlClass } from '../../core/render/bands';
import { MAX_PAPER_IN, type PdfOptions } from '../../core/render/options';
import { countPdfPages, largestPageSidePt } from '../../core/render/pdf-pages';
import { pageWindow } from '../../core/render/page-window';
import { BUNDLE_ORIGIN, type RenderBundle, RenderNotStartedError, type RenderRequest, type RenderResult, type Renderer, RenderTimeoutError } from '../../core/render/ports';
import { layoutViewport } from '../../core/render/viewport';
import { wellFormed } from '../../core/validation/well-formed';
import { type ChromiumBrowser, ChromiumFaultError } from './browser';
import { bundlePathOf, bundleUrl } from '../../core/render/bundle-url';
import { BUNDLE_SERVING_LIMITS, type BundleOrigin, clearBundleOrigin, openBundleDocument, serveBundle } from './bundle-origin';
import { LOADED_FACTS, PAGE_RULES_OF_SHEETS, htmlPageBox, loadedFacts, refuseFarTooLong } from './page-estimate';

/**
 * CSS animations and transitions jump to their end before printing (infinite ones are dropped): a page prints as it
 * looks once it has settled, not at its first frame — a fade-in on load printed invisible.
 */
const FINISH_ANIMATIONS = `for (const animation of document.getAnimations()) {
  try { animation.finish(); } catch { animation.cancel(); }
}`;

/**
 * Each negative @page margin becomes 0 (its !important kept). Chromium prints one as it is: the page's content box
 * reaches past the sheet and what falls outside is cut off (from about -0.3in a short document printed as a blank
 * page); paper has no room outside it, so a printer would print such a margin as 0. Every @page rule that applies to
 * print is visited, as the page estimate reads them (PAGE_RULES_OF_SHEETS); a cross-origin sheet cannot be read and
 * keeps its margins. In the document's own world: a document that tampers with what this calls only keeps its own
 * negative margins. Run with WAIT_FOR_LOAD, in the evaluation that reads the loaded document anyway, and again before
 * printing a document that went on loading (network idle): it may have added stylesheets since.
 */
const ZERO_NEGATIVE_PAGE_MARGINS = `(() => {
  ${PAGE_RULES_OF_SHEETS}
  const negative = (text) => {
    let value;
    try { value = CSSNumericValue.parse(text); } catch { return false; } // auto, var(), …
    if (value instanceof CSSUnitValue) return value.value < 0; // -1in, -5%, -2em
    try { return value.to('px').value < 0; } catch { return false; } // calc() of absolute lengths only
  };
  forEachPageRule([...document.styleSheets, ...(document.adoptedStyleSheets || [])], (rule) => {
    for (const side of ['margin-top', 'margin-right', 'margin-bottom', 'margin-left']) {
      if (negative(rule.style.getPropertyValue(side))) rule.style.setProperty(side, '0', rule.style.getPropertyPriority(side));
    }
  });
})()`;

/**
 * Run once the main frame's load event has fired (images, styles): resolves when its web fonts are ready, to its
 * LoadedFacts. Not a second wait for readyState "complete": a script that reopened the loaded document
 * (document.write or document.open after load, never closed) leaves it "loading" for good, and the render waited
 * out its whole time limit (408 on a quick job, 15 minutes on a long one) for a document that shows what it wrote.
 */
const WAIT_FOR_LOAD = `Promise.resolve(document.fonts && document.fonts.ready).then(() => { ${FINISH_ANIMATIONS}; ${ZERO_NEGATIVE_PAGE_MARGINS}; }).then(() => ${LOADED_FACTS})`;

/**
 * After the window was resized: two animation frames, so that resize handlers and ResizeObserver callbacks have run
 * and laid out again, then animations they started finished, as at load.
 */
const AFTER_RESIZE = `new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))).then(() => { ${FINISH_ANIMATIONS} })`;

/** In a bundle document: its links to other files of the bundle, each with its address (fragment removed). */
const BUNDLE_LINKS = `function bundleLinks() {
  const here = location.href.split('#')[0];
  const found = [];
  for (const link of document.querySelectorAll('a[href], area[href]')) {
    let to;
    try { to = new URL(link.getAttribute('href'), document.baseURI).href.split('#')[0]; } catch { continue; }
    if (to.startsWith(${JSON.stringify(`${BUNDLE_ORIGIN}/`)}) && to !== here) found.push([link, to]);
  }
  return found;
}`;

/** Elements of a bundle document that get a named destination in its PDF, at most (a few bytes each). */
export const MAX_NAMED_DESTINATIONS = 2000;

/**
 * Chromium writes a named destination only for an element that a link within the document points at; another
 * file's link (`intro.html#setup`) needs one to land there. So each element with an id gets a link to it that is
 * never displayed (no annotation, no layout), in a hidden element in the head, where the page's own selectors
 * (`body > :last-child`, `body:last-child`) do not see it. It is added by the last `beforeprint` listener, after
 * the page's own: a script listing the page's links for print (footnotes of their addresses) does not list these.
 */
const NAME_DESTINATIONS = `{
  const holder = document.createElement('div');
  holder.hidden = true;
  holder.style.setProperty('display', 'none', 'important');
  for (const element of [...document.querySelectorAll('[id]')].slice(0, ${MAX_NAMED_DESTINATIONS})) {
    const link = document.createElement('a');
    link.setAttribute('href', '#' + element.id);
    holder.append(link);
  }
  if (holder.firstChild) addEventListener('beforeprint', () => (document.head ?? document.documentElement).append(holder), { once: true });
}`;

/**
 * Run just before a bundle document prints (it may have waited for quiet since its load): animations finished again;
 * answers the distinct addresses its links to other bundle files go to. A link within the document (`#section`)
 * stays a link inside the PDF, and links elsewhere stay links.
 */
const BEFORE_BUNDLE_PRINT = `(() => {
  ${FINISH_ANIMATIONS}
  ${BUNDLE_LINKS}
  const found = bundleLinks();
  ${NAME_DESTINATIONS}
  return { links: found.length, targets: [...new Set(found.map((link) => link[1]))] };
})()`;

/**
 * Past this many links to other bundle files, a document prints them all as text: each one kept is rewritten when the
 * job finishes (~30 µs; a page of 100,000 links would hold Finish for seconds, and a job has 200 files).
 */
export const MAX_LINKS_TO_BUNDLE_FILES = 2000;

/**
 * Links to bundle files that get no PDF of their own (a stylesheet, a spreadsheet, a missing file) print as their
 * text: they named the internal bundle origin, dead in any PDF reader.
 */
function unlinkBundleFiles(documents: string[]): string {
  return `((documents) => {
  ${BUNDLE_LINKS}
  for (const [link, to] of bundleLinks()) if (!documents.has(to)) link.removeAttribute('href');
})(new Set(${JSON.stringify(documents)}))`;
}

/**
 * Just before a bundle document prints: its links to other documents of the bundle stay, at their bundle address (the
 * caller points them at those documents' PDFs); links to its other files print as their text. Answers how many
 * documents it links to. Run in a world of its own: the page's scripts may have replaced what the page's world has
 * (`document.querySelectorAll` hiding its links, so that more than MAX_LINKS_TO_BUNDLE_FILES were kept, or
 * `Element.prototype.append` throwing, so that links to the bundle's other files kept the internal address).
 */
async function keepDocumentLinks(session: CDPSession, frameId: string, bundle: RenderBundle): Promise<number> {
  const { executionContextId: contextId } = (await session.send('Page.createIsolatedWorld', { frameId, worldName: 'bundle-links' })) as { executionContextId: number };
  const { result } = (await session.send('Runtime.evaluate', { expression: BEFORE_BUNDLE_PRINT, contextId, returnByValue: true })) as { result?: { value?: { links?: unknown; targets?: unknown } } };
  const { links, targets } = result?.value ?? {};
  const linked = Array.isArray(targets) ? targets.filter((to): to is string => typeof to === 'string') : [];
  const documents =
    typeof links === 'number' && links <= MAX_LINKS_TO_BUNDLE_FILES
      ? linked.filter((to) => {
          const path = bundlePathOf(to);
          return path !== null && (bundle.isDocument?.(path) ?? false);
        })
      : [];
  if (documents.length < linked.length) await session.send('Runtime.evaluate', { expression: unlinkBundleFiles(documents), contextId });
  return documents.length;
}

/**
 * Chromium prints header and footer bands in economy colour mode whatever `printBackground` says: their background
 * colours and images are dropped (and light text darkened), so a white-on-dark band printed as grey text on nothing.
 * With printBackground (the default) the bands print their colours exactly, as the page does.
 */
const EXACT_BAND_COLOURS = '<style>html{-webkit-print-color-adjust:exact;print-color-adjust:exact}</style>';

function bandForPrint(template: string, printBackground: boolean): string {
  return printBackground && template ? EXACT_BAND_COLOURS + template : template;
}

function printParameters(o: PdfOptions, pageRanges: string, documentUrl = '') {
  const band = (template: string) => bandForPrint(fillUrlClass(template, documentUrl), o.printBackground);
  return {
    landscape: o.landscape,
    displayHeaderFooter: o.displayHeaderFooter,
    printBackground: o.printBackground,
    scale: o.scale,
    paperWidth: o.paperWidthIn,
    paperHeight: o.paperHeightIn,
    marginTop: o.margin.top,
    marginBottom: o.margin.bottom,
    marginLeft: o.margin.left,
    marginRight: o.margin.right,
    pageRanges,
    headerTemplate: band(o.headerTemplate),
    footerTemplate: band(o.footerTemplate),
    preferCSSPageSize: o.preferCSSPageSize,
    // Bookmarks from the document's headings (h1–h6), as Chrome's own "Save as PDF" makes them.
    generateDocumentOutline: true,
    // Read in pieces (see readPdf): one base64 message of a few hundred MB would exceed what a string can hold.
    transferMode: 'ReturnAsStream' as const,
  };
}

/** Larger PDFs are refused: a few canvases can make hundreds of MB, more than a render function can hold. */
export const MAX_PDF_BYTES = 200 * 1024 * 1024;
/** One IO.read: a typical document arrives in a single read. */
const READ_BYTES = 8 * 1024 * 1024;

/** The printed PDF from its stream handle, refused past MAX_PDF_BYTES. */
async function readPdf(session: CDPSession, handle: string, maxBytes: number): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const { data, base64Encoded, eof } = await session.send('IO.read', { handle, size: READ_BYTES });
      const piece = Buffer.from(data, base64Encoded ? 'base64' : 'latin1');
      total += piece.length;
      if (total > maxBytes) {
        throw new ServiceError('PDF_GENERATION_FAILED', `The PDF would be larger than ${Math.round(maxBytes / 1024 / 1024)} MB. Use smaller images or canvases, or options.pageRanges.`, {
          reason: 'output_too_large',
          max_bytes: maxBytes,
        });
      }
      pieces.push(piece);
      if (eof) break;
    }
  } finally {
    session.send('IO.close', { handle }).catch(() => undefined);
  }
  return pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
}

/**
 * Failures the document itself causes are the caller's mistake (400), not a render failure to retry (500): Chromium's
 * refusals of a page range, and a document that navigates away (a script setting location, a link it clicks, a meta
 * refresh) while it loads, which leaves nothing to print.
 */
export function mapRenderError(err: unknown): unknown {
  const message = (err as Error)?.message ?? '';
  if (/inspected target navigated|execution context was destroyed/i.test(message)) return navigatedAway();
  if (/page range syntax error/i.test(message)) return invalidParameter('options.pageRanges', 'options.pageRanges could not be read; use pages and ranges such as "1-3, 5".');
  if (/page range exceeds page count/i.test(message)) return invalidParameter('options.pageRanges', 'options.pageRanges asks for pages beyond the end of the document; select pages the document has, or leave options.pageRanges out.');
  if (/page range is invalid/i.test(message)) return invalidParameter('options.pageRanges', 'options.pageRanges has a range that ends before it starts; write ranges low to high, from page 1.');
  return err;
}

function cssPageTooLarge(): ServiceError {
  return new ServiceError('INVALID_PARAMETER', `The document's @page size, which options.preferCSSPageSize makes the paper, is larger than ${MAX_PAPER_IN} in on a side; PDF viewers refuse larger pages. Make the @page size smaller, or leave preferCSSPageSize out to print on the options' paper.`, {
    parameter: 'html',
    reason: 'page_too_large',
  });
}

function navigatedAway(): ServiceError {
  return new ServiceError('INVALID_PARAMETER', 'The document navigated away from itself while loading (a script set location, clicked a link or a meta refresh fired). Remove the navigation; the document must print itself.', {
    parameter: 'html',
    reason: 'navigated_away',
  });
}

/**
 * Watches the document's main frame for a navigation away from it. Most navigations do not fail a command: the new
 * page (or Chromium's error page for a refused target) simply takes the frame's place, and printing it would print
 * another page than the one submitted, or a blank one, and charge for it. Any navigation the document asks for in its
 * own tab counts, committed or not, so the outcome does not depend on how fast the target answers; moving to a
 * fragment of itself does not (Chromium reports that as a navigation within the document). `own` is the bundle
 * document's URL, which the renderer itself opens.
 */
function watchNavigation(session: CDPSession, frameId: string, own?: string): { away(): boolean; stop(): void } {
  let away = false;
  let ownOpened = false;
  const requested = (e: unknown) => {
    const event = e as { frameId: string; disposition?: string };
    if (event.frameId === frameId && (event.disposition ?? 'currentTab') === 'currentTab') away = true;
  };
  const navigated = (e: unknown) => {
    const { frame } = e as { frame: { id: string; parentId?: string; url: string } };
    if (frame.id !== frameId || frame.parentId) return;
    if (own !== undefined && !ownOpened && frame.url === own) ownOpened = true;
    else away = true;
  };
  session.on('Page.frameRequestedNavigation', requested);
  session.on('Page.frameNavigated', navigated);
  return {
    away: () => away,
    stop: () => {
      session.off('Page.frameRequestedNavigation', requested);
      session.off('Page.frameNavigated', navigated);
    },
  };
}

/**
 * Resolves `fired` at the main frame's next load event (Page.loadEventFired; the Page domain is enabled with the page),
 * or rejects it as "target closed" when the page's target goes first (a document calling window.close() while it loads).
 */
function loadEvent(session: CDPSession, targetId: string): { fired: Promise<void>; stop(): void } {
  const connection = session.connection();
  let onLoad: () => void = () => undefined;
  let onDestroyed: (event: { targetId: string }) => void = () => undefined;
  const fired = new Promise<void>((resolve, reject) => {
    onLoad = resolve;
    onDestroyed = (event) => {
      if (event.targetId === targetId) reject(new Error('Target closed before the document loaded'));
    };
  });
  const stop = () => {
    session.off('Page.loadEventFired', onLoad);
    connection?.off('Target.targetDestroyed', onDestroyed);
  };
  session.on('Page.loadEventFired', onLoad);
  connection?.on('Target.targetDestroyed', onDestroyed);
  return { fired: fired.finally(stop), stop };
}

/** How long after a command failed with "target closed" Chromium may take to report the page's target destroyed. */
const CLOSE_REPORT_MS = 1000;

function closedItself(): ServiceError {
  return new ServiceError('INVALID_PARAMETER', 'The document closed its own window (a script called window.close()) before it could be printed. Remove the call; the document must stay open to print.', {
    parameter: 'html',
    reason: 'closed_itself',
  });
}

/**
 * Resolves true once no request has been in flight for `quietMs`, or false when `maxMs` passes first or the page is
 * `gone` (it rejects on a crash or when the browser closes). Requests are followed through the Network domain, which
 * must be enabled before the document is set.
 */
function networkIdle(session: CDPSession, inFlight: Set<string>, quietMs: number, maxMs: number, gone: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    let quietSince = inFlight.size === 0 ? Date.now() : 0;
    const tick = setInterval(() => {
      const now = Date.now();
      if (inFlight.size > 0) quietSince = 0;
      else if (!quietSince) quietSince = now;
      if (quietSince && now - quietSince >= quietMs) {
        clearInterval(tick);
        resolve(true);
      } else if (now - started >= maxMs) {
        clearInterval(tick);
        resolve(false);
      }
    }, Math.max(5, Math.min(50, quietMs / 4)));
    // A page that crashed or whose browser closed never goes quiet: the watch ends with it rather than at maxMs.
    gone.catch(() => {
      clearInterval(tick);
      resolve(false);
    });
  });
}

/** How long past the document's deadline one of its CDP commands may still run (the render has given up by then). */
const COMMAND_GRACE_MS = 5_000;

/**
 * The page's session with every command bounded by the document's deadline instead of the browser's protocol
 * timeout: one command can take as long as the document may (a script running while the document is set, printing
 * many pages), up to 15 minutes for a long job, far past a timeout meant for the browser's own commands.
 */
function boundedBy(session: CDPSession, deadline: number): CDPSession {
  return new Proxy(session, {
    get(target, property) {
      if (property === 'send') {
        return (method: string, params?: object, options?: { timeout: number }) =>
          (target.send as (m: string, p?: object, o?: { timeout: number }) => Promise<unknown>)(method, params, options ?? { timeout: Math.max(1, deadline - Date.now()) + COMMAND_GRACE_MS });
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

interface NetworkEvent {
  requestId: string;
}

interface RequestWillBeSent extends NetworkEvent {
  /** "" for a request of a worker (its own script included), whose end is reported on the worker's target. */
  loaderId?: string;
  request?: { url: string };
}

export class ChromiumRenderer implements Renderer {
  constructor(
    private readonly browser: ChromiumBrowser,
    private readonly limits: { maxPdfBytes: number; bundleServing: typeof BUNDLE_SERVING_LIMITS } = { maxPdfBytes: MAX_PDF_BYTES, bundleServing: BUNDLE_SERVING_LIMITS },
  ) {}

  /**
   * Prints the document; when Chromium itself killed the page's renderer (ChromiumFaultError, not the document's
   * doing), once more on a fresh page within the same time limit.
   */
  async render(sent: RenderRequest): Promise<RenderResult> {
    // Chromium keeps half a surrogate pair ("\ud800" in a JSON string) and wrote it into the PDF's /Title as is.
    const { options } = sent;
    const request = { ...sent, html: wellFormed(sent.html), options: { ...options, headerTemplate: wellFormed(options.headerTemplate), footerTemplate: wellFormed(options.footerTemplate) } };
    const deadline = Date.now() + request.timeoutMs;
    try {
      return await this.renderOnce(request, deadline);
    } catch (err) {
      if (!(err instanceof ChromiumFaultError) || Date.now() >= deadline) throw err;
      return this.renderOnce(request, deadline);
    }
  }

  private async renderOnce(request: RenderRequest, deadline: number): Promise<RenderResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RenderTimeoutError(request.timeoutMs)), Math.max(0, deadline - Date.now()));
    });
    try {
      // The queue wait counts against the limit too: the caller's clock is what matters.
      return await Promise.race([
        timeout,
        this.browser.withPage(async (page) => {
          const { frameId, crashed, tooManyWorkers } = page;
          const session = boundedBy(page.session, deadline);
          // A page reused within its scope has counted earlier documents' refusals already.
          const blockedBefore = page.blockedRequests();
          const listeners: [string, (e: unknown) => void][] = [];
          let navigation: ReturnType<typeof watchNavigation> | null = null;
          const run = (async () => {
            const inFlight = new Set<string>();
            // A worker's script is announced on the page's session but ends on the worker's target, which this
            // session never hears of: followed, it stayed in flight for ever (every document starting a Worker
            // waited the whole idle limit and was reported render_timeout). A bundle worker script is followed until
            // the bundle has answered it; others (blob:, data:) are local and not followed.
            const workerScripts = new Set<string>();
            const workerScriptAnswered = (id: string) => {
              if (workerScripts.delete(id)) inFlight.delete(id);
            };
            if (request.networkIdle) {
              listeners.push(
                [
                  'Network.requestWillBeSent',
                  (e) => {
                    const event = e as RequestWillBeSent;
                    if (event.loaderId === '') {
                      if (!request.bundle || !event.request?.url.startsWith(`${BUNDLE_ORIGIN}/`)) return;
                      workerScripts.add(event.requestId);
                    }
                    inFlight.add(event.requestId);
                  },
                ],
                ['Network.loadingFinished', (e) => inFlight.delete((e as NetworkEvent).requestId)],
                ['Network.loadingFailed', (e) => inFlight.delete((e as NetworkEvent).requestId)],
              );
              for (const [event, listener] of listeners) session.on(event, listener);
              await session.send('Network.enable');
            }
            // Scripts that measure the window lay out for the page they print on (see layoutViewport), its own @page
            // rules included (read beforehand from the document's <style> elements, when it has any).
            const pageBox = /@page/i.test(request.html) ? await htmlPageBox(session, frameId, request.html) : null;
            const firstWindow = layoutViewport(request.options, pageBox);
            await session.send('Emulation.setDeviceMetricsOverride', { ...firstWindow, deviceScaleFactor: 0, mobile: false });
            // A bundle document lives at the bundle origin, which is answered from the bundle (see bundle-origin.ts).
            let origin: BundleOrigin | null = null;
            // What the document tells of its length once loaded (bundle documents: read before printing).
            let loaded: Promise<{ result?: { value?: unknown } } | void>;
            if (request.bundle) {
              if (page.reused) await clearBundleOrigin(session);
              origin = await serveBundle(session, request.bundle, request.html, this.limits.bundleServing, workerScriptAnswered);
              navigation = watchNavigation(session, frameId, bundleUrl(request.bundle.documentPath.replace(/^\/+/, '')));
              loaded = openBundleDocument(session, frameId, request.bundle.documentPath, WAIT_FOR_LOAD, deadline);
            } else {
              navigation = watchNavigation(session, frameId);
              // Set as text, the document says readyState "complete" at once, before its images, stylesheets and
              // frames have arrived: waiting on readyState printed it without them. Its load event does wait for
              // them (and comes before setDocumentContent answers when there is nothing to fetch).
              const windowLoaded = loadEvent(session, page.targetId);
              try {
                await session.send('Page.setDocumentContent', { frameId, html: request.html });
              } catch (err) {
                windowLoaded.stop();
                throw err;
              }
              loaded = windowLoaded.fired.then(() => session.send('Runtime.evaluate', { expression: WAIT_FOR_LOAD, awaitPromise: true, returnByValue: true, timeout: Math.max(1, deadline - Date.now()) }));
            }
            let renderTimeout = false;
            let facts = null;
            if (request.networkIdle) {
              // A resource that never answers holds back `load` too: after maxMs the page is printed as it stands.
              const { quietMs, maxMs } = request.networkIdle;
              const started = Date.now();
              const budget = Math.max(0, Math.min(maxMs, deadline - started));
              let capTimer: NodeJS.Timeout | undefined;
              const cap = new Promise<false>((resolve) => (capTimer = setTimeout(() => resolve(false), budget)));
              let didLoad: boolean;
              try {
                // A page that is gone never loads: its crash (or the closed browser) ends the wait, not the cap.
                didLoad = await Promise.race([loaded.then(() => true), cap, crashed]);
              } finally {
                clearTimeout(capTimer);
              }
              loaded.catch(() => undefined);
              // Waiting for quiet costs no CPU, so the page gives its printing slot to another document meanwhile.
              renderTimeout = !didLoad || !(await page.whileIdle(() => networkIdle(session, inFlight, quietMs, Math.max(0, budget - (Date.now() - started)), crashed)));
            } else {
              facts = loadedFacts((await loaded)?.result?.value);
              // @page rules of linked stylesheets are known only now: when they make another page, the window takes
              // its size, and scripts that follow the window (resize events, ResizeObserver) lay out again for it.
              const loadedWindow = facts?.pageBox ? layoutViewport(request.options, facts.pageBox) : firstWindow;
              if (loadedWindow.width !== firstWindow.width || loadedWindow.height !== firstWindow.height) {
                await session.send('Emulation.setDeviceMetricsOverride', { ...loadedWindow, deviceScaleFactor: 0, mobile: false });
                await session.send('Runtime.evaluate', { expression: AFTER_RESIZE, awaitPromise: true, timeout: Math.max(1, deadline - Date.now()) });
                facts = null; // measured again, at the new size, if the page estimate needs them
              }
            }
            if (navigation?.away()) throw navigatedAway();
            const pageRanges = pageWindow(request);
            // Only when printing would stop early anyway: a selection that fits is printed as asked.
            if (pageRanges !== request.options.pageRanges) await refuseFarTooLong(session, request, facts);
            if (request.networkIdle) await session.send('Runtime.evaluate', { expression: ZERO_NEGATIVE_PAGE_MARGINS });
            const documentLinks = request.bundle ? await keepDocumentLinks(session, frameId, request.bundle) : 0;
            const { stream } = (await session.send('Page.printToPDF', printParameters(request.options, pageRanges, request.documentUrl))) as { stream: string };
            const pdf = await readPdf(session, stream, this.limits.maxPdfBytes);
            if (navigation?.away()) throw navigatedAway();
            if (origin?.failure()) throw origin.failure();
            // The options' paper is capped at MAX_PAPER_IN; with preferCSSPageSize the document's @page size is the
            // paper, so the same cap is applied to what was printed (a 5000in @page made pages no viewer opens).
            if (request.options.preferCSSPageSize && (await largestPageSidePt(pdf)) > MAX_PAPER_IN * 72 + 1) throw cssPageTooLarge();
            const pages = await countPdfPages(pdf);
            const result: RenderResult = { pdf, pages, blockedRequests: page.blockedRequests() - blockedBefore, renderTimeout };
            if (documentLinks > 0) result.documentLinks = documentLinks;
            if (request.maxPages !== undefined && pageRanges !== request.options.pageRanges) result.morePages = pages > request.maxPages;
            for (const [event, listener] of listeners) session.off(event, listener);
            navigation?.stop();
            if (origin) {
              result.missingAssets = origin.missing();
              await origin.stop();
              // A page whose network never went quiet may still be loading: it is not handed to another document.
              if (!renderTimeout) page.markReusable();
            }
            return result;
          })().catch(async (err) => {
            navigation?.stop();
            // "Session closed" when the window closed between commands (while waiting for the network to go quiet).
            if (/target closed|session closed/i.test((err as Error)?.message ?? '') && (await page.closedItself(CLOSE_REPORT_MS))) throw closedItself();
            // A renderer killed mid-command (by the memory watch, say, while printing) fails that command before its
            // crash is reported; the crash says why, so it wins when it follows within a moment.
            const mapped = mapRenderError(err);
            if (mapped === err && !isServiceError(err) && !(err instanceof RenderTimeoutError)) {
              let wait: NodeJS.Timeout | undefined;
              const crash = await Promise.race([crashed.catch((e: unknown) => e), new Promise<null>((resolve) => (wait = setTimeout(() => resolve(null), CLOSE_REPORT_MS)))]);
              clearTimeout(wait);
              if (crash) throw crash;
            }
            throw mapped;
          });
          // Leaving withPage disposes the context (unless it is kept for the scope), which stops a page still running after the deadline.
          return Promise.race([run, crashed, tooManyWorkers, timeout]);
        }, {
          scope: request.bundle?.scope,
          tenant: request.tenant,
          beforePage: async () => {
            if (Date.now() >= deadline) throw new RenderTimeoutError(request.timeoutMs); // gave up while queued
            // The caller may have called the work off while it waited for the slot (a cancelled bulk job).
            if (request.shouldStart && !(await request.shouldStart())) throw new RenderNotStartedError();
          },
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
