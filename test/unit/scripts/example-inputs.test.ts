import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { checkImage } from '../../../functions/core/render/images';
import { writeExampleInputs } from '../../../scripts/example-inputs';

describe('npm run example-inputs (the files the README examples use)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'example-inputs-'));
    await writeExampleInputs(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const pdf = (name: string) => PDFDocument.load(readFileSync(path.join(dir, name)));

  it('writes every file the examples name, with the pages they need', async () => {
    expect(readdirSync(dir).sort()).toEqual(['a.pdf', 'b.pdf', 'big.pdf', 'cover.pdf', 'form.pdf', 'guide.md', 'intro.md', 'photo.jpg', 'report.pdf', 'scan.png', 'site.zip']);
    expect((await pdf('report.pdf')).getPageCount()).toBeGreaterThanOrEqual(4);
    expect((await pdf('a.pdf')).getPageCount()).toBeGreaterThanOrEqual(3);
    expect((await pdf('big.pdf')).getPageCount()).toBe(120); // split every 50 → 3 files
    // The images pass the image input's own checks (structure, scanlines), as the image example needs.
    for (const image of ['photo.jpg', 'scan.png']) expect(await checkImage(readFileSync(path.join(dir, image)))).toMatchObject({ ok: true });
    expect(readFileSync(path.join(dir, 'site.zip')).subarray(0, 2).toString()).toBe('PK');
  });

  it('makes form.pdf with the filled, required field the inspect example lists', async () => {
    const field = (await pdf('form.pdf')).getForm().getTextField('applicant.name');
    expect([field.getText(), field.isRequired(), field.getMaxLength()]).toEqual(['Ada', true, 40]);
  });
});
