import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
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

describe('npm run example-inputs from another directory', () => {
  const repo = path.join(__dirname, '../../..');
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'example-inputs-cwd-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  // npm runs the script in the package root and says where it was typed in INIT_CWD, as here.
  const run = (initCwd: string, args: string[] = []) =>
    spawnSync(path.join(repo, 'node_modules/.bin/tsx'), [path.join(repo, 'scripts/example-inputs.ts'), ...args], {
      cwd: path.join(root, 'package'),
      env: { ...process.env, INIT_CWD: initCwd },
      encoding: 'utf8',
    });

  it('writes into the directory npm was run from (the README says the current directory), and resolves a relative dir from there', () => {
    const packageDir = path.join(root, 'package');
    const here = path.join(root, 'here');
    mkdirSync(packageDir);
    mkdirSync(here);
    expect(run(here).status).toBe(0);
    expect(readdirSync(here)).toContain('report.pdf');
    expect(run(here, ['inputs']).status).toBe(0);
    expect(readdirSync(path.join(here, 'inputs'))).toContain('site.zip');
    expect(readdirSync(packageDir)).toEqual([]);
  });
});
