import { PDFDocument } from 'pdf-lib';
import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../../../functions/core/render/options';
import type { RenderBundle } from '../../../functions/core/render/ports';
import { png } from '../../support/images';
import { readPdf, readPdfDrawing } from '../../support/pdf';

const browser = new ChromiumBrowser({ prewarm: 1, maxConcurrent: 2, executablePath: process.env.CHROMIUM_PATH });
const renderer = new ChromiumRenderer(browser);
const options = parsePdfOptions({});
afterAll(() => browser.close());

const render = (html: string, bundle?: RenderBundle) => renderer.render({ html, options, bundle, timeoutMs: 20_000 });
const printedText = async (html: string, bundle?: RenderBundle) => (await readPdf((await render(html, bundle)).pdf)).map((page) => page.text).join('\n');

/** A one-page PDF showing `text`: what a document may embed as a plugin's content. */
async function pdfShowing(text: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]).drawText(text);
  return Buffer.from(await doc.save());
}

const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
const svg = encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="0" y="20">Drawing</text></svg>');

describe('plugin content (<embed>, <object>)', () => {
  // Headless Chromium has no plugins, not even a PDF viewer: it printed its "Couldn't load plugin." placeholder.
  it("prints no browser placeholder for a plugin type: an <object>'s fallback content shows, an <embed> stays empty", async () => {
    const pdf = dataUrl('application/pdf', await pdfShowing('Embedded PDF'));
    expect(await printedText('<p>before</p><embed type="application/x-shockwave-flash" width="300" height="100"><p>after</p>')).toBe('before after');
    expect(await printedText(`<p>before</p><embed src="${pdf}" width="300" height="100"><p>after</p>`)).toBe('before after');
    expect(await printedText(`<p>before</p><object data="${pdf}" type="application/pdf" width="300" height="100"></object><p>after</p>`)).toBe('before after');
    expect(await printedText(`<p>before</p><object data="${pdf}" type="application/pdf" width="300" height="100">The fallback</object><p>after</p>`)).toBe('before The fallback after');
    expect(await printedText('<p>before</p><object data="movie.swf" type="application/x-shockwave-flash">Flash fallback</object><p>after</p>')).toBe('before Flash fallback after');
  });

  it('keeps the empty <embed> at its size: what follows stays where it was', async () => {
    const html = `<p>before</p><embed id="plugin" type="application/x-shockwave-flash" width="300" height="100"><p id="seen">after</p>
      <script>addEventListener('load', () => { const box = plugin.getBoundingClientRect(); seen.textContent = box.width + ' x ' + box.height; });</script>`;
    expect(await printedText(html)).toBe('before 300 x 100');
  });

  it("shows no PDF viewer and no placeholder for a PDF the document's server answers", async () => {
    const files: Record<string, Buffer> = { 'doc.pdf': await pdfShowing('Served PDF') };
    const html = '<p>before</p><embed src="doc.pdf" width="300" height="100"><object data="doc.pdf" type="application/pdf" width="300" height="100"></object><p>after</p>';
    const bundle: RenderBundle = {
      documentPath: 'index.html',
      read: (path) => (path === 'index.html' ? Buffer.from(html) : (files[path] ?? null)),
      size: (path) => (path === 'index.html' ? Buffer.byteLength(html) : (files[path]?.length ?? null)),
    };
    expect(await printedText(html, bundle)).toBe('before after');
  });

  it('still shows what is not a plugin: images, SVG and HTML in <object> and <embed>', async () => {
    const image = dataUrl('image/png', png(20, 10));
    const { pdf } = await render(`<object data="${image}" type="image/png" width="40" height="20">no image</object>`);
    expect((await readPdfDrawing(pdf))[0].images).toHaveLength(1);
    expect((await readPdf(pdf))[0].text).toBe('');
    expect(await printedText(`<object data="data:image/svg+xml,${svg}" type="image/svg+xml">no svg</object>`)).toBe('Drawing');
    expect(await printedText(`<embed src="data:image/svg+xml,${svg}">`)).toBe('Drawing');
    expect(await printedText(`<object data="data:text/html,${encodeURIComponent('<p>Framed object</p>')}" type="text/html">no html</object>`)).toBe('Framed object');
    expect(await printedText(`<embed type="text/html" src="data:text/html,${encodeURIComponent('<p>Framed embed</p>')}">`)).toBe('Framed embed');
  });
});
