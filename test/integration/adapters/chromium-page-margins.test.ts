import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../../../functions/core/render/options';
import type { RenderBundle } from '../../../functions/core/render/ports';
import { readPdf } from '../../support/pdf';

const browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
const renderer = new ChromiumRenderer(browser);
afterAll(() => browser.close());

const printedPages = async (html: string, options = parsePdfOptions({}), bundle?: RenderBundle, networkIdle?: { quietMs: number; maxMs: number }) =>
  (await readPdf((await renderer.render({ html, options, bundle, networkIdle, timeoutMs: 20_000 })).pdf)).map((page) => page.text);

const bundleOf = (files: Record<string, string>): RenderBundle => ({
  documentPath: 'index.html',
  read: (path) => (files[path] === undefined ? null : Buffer.from(files[path])),
  size: (path) => (files[path] === undefined ? null : Buffer.byteLength(files[path])),
});

/** Lines that start at the page's left edge, the first at its top: cut off wherever the page reaches past the sheet. */
const LINES = `<style>body { margin: 0; font: 24px sans-serif }</style>${Array.from({ length: 80 }, (_, i) => `<div>line ${i}</div>`).join('')}`;

// Chromium printed a negative @page margin as it was: the content box reached past the sheet and what fell outside was
// cut off (from about -0.3in, a short document printed as a blank page).
describe('negative @page margins', () => {
  it.each(['-1in', '-30mm'])('prints a short document whose @page margin is %s, as with margin 0', async (margin) => {
    expect(await printedPages(`<style>@page { margin: ${margin} }</style><p>Still printed</p>`)).toEqual(['Still printed']);
    expect(await printedPages(`<style>@page { margin: ${margin} }</style><p>Still printed</p>`, parsePdfOptions({ preferCSSPageSize: true }))).toEqual(['Still printed']);
  });

  it('makes only the negative sides 0 and keeps the others: the pages are those of the same margins with 0 for them', async () => {
    const pages = await printedPages(`<style>@page { margin: 1in -1in; margin-right: calc(-1in - 1cm) !important } @page :first { margin-top: -2in }</style>${LINES}`);
    expect(pages[0]).toMatch(/^line 0 line 1 /);
    expect(pages).toEqual(await printedPages(`<style>@page { margin: 1in 0 } @page :first { margin-top: 0 }</style>${LINES}`));
  });

  it("loads the document in a window of the sheet's size, not larger by the negative margins", async () => {
    const html = '<style>@page { margin: -1in }</style><p id="seen"></p><script>seen.textContent = innerWidth + " x " + innerHeight;</script>';
    expect(await printedPages(html)).toEqual(['793 x 1122']);
  });

  it("does the same for a linked stylesheet's @page rules, also under @media print and @import", async () => {
    const html = `<link rel="stylesheet" href="print.css">${LINES}`;
    const files: Record<string, string> = {
      'index.html': html,
      'print.css': '@import url(margins.css); body { margin: 0; font: 24px sans-serif }',
      'margins.css': '@media print { @page { margin: -1in -25mm } }',
    };
    const pages = await printedPages(html, parsePdfOptions({}), bundleOf(files));
    expect(pages[0]).toMatch(/^line 0 line 1 /);
    expect(pages).toEqual(await printedPages(LINES));
  });

  it('does the same for a stylesheet a document waited for until network idle added after its load', async () => {
    // Bulk files and URLs print once the network is quiet, which may be well after load: margins are looked at again.
    const late = "addEventListener('load', () => setTimeout(() => { const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = 'late.css'; document.head.append(l); }, 200))";
    const html = `<script>${late}</script>${LINES}`;
    const pages = await printedPages(html, parsePdfOptions({}), bundleOf({ 'index.html': html, 'late.css': '@page { margin: -1in }' }), { quietMs: 600, maxMs: 10_000 });
    expect(pages[0]).toMatch(/^line 0 line 1 /);
    expect(pages).toEqual(await printedPages(LINES));
  });
});
