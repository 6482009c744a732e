import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { MARKDOWN_DEFAULT_MARGIN, markdownToHtml } from '../../../functions/core/render/markdown';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { png } from '../../support/images';
import { readPdf, readPdfDrawing } from '../../support/pdf';

const browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
const renderer = new ChromiumRenderer(browser);
afterAll(() => browser.close());

describe('print quality', () => {
  it('fits a Markdown image taller than a page on one page instead of slicing it across two', async () => {
    const tall = png(1000, 1600).toString('base64');
    const html = markdownToHtml(`# Images\n\nText before.\n\n![tall](data:image/png;base64,${tall})\n\nAfter.`);
    const options = parsePdfOptions({}, { defaultMargin: MARKDOWN_DEFAULT_MARGIN });
    const { pdf } = await renderer.render({ html, options, timeoutMs: 20_000 });
    const pages = await readPdfDrawing(pdf);
    const drawn = pages.flatMap((page, index) => page.images.map((image) => ({ ...image, page: index + 1 })));
    expect(drawn).toHaveLength(1); // one piece, not the top on one page and the rest on the next
    const [image] = drawn;
    const [{ height: pageHeight }] = await readPdf(pdf);
    const margin = (18 / 25.4) * 72;
    expect(image.y).toBeGreaterThanOrEqual(margin - 1);
    expect(image.y + image.height).toBeLessThanOrEqual(pageHeight - margin + 1);
    expect(image.width / image.height).toBeCloseTo(1000 / 1600, 2); // shrunk, not squashed
  });

  it("prints a header band's background colour when printBackground is on (the default), and not when it is off", async () => {
    const headerTemplate = '<div style="font-size:12px;width:100%;background:#123456;color:#ffffff;padding:4px">Band</div>';
    const print = async (printBackground: boolean) => {
      const options = parsePdfOptions({ displayHeaderFooter: true, headerTemplate, footerTemplate: '', printBackground, margin: { top: '20mm' } });
      const { pdf } = await renderer.render({ html: '<p>body</p>', options, timeoutMs: 20_000 });
      return (await readPdfDrawing(pdf))[0].fillColors;
    };
    expect(await print(true)).toContain('#123456');
    expect(await print(false)).not.toContain('#123456');
  });
});
