import { deflateSync } from 'node:zlib';
import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { MARKDOWN_DEFAULT_MARGIN, markdownToHtml } from '../../../functions/core/render/markdown';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { readPdf, readPdfDrawing } from '../../support/pdf';

const browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
const renderer = new ChromiumRenderer(browser);
afterAll(() => browser.close());

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A grey RGB PNG of `width` × `height` pixels. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows = Buffer.alloc((width * 3 + 1) * height, 0x80);
  for (let y = 0; y < height; y++) rows[y * (width * 3 + 1)] = 0; // filter byte: none
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

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
