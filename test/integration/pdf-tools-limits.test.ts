/**
 * Document 2's PDF tools at their edges, over HTTP: each limit at exactly its value and one past it, billing by
 * page band (selected pages of a merge, document pages of a split) and by files produced, the page-range forms,
 * the stored result of a single-file split, and each warning where the spec says it appears.
 */
import { randomBytes } from 'node:crypto';
import { PDFDocument, PDFNumber, PDFRawStream } from 'pdf-lib';
import { readPdf } from '../support/pdf';
import { b64, heavyPagePdf, pdfWithBookmarksAndLinks, pdfWithForm, simplePdf } from '../support/pdf-fixtures';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;
let five: Uint8Array;
let big: Uint8Array;

const MB = 1024 * 1024;
/** The standard plan's price of one merge or split (a quarter of price_per_pdf), in micros. */
const OP = 2_500;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account({ credits_usd: 5 });
  five = await simplePdf(5, { label: 'F' });
  big = await simplePdf(501, { label: 'B' });
});
afterAll(() => stack?.stop());

const post = (route: string, json: unknown, key = user.api_key) => stack.request('POST', route, { key, json });

async function errorOf(res: Response) {
  const body = await res.json();
  return { status: res.status, code: body.error?.code, details: body.error?.details ?? {} };
}

async function balance(accountId = user.account_id) {
  const acct = (await stack.services.accounts.get(accountId))!;
  return { credits: acct.credits_micros, pdfs: acct.total_pdf_count };
}

/** A one-page PDF of exactly `size` bytes: an unreferenced stream of random bytes carries the weight (never copied). */
async function pdfOfSize(size: number): Promise<Uint8Array> {
  const build = async (padding: number) => {
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    const ctx = doc.context;
    ctx.register(PDFRawStream.of(ctx.obj({ Length: PDFNumber.of(padding) }) as never, randomBytes(padding)));
    return doc.save({ useObjectStreams: false });
  };
  let padding = size - 2_000;
  for (let i = 0; i < 5; i++) {
    const bytes = await build(padding);
    if (bytes.length === size) return bytes;
    padding += size - bytes.length;
  }
  throw new Error(`could not build a PDF of exactly ${size} bytes`);
}

describe('instant limits at the limit and one past it', () => {
  it('merges 20 files (21 are refused elsewhere) and counts one file of usage', async () => {
    const before = await balance();
    const res = await post('/pdf/merge', { inputs: Array.from({ length: 20 }, (_, i) => ({ pdf_base64: b64(five), filename: `f${i}.pdf`, pages: '1' })) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('20');
    expect(await balance()).toEqual({ credits: before.credits - OP, pdfs: before.pdfs + 1 });
  });

  it('takes exactly 4 MB of input (merge in total, split alone) and refuses one byte more', async () => {
    const exact = await pdfOfSize(4 * MB);
    const split = await post('/pdf/split', { input: { pdf_base64: b64(exact), filename: 'exact.pdf' }, split: { mode: 'each_page' } });
    expect(split.status).toBe(200);
    expect(split.headers.get('content-type')).toBe('application/pdf');
    const over = await pdfOfSize(4 * MB + 1);
    expect(await errorOf(await post('/pdf/split', { input: { pdf_base64: b64(over), filename: 'over.pdf' }, split: { mode: 'each_page' } }))).toMatchObject({
      status: 400,
      code: 'PDF_INPUT_TOO_LARGE',
      details: { size_bytes: 4 * MB + 1, max_bytes: 4 * MB, filename: 'over.pdf', input_index: 0 },
    });

    const half = await pdfOfSize(2 * MB);
    const merged = await post('/pdf/merge', { inputs: [{ pdf_base64: b64(half) }, { pdf_base64: b64(half) }] });
    expect(merged.status).toBe(200);
    const halfAndOne = await pdfOfSize(2 * MB + 1);
    expect(await errorOf(await post('/pdf/merge', { inputs: [{ pdf_base64: b64(half) }, { pdf_base64: b64(halfAndOne), filename: 'second.pdf' }] }))).toMatchObject({
      status: 400,
      code: 'PDF_INPUT_TOO_LARGE',
      details: { size_bytes: 4 * MB + 1, max_bytes: 4 * MB, filename: 'second.pdf', input_index: 1 },
    });
  });

  it('merges exactly 500 selected pages and refuses 501', async () => {
    const ok = await post('/pdf/merge', { inputs: [{ pdf_base64: b64(big), pages: '1-499' }, { pdf_base64: b64(five), pages: '5' }] });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-pdf-pages')).toBe('500');
    expect(await errorOf(await post('/pdf/merge', { inputs: [{ pdf_base64: b64(big), pages: '1-500' }, { pdf_base64: b64(five), pages: '5', filename: 'five.pdf' }] }))).toMatchObject({
      status: 400,
      code: 'PDF_PAGE_LIMIT_EXCEEDED',
      details: { pages: 501, max_pages: 500, filename: 'five.pdf', input_index: 1 },
    });
  });

  it('splits a 500-page document and refuses one of 501 pages, however few pages it selects', async () => {
    const fiveHundred = await simplePdf(500);
    const ok = await post('/pdf/split', { input: { pdf_base64: b64(fiveHundred), filename: 'ok.pdf' }, split: { mode: 'extract', pages: '500' } });
    expect(ok.status).toBe(200);
    expect(await errorOf(await post('/pdf/split', { input: { pdf_base64: b64(big), filename: 'big.pdf' }, split: { mode: 'extract', pages: '1' } }))).toMatchObject({
      status: 400,
      code: 'PDF_PAGE_LIMIT_EXCEEDED',
      details: { pages: 501, max_pages: 500, filename: 'big.pdf', input_index: 0 },
    });
  });

  it('splits into exactly 100 files (each_page, every_n, ranges), adding 100 to usage', async () => {
    const hundred = await simplePdf(100);
    const before = await balance();
    const res = await post('/pdf/split', { input: { pdf_base64: b64(hundred), filename: 'h.pdf' }, split: { mode: 'each_page' } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.output_count).toBe(100);
    expect(body.outputs).toHaveLength(100);
    // 100 document pages: the second band, whatever the number of files.
    expect(await balance()).toEqual({ credits: before.credits - 2 * OP, pdfs: before.pdfs + 100 });
    expect((await post('/pdf/split', { input: { pdf_base64: b64(hundred) }, split: { mode: 'every_n', every_n: 1 } })).status).toBe(200);
    expect((await post('/pdf/split', { input: { pdf_base64: b64(hundred) }, split: { mode: 'ranges', ranges: Array(100).fill('1') } })).status).toBe(200);
    const tooMany = await simplePdf(101);
    expect(await errorOf(await post('/pdf/split', { input: { pdf_base64: b64(tooMany) }, split: { mode: 'every_n', every_n: 1 } }))).toMatchObject({
      status: 400,
      code: 'OUTPUT_COUNT_EXCEEDED',
      details: { output_count: 101, max_outputs: 100 },
    });
  });
});

describe('inspect at its limits', () => {
  it('describes exactly 4 MB of direct input and refuses one byte more; reports pages past its max_pages without refusing', async () => {
    const exact = await post('/pdf/inspect', { input: { pdf_base64: b64(await pdfOfSize(4 * MB)), filename: 'exact.pdf' } });
    expect(exact.status).toBe(200);
    expect(await exact.json()).toMatchObject({ filename: 'exact.pdf', size_bytes: 4 * MB, page_count: 1, max_pages: 500 });
    expect(await errorOf(await post('/pdf/inspect', { input: { pdf_base64: b64(await pdfOfSize(4 * MB + 1)), filename: 'over.pdf' } }))).toMatchObject({
      status: 400,
      code: 'PDF_INPUT_TOO_LARGE',
      details: { size_bytes: 4 * MB + 1, max_bytes: 4 * MB, filename: 'over.pdf' },
    });
    const res = await post('/pdf/inspect', { input: { pdf_base64: b64(big) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ page_count: 501, max_pages: 500, encrypted: false });
  });
});

describe('a result of 4.4 MB or more', () => {
  it('is stored and answered as JSON even without store (a merge here)', async () => {
    // One page with 50 notes of 4 KB of random text: every copy of the page carries its own (about 400 KB each).
    const noted = await heavyPagePdf();
    const copies = Array(15).fill('1').join(',');
    const res = await post('/pdf/merge', { inputs: [{ pdf_base64: b64(noted), pages: copies }, { pdf_base64: b64(noted), pages: copies }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toMatchObject({ operation: 'pdf_merge', status: 'completed', output_count: 1, zip_url: null });
    expect(body.outputs[0].size_bytes).toBeGreaterThanOrEqual(4.4 * MB);
    expect(body.outputs[0].pages).toBe(30);
  });
});

describe('billing by page band', () => {
  it.each([
    [50, 1],
    [51, 2],
    [250, 2],
    [251, 4],
    [500, 4],
  ])('a merge of %d selected pages costs %d times the operation price', async (pages, multiplier) => {
    const before = await balance();
    const res = await post('/pdf/merge', { inputs: [{ pdf_base64: b64(big), pages: `1-${pages - 1}` }, { pdf_base64: b64(five), pages: '1' }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe(String(pages));
    expect(await balance()).toEqual({ credits: before.credits - multiplier * OP, pdfs: before.pdfs + 1 });
  });

  it('charges a split by the pages of the document, not the pages it keeps: one page of 60 costs twice', async () => {
    const sixty = await simplePdf(60);
    const before = await balance();
    const res = await post('/pdf/split', { input: { pdf_base64: b64(sixty) }, split: { mode: 'extract', pages: '1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('1');
    expect(await balance()).toEqual({ credits: before.credits - 2 * OP, pdfs: before.pdfs + 1 });
    // A merge counts what it selects: the same page, merged twice, is the first band.
    const merged = await post('/pdf/merge', { inputs: [{ pdf_base64: b64(sixty), pages: '1' }, { pdf_base64: b64(sixty), pages: '60' }] });
    expect(merged.status).toBe(200);
    expect((await balance()).credits).toBe(before.credits - 3 * OP);
  });
});

describe('page ranges over HTTP', () => {
  it('takes pages, ranges and open ranges in the written order, with repeats and spaces', async () => {
    const res = await post('/pdf/split', { input: { pdf_base64: b64(five) }, split: { mode: 'extract', pages: ' 4 - end , 2,2, 1-1 ,5,1' } });
    expect(res.status).toBe(200);
    expect((await readPdf(new Uint8Array(await res.arrayBuffer()))).map((p) => p.text)).toEqual(['F page 4', 'F page 5', 'F page 2', 'F page 2', 'F page 1', 'F page 5', 'F page 1']);
  });

  it.each([
    ['0', '0'],
    ['1,-2', '-2'],
    ['1.5', '1.5'],
    ['1,,2', ''],
    ['5-3', '5-3'],
    ['', ''],
  ])('refuses %j with INVALID_PAGE_RANGE naming the part %j', async (pages, token) => {
    expect(await errorOf(await post('/pdf/split', { input: { pdf_base64: b64(five), filename: 'five.pdf' }, split: { mode: 'extract', pages } }))).toMatchObject({
      status: 400,
      code: 'INVALID_PAGE_RANGE',
      details: { token, parameter: 'split.pages', filename: 'five.pdf', input_index: 0 },
    });
  });

  it('takes 500 parts and refuses 501; a page past the end (open ranges too) is PAGE_OUT_OF_RANGE with total_pages', async () => {
    const ok = await post('/pdf/merge', { inputs: [{ pdf_base64: b64(five), pages: Array(499).fill('1').join(',') }, { pdf_base64: b64(five), pages: '1' }] });
    expect(ok.status).toBe(200);
    expect((await post('/pdf/split', { input: { pdf_base64: b64(five) }, split: { mode: 'extract', pages: Array(500).fill('1').join(',') } })).status).toBe(200);
    expect(await errorOf(await post('/pdf/split', { input: { pdf_base64: b64(five) }, split: { mode: 'extract', pages: Array(501).fill('1').join(',') } }))).toMatchObject({
      status: 400,
      code: 'INVALID_PAGE_RANGE',
      details: { max_parts: 500 },
    });
    for (const pages of ['6', '6-end', '2-6']) {
      expect(await errorOf(await post('/pdf/split', { input: { pdf_base64: b64(five) }, split: { mode: 'extract', pages } }))).toMatchObject({
        status: 400,
        code: 'PAGE_OUT_OF_RANGE',
        details: { total_pages: 5, token: pages },
      });
    }
  });
});

describe('stored result and warnings', () => {
  it('stores a single-file split with store: true: JSON, zip_url null, a one-hour link, the split fields', async () => {
    const before = Date.now();
    const res = await post('/pdf/split', { input: { pdf_base64: b64(five), filename: 'five.pdf' }, split: { mode: 'extract', pages: '2-3' }, store: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toEqual({
      job_id: res.headers.get('x-job-id'),
      operation: 'pdf_split',
      status: 'completed',
      input_pages: 5,
      output_count: 1,
      outputs: [{ index: 0, name: 'five-001.pdf', pages: 2, page_range: '2-3', size_bytes: expect.any(Number), warnings: [], download_url: expect.stringMatching(/^http/) }],
      zip_url: null,
      download_url_expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      warnings: [],
    });
    const expiresIn = Date.parse(body.download_url_expires_at) - before;
    expect(expiresIn).toBeGreaterThan(3_590_000);
    expect(expiresIn).toBeLessThanOrEqual(3_600_000 + 60_000);
    const file = await fetch(body.outputs[0].download_url);
    expect(Number(file.headers.get('content-length'))).toBe(body.outputs[0].size_bytes);
  });

  it('reports BOOKMARKS_NOT_PRESERVED in the header, the stored result and the file rows', async () => {
    const res = await post('/pdf/merge', { inputs: [{ pdf_base64: b64(await pdfWithBookmarksAndLinks()) }, { pdf_base64: b64(five) }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-warnings')).toBe('BOOKMARKS_NOT_PRESERVED');
    const rows = await (await stack.request('GET', `/jobs/${res.headers.get('x-job-id')}/files`, { key: user.api_key })).json();
    expect(rows.files[0].warnings).toEqual(['BOOKMARKS_NOT_PRESERVED']);
  });

  it('gives each split file its own warnings and the result all of them (form fields only where a copied page had them)', async () => {
    const res = await post('/pdf/split', { input: { pdf_base64: b64(await pdfWithForm()), filename: 'form.pdf' }, split: { mode: 'each_page' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-warnings')).toBe('FORM_FIELDS_NOT_PRESERVED');
    const body = await res.json();
    expect(body.warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED']);
    expect(body.outputs.map((o: { warnings: string[] }) => o.warnings)).toEqual([['FORM_FIELDS_NOT_PRESERVED'], []]);
    const rows = await (await stack.request('GET', `/jobs/${body.job_id}/files`, { key: user.api_key })).json();
    expect(rows.files.map((f: { warnings: string[] }) => f.warnings)).toEqual([['FORM_FIELDS_NOT_PRESERVED'], []]);
  });
});
