/**
 * Hostile page trees, lying /Count values, encryption dictionaries and page sizes: each ends in a spec error code
 * or a correct answer, read from the real page tree (never from /Count), without walking what a few bytes declare.
 */
import { parseFilenamePattern } from '../../../../functions/core/pdf/filenames';
import { inspectPdf } from '../../../../functions/core/pdf/inspect';
import { INSTANT_LIMITS } from '../../../../functions/core/pdf/limits';
import { openInput, planSplit } from '../../../../functions/core/pdf/operations';
import { refusal } from '../../../support/errors';
import { pdfOfObjects } from '../../../support/pdf-fixtures';

const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';
const page = (extra = '', parent = 2) => `<< /Type /Page /Parent ${parent} 0 R /MediaBox [0 0 200 200] ${extra} >>`;
const input = (bytes: Uint8Array) => ({ bytes, filename: 'hostile.pdf', index: 1 });
const inspect = (bytes: Uint8Array, forEdit = false) => inspectPdf(bytes, { filename: 'hostile.pdf', maxPages: 500, forEdit });
const splitEachPage = (bytes: Uint8Array) => {
  const file = input(bytes);
  return planSplit({ input: file, split: { mode: 'each_page' }, pattern: parseFilenamePattern(undefined) }, openInput(file), INSTANT_LIMITS);
};
/** A page tree of `pages` pages under one node whose /Count says `count`. */
function pagesWithCount(pages: number, count: string): Uint8Array {
  const objects: Record<number, string> = { 1: CATALOG };
  const kids: string[] = [];
  for (let i = 0; i < pages; i++) {
    objects[10 + i] = page();
    kids.push(`${10 + i} 0 R`);
  }
  objects[2] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${count} >>`;
  return pdfOfObjects(objects);
}

describe('page tree attacks', () => {
  it.each([
    ['a Pages node that is its own kid', { 1: CATALOG, 2: '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1 >>', 3: page() }],
    ['two Pages nodes that are each other’s kid', { 1: CATALOG, 2: '<< /Type /Pages /Kids [4 0 R 3 0 R] /Count 1 >>', 3: page(), 4: '<< /Type /Pages /Kids [2 0 R] /Parent 2 0 R /Count 1 >>' }],
  ])('refuses %s as a page tree loop', (_what, objects) => {
    const err = refusal(() => openInput(input(pdfOfObjects(objects))));
    expect(err).toMatchObject({ code: 'INVALID_PDF', details: { reason: 'page_tree_loop', filename: 'hostile.pdf', input_index: 1 } });
    expect(err.message).toMatch(/refers back to itself/);
  });

  it('refuses a page listed twice, saying so (pages could not be numbered as the author sees them)', () => {
    const err = refusal(() => openInput(input(pdfOfObjects({ 1: CATALOG, 2: '<< /Type /Pages /Kids [3 0 R 3 0 R] /Count 2 >>', 3: page() }))));
    expect(err).toMatchObject({ code: 'INVALID_PDF', details: { reason: 'page_tree_loop' } });
    expect(err.message).toMatch(/lists page object 3 more than once/);
  });

  it('refuses a million pages declared by 12 KB of repeated references without listing them', () => {
    // 1,000 references to a node of 1,000 references to one page.
    const bytes = pdfOfObjects({
      1: CATALOG,
      2: `<< /Type /Pages /Kids [${'4 0 R '.repeat(1000)}] /Count 1000000 >>`,
      4: `<< /Type /Pages /Kids [${'3 0 R '.repeat(1000)}] /Parent 2 0 R /Count 1000 >>`,
      3: page('', 4),
    });
    expect(bytes.length).toBeLessThan(16 * 1024);
    expect(refusal(() => inspect(bytes))).toMatchObject({ code: 'INVALID_PDF', details: { reason: 'page_tree_loop' } });
  });

  it('refuses a page tree nested 300 deep as too complex', () => {
    const objects: Record<number, string> = { 1: '<< /Type /Catalog /Pages 10 0 R >>' };
    for (let i = 0; i < 300; i++) objects[10 + i] = `<< /Type /Pages /Kids [${11 + i} 0 R] /Count 1 >>`;
    objects[310] = '<< /Type /Page /MediaBox [0 0 10 10] >>';
    expect(refusal(() => openInput(input(pdfOfObjects(objects))))).toMatchObject({ code: 'PDF_TOO_COMPLEX', details: { reason: 'page_tree_depth' } });
  });

  it('never follows /Parent: a /Parent cycle or a page that is its own parent reads as its pages', () => {
    const cycle = pdfOfObjects({ 1: CATALOG, 2: '<< /Type /Pages /Kids [3 0 R] /Count 1 /Parent 4 0 R >>', 3: page(), 4: '<< /Type /Pages /Kids [2 0 R] /Parent 2 0 R /Count 1 >>' });
    const ownParent = pdfOfObjects({ 1: CATALOG, 2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 3: page('', 3) });
    for (const bytes of [cycle, ownParent]) expect(splitEachPage(bytes).outputs).toHaveLength(1);
  });

  it('refuses a /Kids entry that is not a dictionary instead of renumbering the pages after it', () => {
    const bytes = pdfOfObjects({ 1: CATALOG, 2: '<< /Type /Pages /Kids [3 0 R (not a page) 4 0 R] /Count 2 >>', 3: page(), 4: page() });
    expect(refusal(() => openInput(input(bytes)))).toMatchObject({ code: 'INVALID_PDF', details: { reason: 'damaged_page' } });
  });
});

describe('a lying /Count', () => {
  it.each(['0', '-5', '99999999999999999999999', '501'])('counts the pages of the tree when /Count says %s', (count) => {
    const bytes = pagesWithCount(2, count);
    expect(inspect(bytes).page_count).toBe(2);
    expect(splitEachPage(bytes)).toMatchObject({ inputPages: 2, pagesProcessed: 2 });
  });

  it('applies the page limit to the real pages when /Count claims one', () => {
    const bytes = pagesWithCount(501, '1');
    expect(refusal(() => splitEachPage(bytes))).toMatchObject({ code: 'PDF_PAGE_LIMIT_EXCEEDED', details: { pages: 501, max_pages: 500 } });
    expect(refusal(() => inspect(bytes, true))).toMatchObject({ code: 'PDF_PAGE_LIMIT_EXCEEDED', details: { pages: 501, max_pages: 200 } });
    expect(inspect(bytes).page_count).toBe(501);
  });
});

describe('encryption dictionaries', () => {
  const encrypted = (encrypt: string, extra: Record<number, string> = {}) =>
    Buffer.from(pdfOfObjects({ 1: CATALOG, 2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 3: page(), ...extra }).toString('latin1').replace('/Root 1 0 R', `/Root 1 0 R /Encrypt ${encrypt}`), 'latin1');

  // Document 2: "password-protected or encrypted (many exports are encrypted without a password)" is PDF_ENCRYPTED.
  it.each([
    ['an empty user password (RC4, R2)', '<< /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>'],
    ['AES-256 (R6)', '<< /Filter /Standard /V 5 /R 6 /Length 256 /CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF /O <00> /U <00> /OE <00> /UE <00> /Perms <00> /P -4 >>'],
    ['an unknown security handler', '<< /Filter /NoSuchHandler /V 9 >>'],
    ['/Encrypt that is not a dictionary', '5'],
    ['/Encrypt that is a reference loop', '4 0 R'],
  ])('refuses %s as PDF_ENCRYPTED and inspects it as encrypted', (_what, encrypt) => {
    const bytes = encrypted(encrypt, { 4: '5 0 R', 5: '4 0 R' });
    expect(refusal(() => openInput(input(bytes)))).toMatchObject({ code: 'PDF_ENCRYPTED', details: { filename: 'hostile.pdf', input_index: 1 } });
    expect(inspect(bytes)).toMatchObject({ encrypted: true, page_count: null });
  });
});

describe('page sizes and rotations', () => {
  const onePage = (dict: string) => inspect(pdfOfObjects({ 1: CATALOG, 2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 3: dict }), true).pages![0];

  it.each([
    ['a MediaBox of zero size', '[0 0 0 0]', { width: 0, height: 0 }],
    ['a MediaBox given corner to corner backwards', '[0 0 -100 -50]', { width: 100, height: 50 }],
    ['a 20,000 pt page', '[0 0 20000 14400]', { width: 20000, height: 14400 }],
    ['a MediaBox that is a reference loop (read as US Letter)', '4 0 R', { width: 612, height: 792 }],
  ])('reports %s', (_what, box, size) => {
    const objects = { 1: CATALOG, 2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 3: `<< /Type /Page /Parent 2 0 R /MediaBox ${box} >>`, 4: '5 0 R', 5: '4 0 R' };
    expect(inspect(pdfOfObjects(objects), true).pages![0]).toMatchObject(size);
  });

  it.each([
    ['45', 0],
    ['1000000000', 0],
    ['-90', 270],
    ['900000000', 0],
    ['4 0 R', 0],
  ])('normalises /Rotate %s to a right angle', (rotate, rotation) => {
    expect(onePage(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 200] /Rotate ${rotate} >>`).rotation).toBe(rotation);
  });

  it('scales by /UserUnit, ignoring one that is not a positive number', () => {
    expect(onePage('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 200] /UserUnit 2 >>')).toMatchObject({ width: 200, height: 400 });
    expect(onePage('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 200] /UserUnit -3 >>')).toMatchObject({ width: 100, height: 200 });
  });
});
