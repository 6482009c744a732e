import { PDFDict, PDFDocument, PDFName } from 'pdf-lib';
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

  it("prints the document's own background colours when printBackground is on (the default), and not when it is off", async () => {
    const print = async (printBackground?: boolean) => {
      const options = parsePdfOptions(printBackground === undefined ? {} : { printBackground });
      const { pdf } = await renderer.render({ html: '<p style="background:#654321;color:#ffffff">body</p>', options, timeoutMs: 20_000 });
      return (await readPdfDrawing(pdf))[0].fillColors;
    };
    expect(await print()).toContain('#654321');
    expect(await print(false)).not.toContain('#654321');
  });

  it("loads the document in a window of the page's size: a chart a script sizes to the body prints at the page's width, and the document keeps its size", async () => {
    const pixel = `data:image/png;base64,${png(10, 10).toString('base64')}`;
    // The "chart" takes the body's width when the document loads, as chart libraries size their canvas; the square
    // is 100 CSS px, 75 pt when nothing shrinks. In an 800 px window the chart overflowed the 642 px page and
    // Chromium shrank the whole document to 80 %.
    const html = `<!doctype html><img id="chart" src="${pixel}" style="height:20px;display:block"><img src="${pixel}" style="width:100px;height:100px;display:block">
      <p id="seen"></p><script>chart.style.width = document.body.clientWidth + 'px'; seen.textContent = innerWidth + ' x ' + innerHeight;</script>`;
    const options = parsePdfOptions({ margin: { top: '1in', bottom: '1in', left: '20mm', right: '20mm' } });
    const { pdf } = await renderer.render({ html, options, timeoutMs: 20_000 });
    const [{ images }] = await readPdfDrawing(pdf);
    expect(images[1].width).toBeCloseTo(75, 0);
    expect(images[0].width).toBeCloseTo(((642 - 16) * 72) / 96, 0); // the page's 642 px less the body's 8 px margins
    expect((await readPdf(pdf))[0].text).toBe('642 x 930');
  });

  it("sizes the window by the document's own @page rules: a chart sized to it fits a page the CSS made narrower", async () => {
    const pixel = `data:image/png;base64,${png(10, 10).toString('base64')}`;
    // @page margins of 30 mm leave 566 px of A4's width; the window was 793 px, the chart overflowed and the whole
    // document shrank to 71 %.
    const html = `<!doctype html><style>@media print { @page { margin: 30mm } }</style><body style="margin:0">
      <img id="chart" src="${pixel}" style="height:20px;display:block"><img src="${pixel}" style="width:100px;height:100px;display:block">
      <p id="seen"></p><script>chart.style.width = innerWidth + 'px'; seen.textContent = innerWidth + ' x ' + innerHeight;</script></body>`;
    const { pdf } = await renderer.render({ html, options: parsePdfOptions({}), timeoutMs: 20_000 });
    const [{ images }] = await readPdfDrawing(pdf);
    expect(images[1].width).toBeCloseTo(75, 0);
    expect(images[0].width).toBeCloseTo((566 * 72) / 96, 0);
    expect((await readPdf(pdf))[0].text).toBe('566 x 895');
  });
});

describe('a linked stylesheet’s @page rules (read once the document has loaded)', () => {
  it('resizes the window to the page they make: a chart that follows the window fits the page', async () => {
    const pixel = `data:image/png;base64,${png(10, 10).toString('base64')}`;
    // The stylesheet is linked, so the page box is known only after load: the document loaded in the options' A4
    // window (793 px), and a chart that follows the window (as chart libraries do on resize) overflowed the 566 px
    // the @page margins leave; Chromium shrank the whole document to 71 %.
    const sheet = `data:text/css,${encodeURIComponent('@page { margin: 30mm }')}`;
    const html = `<!doctype html><link rel="stylesheet" href="${sheet}"><body style="margin:0">
      <img id="chart" src="${pixel}" style="height:20px;display:block"><img src="${pixel}" style="width:100px;height:100px;display:block">
      <p id="seen"></p><script>const fit = () => { chart.style.width = innerWidth + 'px'; seen.textContent = innerWidth + ' x ' + innerHeight; }; fit(); addEventListener('resize', fit);</script></body>`;
    const { pdf } = await renderer.render({ html, options: parsePdfOptions({}), timeoutMs: 20_000 });
    const [{ images }] = await readPdfDrawing(pdf);
    expect(images[1].width).toBeCloseTo(75, 0);
    expect(images[0].width).toBeCloseTo((566 * 72) / 96, 0);
    expect((await readPdf(pdf))[0].text).toBe('566 x 895');
  });
});

describe('Markdown print quality', () => {
  const markdownPdf = async (source: string) => (await renderer.render({ html: markdownToHtml(source), options: parsePdfOptions({}, { defaultMargin: MARKDOWN_DEFAULT_MARGIN }), timeoutMs: 20_000 })).pdf;

  it('prints every column of a 20-column table, and the body stays at its size (Chromium shrank the whole document and cut columns)', async () => {
    const row = (prefix: string) => `| ${Array.from({ length: 20 }, (_, i) => `${prefix}${i}`).join(' | ')} |`;
    const table = [row('Heading'), `|${' --- |'.repeat(20)}`, row('cellvalue')].join('\n');
    const pdf = await markdownPdf(`# Report\n\n${'Body text of the report. '.repeat(20)}\n\n${table}\n`);
    const [page] = await readPdf(pdf);
    // Narrow columns may break a word; none is lost.
    const squeezed = page.text.replace(/\s+/g, '');
    for (let i = 0; i < 20; i++) expect([squeezed.includes(`Heading${i}`), squeezed.includes(`cellvalue${i}`)]).toEqual([true, true]);
    // Body text at 11 pt on an A4 page less 16 mm margins fits ~95 characters a line, not the ~140 of a document shrunk to two-thirds.
    const [a4] = await readPdf(await markdownPdf(`# Report\n\n${'Body text of the report. '.repeat(20)}\n`));
    const lines = (text: string) => text.split('\n').filter((l) => l.includes('Body text')).length;
    expect(lines(page.text)).toBe(lines(a4.text));
  });

  it('breaks a long unbreakable value in a table cell rather than shrinking the whole document to fit the table', async () => {
    const square = `data:image/png;base64,${png(10, 10).toString('base64')}`;
    const hash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    const table = `| File | SHA-256 |\n|---|---|\n| release.tar.gz | ${hash}${hash.slice(0, 20)} |\n| a short row | two words |`;
    // The square is 100 CSS px: 75 pt unless Chromium shrinks the document (to ~67 % for this table before).
    const pdf = await markdownPdf(`# Checksums\n\n<img src="${square}" width="100" height="100">\n\n${table}\n`);
    const [{ images }] = await readPdfDrawing(pdf);
    expect(images[0].width).toBeCloseTo(75, 0);
    expect((await readPdf(pdf))[0].text.replace(/\s+/g, '')).toContain(hash); // all of it printed, wrapped
    // A table that fits keeps its words whole.
    const fitting = await markdownPdf(`| Owner | Amount |\n|---|---|\n| Someone | 10 |\n\n<p id="out"></p><script>addEventListener('load', () => { out.textContent = 'count=' + document.querySelectorAll('table.fit-page').length; });</script>`);
    expect((await readPdf(fitting))[0].text).toContain('count=0');
  });

  it('prints Arabic and Hebrew paragraphs (also quoted), headings and lists right to left (GitHub marks them dir="auto"); English stays left to right', async () => {
    const markdown = `# عنوان التقرير\n\nهذه فقرة باللغة العربية.\n\n- البند الأول\n- البند الثاني\n\n> שלום עולם\n\nAn English paragraph.\n\n<p id="out"></p><script>
      out.textContent = [...document.querySelectorAll('h1, p:not(#out), ul')].map((el) => el.tagName + '=' + getComputedStyle(el).direction).join(' ') +
        ' indent=' + ['Left', 'Right'].map((side) => parseFloat(getComputedStyle(document.querySelector('ul'))['padding' + side]) > 0).join('/');
    </script>`;
    const text = (await readPdf(await markdownPdf(markdown)))[0].text;
    expect(text).toContain('H1=rtl P=rtl UL=rtl P=rtl P=ltr'); // the fourth paragraph is the quoted Hebrew
    expect(text).toContain('indent=false/true'); // indented on the right only, where its bullets are
  });

  it('prints <kbd> as a key cap, as GitHub does (it printed as plain monospace text)', async () => {
    const [page] = await readPdfDrawing(await markdownPdf('Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to copy.'));
    expect(page.fillColors).toContain('#f6f8fa');
  });

  it('keeps a heading with the page-tall image under it, and prints no blank page after the image', async () => {
    const tall = png(400, 3000).toString('base64');
    const filler = Array.from({ length: 19 }, (_, i) => `Line ${i} of filler text, long enough to take most of a line on the page.`).join('\n\n');
    for (const heading of ['# Big diagram', '## Diagram']) {
      const pdf = await markdownPdf(`# Report\n\n${filler}\n\n${heading}\n\n![diagram](data:image/png;base64,${tall})\n`);
      // The heading printed alone at the foot of a page (or on a page of its own), the image on the next, then a blank page.
      const [pages, drawing] = await Promise.all([readPdf(pdf), readPdfDrawing(pdf)]);
      const imagePage = drawing.findIndex((page) => page.images.length > 0);
      expect(pages[imagePage].text).toContain(heading.replace(/^#+ /, ''));
      expect(pages).toHaveLength(imagePage + 1);
    }
  });

  it('prints task lists without list bullets behind their checkboxes, and nested lists without a gap after them (as GitHub)', async () => {
    const markdown = `- [ ] Open task\n- [x] Done task\n\nText.\n\n* Usage\n  * Advanced\n* FAQ\n* Last\n\n<p id="seen"></p><script>
      const items = [...document.querySelectorAll('li')];
      const byText = (t) => items.find((li) => li.firstChild.textContent.trim() === t || li.textContent.trim() === t);
      const markers = items.slice(0, 2).map((li) => getComputedStyle(li).listStyleType).join(',');
      const gap = (a, b) => Math.round(b.getBoundingClientRect().top - a.getBoundingClientRect().bottom);
      seen.textContent = 'markers ' + markers + ' gaps ' + gap(byText('Advanced'), byText('FAQ')) + '/' + gap(byText('FAQ'), byText('Last'));
    </script>\n`;
    const [page] = await readPdf(await markdownPdf(markdown));
    const [, markers, after, between] = /markers (\S+) gaps (-?\d+)\/(-?\d+)/.exec(page.text)!;
    expect(markers).toBe('none,none');
    expect(Number(after)).toBe(Number(between)); // the item after a nested list sits as close as any other
  });

  it("gives the PDF bookmarks from the document's headings", async () => {
    const pdf = await markdownPdf('# Report\n\ntext\n\n## Results\n\nmore\n\n## Method\n\nend\n');
    const doc = await PDFDocument.load(pdf);
    const outlines = doc.catalog.lookupMaybe(PDFName.of('Outlines'), PDFDict);
    const titles: string[] = [];
    const walk = (item: PDFDict | undefined) => {
      for (let node = item; node; node = node.lookupMaybe(PDFName.of('Next'), PDFDict)) {
        titles.push(node.lookup(PDFName.of('Title'))!.toString());
        walk(node.lookupMaybe(PDFName.of('First'), PDFDict));
      }
    };
    walk(outlines?.lookupMaybe(PDFName.of('First'), PDFDict));
    expect(titles.map((t) => t.replace(/^\(|\)$/g, ''))).toEqual(['Report', 'Results', 'Method']);
  });

  it('links [text](#heading) to the heading GitHub-style, as a link inside the PDF', async () => {
    const pdf = await markdownPdf('# Top\n\n[Jump to Details](#details-section)\n\n<div style="break-after:page"></div>\n\n## Details section\n\ntext\n');
    const doc = await PDFDocument.load(pdf);
    const links = doc.getPages()[0].node.Annots()?.asArray().map((ref) => doc.context.lookup(ref) as PDFDict) ?? [];
    expect(links.map((link) => link.get(PDFName.of('Subtype'))?.toString())).toEqual(['/Link']);
    // An internal destination (a page of this document), not a URI.
    expect(links[0].get(PDFName.of('A'))).toBeUndefined();
    expect(links[0].get(PDFName.of('Dest'))).toBeDefined();
  });

  it("prints code in GitHub's colours when the block names its language, and alerts with their colour", async () => {
    const pdf = await markdownPdf('```js\nconst total = 42;\n```\n\n> [!CAUTION]\n> Payment is overdue.\n');
    const [{ fillColors }] = await readPdfDrawing(pdf);
    expect(fillColors).toEqual(expect.arrayContaining(['#cf222e', '#0550ae', '#d1242f'])); // keyword, number, the caution title
    expect((await readPdf(pdf))[0].text.replace(/\s+/g, ' ')).toMatch(/^const total = 42 ?; Caution Payment is overdue\.$/); // pdfjs may split a run at a colour change
  });

  it('prints footnotes at the end of the document, each reference a link inside the PDF to its note', async () => {
    const pdf = await markdownPdf('Revenue grew[^growth].\n\n[^growth]: Year on year, at constant rates.\n\n<div style="break-after:page"></div>\n\nClosing remarks.\n');
    const pages = await readPdf(pdf);
    expect(pages).toHaveLength(2);
    expect(pages[0].text).not.toContain('Year on year');
    expect(pages[1].text).toBe('Closing remarks. 1. Year on year, at constant rates. ↩'); // the "Footnotes" heading is for screen readers only
    const doc = await PDFDocument.load(pdf);
    const links = doc.getPages()[0].node.Annots()?.asArray().map((ref) => doc.context.lookup(ref) as PDFDict) ?? [];
    expect(links).toHaveLength(1);
    expect(links[0].get(PDFName.of('Dest'))).toBeDefined();
  });
});
