// Reads a PDF from stdin and prints what the tests look at, as JSON. A separate process because pdfjs-dist is an ES
// module that jest's CommonJS loader cannot load. The mode is the first argument:
// - `text`: {pages:[{width,height,rotate,text}]};
// - `drawing`: {pages:[{images:[{x,y,width,height}], fillColors:['#rrggbb', …]}]}. Image boxes are in PDF points from
//   the page's lower-left corner: the bounding box of the image's unit square under the transform in force when it is
//   painted (the clip is not applied, so a cropped image reaches past what is visible);
// - `links`: {pages:[{links:[{target, text}]}]}: each link annotation's target as pdfjs reads it (a web address, a
//   file with `#` and its destination, or `page:` and the page index a link inside the document goes to) and the text
//   under it.
import { OPS, getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const multiply = (m, n) => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];
const apply = (m, x, y) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
const IMAGE_OPS = new Set([OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageMaskXObject]);

async function textOf(page) {
  const content = await page.getTextContent();
  const [x0, y0, x1, y1] = page.view;
  return { width: x1 - x0, height: y1 - y0, rotate: page.rotate, text: content.items.map((item) => item.str).join(' ').replace(/\s+/g, ' ').trim() };
}

async function drawingOf(page) {
  const [x0, y0] = page.view;
  const { fnArray, argsArray } = await page.getOperatorList();
  let ctm = [1, 0, 0, 1, 0, 0];
  const stack = [];
  const images = [];
  const fillColors = [];
  fnArray.forEach((fn, k) => {
    const args = argsArray[k];
    if (fn === OPS.save || fn === OPS.paintFormXObjectBegin) stack.push(ctm);
    if (fn === OPS.restore || fn === OPS.paintFormXObjectEnd) ctm = stack.pop() ?? ctm;
    if (fn === OPS.transform) ctm = multiply(ctm, args);
    if (fn === OPS.paintFormXObjectBegin && args?.[0]) ctm = multiply(ctm, Array.from(args[0]));
    if (fn === OPS.setFillRGBColor && typeof args?.[0] === 'string') fillColors.push(args[0]);
    if (IMAGE_OPS.has(fn)) {
      const corners = [apply(ctm, 0, 0), apply(ctm, 1, 0), apply(ctm, 0, 1), apply(ctm, 1, 1)];
      const xs = corners.map((c) => c[0] - x0);
      const ys = corners.map((c) => c[1] - y0);
      images.push({ x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) });
    }
  });
  return { images, fillColors: [...new Set(fillColors)] };
}

async function linksOf(page, doc) {
  const { items } = await page.getTextContent();
  const textIn = ([x0, y0, x1, y1]) =>
    items
      .filter((item) => item.str && item.transform[4] >= x0 - 1 && item.transform[4] < x1 && item.transform[5] >= y0 - 2 && item.transform[5] <= y1)
      .map((item) => item.str)
      .join('')
      .trim();
  const links = [];
  for (const a of await page.getAnnotations()) {
    if (a.subtype !== 'Link') continue;
    let target = a.unsafeUrl ?? null;
    if (target === null && a.dest) {
      const dest = typeof a.dest === 'string' ? await doc.getDestination(a.dest) : a.dest;
      target = dest ? `page:${await doc.getPageIndex(dest[0])}` : null;
    }
    links.push({ target, text: textIn(a.rect) });
  }
  return { links };
}

const read = { text: textOf, drawing: drawingOf, links: linksOf }[process.argv[2]];
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const doc = await getDocument({ data: new Uint8Array(Buffer.concat(chunks)), verbosity: 0 }).promise;
const pages = [];
for (let i = 1; i <= doc.numPages; i++) pages.push(await read(await doc.getPage(i), doc));
process.stdout.write(JSON.stringify({ pages }));
