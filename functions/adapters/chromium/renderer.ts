import { invalidParameter } from '../../core/errors';
import type { PdfOptions } from '../../core/render/options';
import { countPdfPages } from '../../core/render/pdf-pages';
import { type RenderRequest, type RenderResult, type Renderer, RenderTimeoutError } from '../../core/render/ports';
import type { ChromiumBrowser } from './browser';

/** Resolves once the document has loaded (images, styles) and its web fonts are ready. */
const WAIT_FOR_LOAD = `new Promise((resolve) => {
  if (document.readyState === 'complete') resolve();
  else addEventListener('load', () => resolve(), { once: true });
}).then(() => document.fonts && document.fonts.ready).then(() => 1)`;

function printParameters(o: PdfOptions) {
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
    pageRanges: o.pageRanges,
    headerTemplate: o.headerTemplate,
    footerTemplate: o.footerTemplate,
    preferCSSPageSize: o.preferCSSPageSize,
    // One message instead of a stream: documents here are at most a few MB, and streaming costs two more round trips.
    transferMode: 'ReturnAsBase64' as const,
  };
}

/** Chromium's refusals of a page range are the caller's mistake, not a render failure. */
function mapPrintError(err: unknown): unknown {
  const message = (err as Error)?.message ?? '';
  if (/page range syntax error/i.test(message)) return invalidParameter('options.pageRanges', 'options.pageRanges could not be read; use pages and ranges such as "1-3, 5".');
  if (/page range exceeds page count/i.test(message)) return invalidParameter('options.pageRanges', 'options.pageRanges asks for pages beyond the end of the document.');
  return err;
}

export class ChromiumRenderer implements Renderer {
  constructor(private readonly browser: ChromiumBrowser) {}

  async render(request: RenderRequest): Promise<RenderResult> {
    const deadline = Date.now() + request.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RenderTimeoutError(request.timeoutMs)), Math.max(0, request.timeoutMs));
    });
    try {
      // The queue wait counts against the limit too: the caller's clock is what matters.
      return await Promise.race([
        timeout,
        this.browser.withPage(async (page) => {
          const { session, frameId, crashed } = page;
          if (Date.now() >= deadline) throw new RenderTimeoutError(request.timeoutMs); // gave up while queued
          const run = (async () => {
            await session.send('Page.setDocumentContent', { frameId, html: request.html });
            await session.send('Runtime.evaluate', { expression: WAIT_FOR_LOAD, awaitPromise: true, timeout: Math.max(1, deadline - Date.now()) });
            let data: string;
            try {
              ({ data } = await session.send('Page.printToPDF', printParameters(request.options)));
            } catch (err) {
              throw mapPrintError(err);
            }
            const pdf = Buffer.from(data, 'base64');
            return { pdf, pages: await countPdfPages(pdf), blockedRequests: 0 };
          })();
          // Leaving withPage disposes the context, which stops a page still running after the deadline.
          return Promise.race([run, crashed, timeout]);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
