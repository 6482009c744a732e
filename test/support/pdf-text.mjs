// Reads a PDF from stdin and prints {pages:[{width,height,text}]} as JSON. A separate process because
// pdfjs-dist is an ES module that jest's CommonJS loader cannot load.
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const doc = await getDocument({ data: new Uint8Array(Buffer.concat(chunks)), verbosity: 0 }).promise;
const pages = [];
for (let i = 1; i <= doc.numPages; i++) {
  const page = await doc.getPage(i);
  const content = await page.getTextContent();
  const [x0, y0, x1, y1] = page.view;
  pages.push({ width: x1 - x0, height: y1 - y0, rotate: page.rotate, text: content.items.map((item) => item.str).join(' ').replace(/\s+/g, ' ').trim() });
}
process.stdout.write(JSON.stringify({ pages }));
