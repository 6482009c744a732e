/**
 * Writes the input files the README's API examples use into a directory (the current one by default), so every
 * example can be pasted as it stands: `npm run example-inputs [dir]`. PDFs are made with pdf-lib, the ZIP with yazl,
 * the PNGs with the tests' chunk writer; nothing needs the service or the network.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { PDFDocument, PageSizes, StandardFonts, rgb } from 'pdf-lib';
import { ZipFile } from 'yazl';
import { pngChunk } from '../test/support/images';

/** A PDF of A4 pages, each showing its label in large type. */
async function labelledPdf(title: string, labels: string[]): Promise<PDFDocument> {
  const doc = await PDFDocument.create();
  doc.setTitle(title);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const label of labels) {
    const page = doc.addPage(PageSizes.A4);
    page.drawText(label, { x: 72, y: 842 - 144, size: 36, font, color: rgb(0.1, 0.1, 0.3) });
  }
  return doc;
}

const pages = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}`);

/** A PNG (RGB, 8 bits) of a diagonal colour gradient. */
function gradientPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 2; // RGB
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) rows.set([(255 * x) / width, (255 * y) / height, 160], y * (1 + width * 3) + 1 + x * 3);
  }
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(rows)), pngChunk('IEND', Buffer.alloc(0))]);
}

function zip(files: Record<string, string | Buffer>): Promise<Buffer> {
  const archive = new ZipFile();
  for (const [name, content] of Object.entries(files)) archive.addBuffer(Buffer.from(content), name);
  archive.end();
  const parts: Buffer[] = [];
  return new Promise((resolve, reject) => {
    archive.outputStream.on('data', (part: Buffer) => parts.push(part)).on('end', () => resolve(Buffer.concat(parts))).on('error', reject);
  });
}

/** Writes every input file into `dir`, reporting each through `log`. */
export async function writeExampleInputs(dir: string, log: (line: string) => void = () => undefined): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const write = (name: string, bytes: Uint8Array | string) => {
    writeFileSync(path.join(dir, name), bytes);
    log(`wrote ${name}`);
  };

  write('cover.pdf', await (await labelledPdf('Cover', ['Q3 report'])).save());
  write('report.pdf', await (await labelledPdf('Report', pages('Report page', 6))).save());
  write('a.pdf', await (await labelledPdf('A', pages('A', 3))).save());
  write('b.pdf', await (await labelledPdf('B', pages('B', 2))).save());
  write('big.pdf', await (await labelledPdf('Big', pages('Page', 120))).save());

  // A two-page application form with one required text field, filled in (what the inspect example lists).
  const form = await labelledPdf('Application', ['Application form', 'Notes']);
  const name = form.getForm().createTextField('applicant.name');
  name.setMaxLength(40);
  name.setText('Ada');
  name.enableRequired();
  name.addToPage(form.getPage(0), { x: 72, y: 600, width: 300, height: 28 });
  write('form.pdf', await form.save());

  copyFileSync(path.join(__dirname, '../test/fixtures/photo.jpg'), path.join(dir, 'photo.jpg'));
  log('wrote photo.jpg');
  write('scan.png', gradientPng(600, 400));

  const style = 'body { font-family: sans-serif; color: #222 } h1 { color: #0b5394 }';
  write(
    'site.zip',
    await zip({
      'index.html': `<link rel="stylesheet" href="style.css"><h1>Home</h1><img src="images/logo.png" width="120"><p>Welcome.</p>`,
      'about.html': `<link rel="stylesheet" href="style.css"><h1>About</h1><p>Two pages of a small site.</p>`,
      'style.css': style,
      'images/logo.png': gradientPng(240, 80),
    }),
  );
  write('intro.md', '# Introduction\n\nWhat this guide covers.\n\n- setup\n- usage\n');
  write('guide.md', '# Guide\n\n| Step | What |\n|---|---|\n| 1 | Install |\n| 2 | Run |\n\n```sh\nnpm start\n```\n');
}

if (require.main === module) {
  // npm runs scripts in the package root; INIT_CWD is where `npm run` was typed, the "current directory" meant.
  const cwd = process.env.INIT_CWD || process.cwd();
  writeExampleInputs(path.resolve(cwd, process.argv[2] ?? '.'), console.log).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
