import { PDFDocument } from 'pdf-lib';
import { fromBuffer } from 'yauzl';
import { planCatalogue } from '../../functions/core/billing/plans';
import { newJob } from '../../functions/core/jobs/job';
import { readPdf } from '../support/pdf';
import {
  NOT_A_PDF,
  b64,
  deeplyNestedPdf,
  encryptedPdf,
  heavyPagePdf,
  pdfWithForm,
  pdfWithSignature,
  simplePdf,
  truncated,
  xrefPointingNowhere,
  zeroPagePdf,
} from '../support/pdf-fixtures';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { expectHourLink } from '../support/links';

let stack: TestStack;
let user: TestAccount;
let a: Uint8Array;
let b: Uint8Array;
let twelve: Uint8Array;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account({ credits_usd: 5 });
  a = await simplePdf(3, { label: 'A' });
  b = await simplePdf(2, { label: 'B', size: [300, 500], rotate: 90 });
  twelve = await simplePdf(12, { label: 'S' });
});
afterAll(() => stack?.stop());

function form(files: { field: string; bytes: Uint8Array; name: string }[], fields: Record<string, string> = {}): FormData {
  const fd = new FormData();
  for (const f of files) fd.append(f.field, new Blob([Uint8Array.from(f.bytes)], { type: 'application/pdf' }), f.name);
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  return fd;
}

const post = (route: string, init: { json?: unknown; body?: FormData | string; headers?: Record<string, string> }, key = user.api_key) => stack.request('POST', route, { key, ...init });
const get = (route: string, key = user.api_key) => stack.request('GET', route, { key });

async function errorOf(res: Response) {
  const body = await res.json();
  return { status: res.status, code: body.error?.code, details: body.error?.details ?? {}, message: body.error?.message };
}

async function balance(accountId = user.account_id) {
  const acct = (await stack.services.accounts.get(accountId))!;
  return { credits: acct.credits_micros, pdfs: acct.total_pdf_count };
}

function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    fromBuffer(bytes, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out = new Map<string, Buffer>();
      zip.readEntry();
      zip.on('entry', (entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
    });
  });
}

describe('POST /pdf/merge', () => {
  it('returns the merged PDF with the spec headers (multipart), pages in the given order, and charges one operation', async () => {
    const before = await balance();
    const res = await post('/pdf/merge', {
      body: form(
        [
          { field: 'files', bytes: a, name: 'a.pdf' },
          { field: 'files', bytes: b, name: 'b.pdf' },
        ],
        { page_ranges: JSON.stringify(['3,1', null]), options: JSON.stringify({ output_filename: 'Bundle 7', title: 'Bundle' }) },
      ),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Bundle 7.pdf"; filename*=UTF-8''Bundle%207.pdf`);
    expect(res.headers.get('x-pdf-pages')).toBe('4');
    expect(res.headers.get('x-pdf-output-count')).toBe('1');
    expect(res.headers.get('x-pdf-warnings')).toBe('');
    const jobId = res.headers.get('x-job-id')!;
    const pages = await readPdf(new Uint8Array(await res.arrayBuffer()));
    expect(pages.map((p) => p.text)).toEqual(['A page 3', 'A page 1', 'B page 1', 'B page 2']);
    expect(pages[2]).toMatchObject({ width: 300, height: 500, rotate: 90 });

    const job = await (await get(`/jobs/${jobId}`)).json();
    expect(job).toMatchObject({ job_id: jobId, status: 'completed', job_type: 'pdfop', operation: 'merge', split_mode: null, input_files: 2, input_pages: 5, outputs_produced: 1, pages: 4 });
    expect(job.s3_url).toBeUndefined();
    expect(await balance()).toEqual({ credits: before.credits - 2_500, pdfs: before.pdfs + 1 });
    // Returned directly, so not stored: the files route lists it, the file download says so.
    const files = await (await get(`/jobs/${jobId}/files`)).json();
    expect(files).toMatchObject({ job_id: jobId, status: 'completed', bundle_type: null, count: 1 });
    expect(files.files[0]).toEqual({
      index: 0, input: 'a.pdf, b.pdf', output: 'Bundle 7.pdf', status: 'success', pages: 4, error_code: null, error_message: null,
      blocked_requests: 0, render_timeout: false, missing_assets: 0, page_range: '1-4', size_bytes: expect.any(Number), warnings: [],
    });
    expect(await errorOf(await get(`/jobs/${jobId}/files/0/download`))).toMatchObject({ status: 404, code: 'OUTPUT_NOT_AVAILABLE' });
  });

  it('stores the result with store: true (JSON inputs) and keeps it reachable for 7 days, then 410', async () => {
    const res = await post('/pdf/merge', { json: { inputs: [{ pdf_base64: b64(a), filename: 'a.pdf', pages: '2' }, { pdf_base64: b64(b), filename: 'b.pdf' }], store: true } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ operation: 'pdf_merge', status: 'completed', input_pages: 5, output_count: 1, zip_url: null, warnings: [] });
    // A stored result carries the job's headers too (README): the job id as on a direct answer.
    expect([res.headers.get('x-job-id'), res.headers.get('x-pdf-warnings')]).toEqual([body.job_id, '']);
    expect(body.outputs).toEqual([{ index: 0, name: 'merged.pdf', pages: 3, page_range: '1-3', size_bytes: expect.any(Number), warnings: [], download_url: expect.stringMatching(/^http/) }]);
    expectHourLink(body.outputs[0].download_url, body.download_url_expires_at, await (await get(`/jobs/${body.job_id}`)).json());
    const file = await fetch(body.outputs[0].download_url);
    expect((await readPdf(new Uint8Array(await file.arrayBuffer()))).map((p) => p.text)).toEqual(['A page 2', 'B page 1', 'B page 2']);

    const link = await (await get(`/jobs/${body.job_id}/files/0/download`)).json();
    expect(link).toMatchObject({ job_id: body.job_id, file_index: 0, name: 'merged.pdf', expires_in_seconds: 3600, content_type: 'application/pdf', size_bytes: body.outputs[0].size_bytes });
    expect((await fetch(link.download_url)).status).toBe(200);
    const whole = await (await get(`/jobs/${body.job_id}/download`)).json();
    expect(whole).toMatchObject({ content_type: 'application/pdf', size_bytes: body.outputs[0].size_bytes });

    // Seven days later: retention has removed it.
    const job = (await stack.services.jobs.get(body.job_id))!;
    await stack.services.jobs.put({ ...job, output: { ...job.output!, expires_at: '2020-01-01T00:00:00.000Z' } });
    const rows = await stack.services.jobFiles.list(body.job_id);
    await stack.services.jobFiles.putAll(body.job_id, rows.map((r) => ({ ...r, expires_at: '2020-01-01T00:00:00.000Z' })));
    expect(await errorOf(await get(`/jobs/${body.job_id}/files/0/download`))).toMatchObject({ status: 410, code: 'OUTPUT_EXPIRED' });
    expect(await errorOf(await get(`/jobs/${body.job_id}/download`))).toMatchObject({ status: 410, code: 'OUTPUT_EXPIRED' });
  });

  it('reports warnings in the header and on the file row, truthfully', async () => {
    const res = await post('/pdf/merge', { body: form([{ field: 'files', bytes: await pdfWithForm(), name: 'form.pdf' }, { field: 'files', bytes: await pdfWithSignature(), name: 'signed.pdf' }]) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-warnings')).toBe('FORM_FIELDS_NOT_PRESERVED,SIGNATURE_INVALIDATED');
    const files = await (await get(`/jobs/${res.headers.get('x-job-id')}/files`)).json();
    expect(files.files[0].warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED', 'SIGNATURE_INVALIDATED']);
  });

  it('charges by page band: 62 selected pages cost twice the operation price', async () => {
    const sixty = await simplePdf(60);
    const before = await balance();
    const res = await post('/pdf/merge', { json: { inputs: [{ pdf_base64: b64(sixty) }, { pdf_base64: b64(a), pages: '1,2' }] } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('62');
    expect((await balance()).credits).toBe(before.credits - 5_000);
  });
});

describe('POST /pdf/split', () => {
  it('stores a multi-file split: a link per file, a ZIP of them all, files route rows, usage by file count', async () => {
    const before = await balance();
    const res = await post('/pdf/split', {
      body: form([{ field: 'file', bytes: twelve, name: 'Annual report.pdf' }], { split: JSON.stringify({ mode: 'ranges', ranges: ['1-3', '3-4', '12-end'] }), options: JSON.stringify({ filename_pattern: '{basename} {pages}.pdf' }) }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ operation: 'pdf_split', status: 'completed', input_pages: 12, output_count: 3, warnings: [] });
    expect(body.outputs.map((o: { name: string; page_range: string; pages: number }) => [o.name, o.page_range, o.pages])).toEqual([
      ['Annual report 1-3.pdf', '1-3', 3],
      ['Annual report 3-4.pdf', '3-4', 2],
      ['Annual report 12.pdf', '12', 1],
    ]);
    const zip = await unzip(Buffer.from(await (await fetch(body.zip_url)).arrayBuffer()));
    expect([...zip.keys()]).toEqual(['Annual report 1-3.pdf', 'Annual report 3-4.pdf', 'Annual report 12.pdf']);
    expect((await readPdf(new Uint8Array(zip.get('Annual report 3-4.pdf')!))).map((p) => p.text)).toEqual(['S page 3', 'S page 4']);
    const second = await fetch(body.outputs[1].download_url);
    expect(Number(second.headers.get('content-length'))).toBe(body.outputs[1].size_bytes);
    const files = await (await get(`/jobs/${body.job_id}/files`)).json();
    expect(files.files.map((f: { output: string; status: string }) => [f.output, f.status])).toEqual(body.outputs.map((o: { name: string }) => [o.name, 'success']));
    const download = await (await get(`/jobs/${body.job_id}/download`)).json();
    expect(download).toMatchObject({ content_type: 'application/zip' });
    expect(await balance()).toEqual({ credits: before.credits - 2_500, pdfs: before.pdfs + 3 });
    expect(await errorOf(await get(`/jobs/${body.job_id}/files/7/download`))).toMatchObject({ status: 404, code: 'FILE_NOT_FOUND' });
    expect(await errorOf(await get(`/jobs/${body.job_id}/files/x/download`))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER' });
  });

  it('answers a single-file split with the PDF itself (JSON input), every_n and each_page by JSON', async () => {
    const res = await post('/pdf/split', { json: { input: { pdf_base64: b64(twelve), filename: 'x.pdf' }, split: { mode: 'extract', pages: '12,1' } } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain('filename="x-001.pdf"');
    expect((await readPdf(new Uint8Array(await res.arrayBuffer()))).map((p) => p.text)).toEqual(['S page 12', 'S page 1']);
    const everyN = await (await post('/pdf/split', { json: { input: { pdf_base64: b64(twelve) }, split: { mode: 'every_n', every_n: 5 } } })).json();
    expect(everyN.outputs.map((o: { page_range: string }) => o.page_range)).toEqual(['1-5', '6-10', '11-12']);
    const each = await (await post('/pdf/split', { json: { input: { pdf_base64: b64(a), filename: 'a.pdf' }, split: { mode: 'each_page' }, options: { filename_pattern: 'page.pdf' } } })).json();
    expect(each.outputs.map((o: { name: string }) => o.name)).toEqual(['page.pdf', 'page-2.pdf', 'page-3.pdf']);
  });
  it('answers a single-file result smaller than 4.4 MB (binary megabytes, as the spec counts 150 MB) with the PDF itself', async () => {
    // One page carrying 50 notes of 4 KB of random text, selected k times: each copy carries its own, so the output
    // lands between 4,400,000 bytes and 4.4 MB = 4.4 × 1,048,576 bytes from an input of about 400 KB.
    const noted = await heavyPagePdf();
    const split = (pages: string) => post('/pdf/split', { json: { input: { pdf_base64: b64(noted), filename: 'notes.pdf' }, split: { mode: 'extract', pages } } });
    const one = (await (await split('1')).arrayBuffer()).byteLength;
    const copies = Math.round(4_500_000 / one);
    const res = await split(Array(copies).fill('1').join(','));
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(4_400_000);
    expect(bytes.length).toBeLessThan(4.4 * 1024 * 1024);
    expect(res.headers.get('x-pdf-pages')).toBe(String(copies));
    const out = await PDFDocument.load(bytes);
    expect(out.getPageCount()).toBe(copies);
    expect(out.getPages().map((p) => p.node.Annots()?.size())).toEqual(Array(copies).fill(50));
  });
});

describe('PDF tools refusals', () => {
  const two = () => [
    { field: 'files', bytes: a, name: 'a.pdf' },
    { field: 'files', bytes: b, name: 'b.pdf' },
  ];

  it.each([
    ['one file to merge', () => post('/pdf/merge', { body: form([{ field: 'files', bytes: a, name: 'a.pdf' }]) }), 400, 'MISSING_PDFS', {}],
    ['no inputs to merge', () => post('/pdf/merge', { json: {} }), 400, 'MISSING_PDFS', {}],
    ['no file to split', () => post('/pdf/split', { json: { split: { mode: 'each_page' } } }), 400, 'MISSING_PDF', {}],
    ['21 files', () => post('/pdf/merge', { json: { inputs: Array(21).fill({ pdf_base64: 'JVBERi0=' }) } }), 400, 'TOO_MANY_FILES', { max_files: 20 }],
    ['65 files in a form (more parts than the form takes)', () => post('/pdf/merge', { body: form(Array.from({ length: 65 }, (_, i) => ({ field: 'files', bytes: a, name: `f${i}.pdf` }))) }), 400, 'TOO_MANY_FILES', { max_files: 20 }],
    ['a bad page range', () => post('/pdf/merge', { body: form(two(), { page_ranges: JSON.stringify([null, '2-1']) }) }), 400, 'INVALID_PAGE_RANGE', { token: '2-1', filename: 'b.pdf', input_index: 1 }],
    ['a page past the end', () => post('/pdf/merge', { body: form(two(), { page_ranges: JSON.stringify(['4', null]) }) }), 400, 'PAGE_OUT_OF_RANGE', { parameter: 'page_ranges[0]', total_pages: 3, filename: 'a.pdf', input_index: 0 }],
    ['a JSON page past the end', () => post('/pdf/merge', { json: { inputs: [{ pdf_base64: b64(a), filename: 'a.pdf', pages: '4' }, { pdf_base64: b64(b) }] } }), 400, 'PAGE_OUT_OF_RANGE', { parameter: 'inputs[0].pages', total_pages: 3, input_index: 0 }],
    ['a page range array of the wrong length', () => post('/pdf/merge', { body: form(two(), { page_ranges: '["1"]' }) }), 400, 'INVALID_PARAMETER', { parameter: 'page_ranges' }],
    ['options that are not JSON', () => post('/pdf/merge', { body: form(two(), { options: '{title:' }) }), 400, 'INVALID_OPTIONS_JSON', { parameter: 'options' }],
    ['a wrong option type', () => post('/pdf/merge', { json: { inputs: [{ pdf_base64: b64(a) }, { pdf_base64: b64(b) }], options: { title: 5 } } }), 400, 'INVALID_PARAMETER', { parameter: 'options.title' }],
    ['bad base64', () => post('/pdf/merge', { json: { inputs: [{ pdf_base64: b64(a) }, { pdf_base64: '%%%', filename: 'z.pdf' }] } }), 400, 'INVALID_PARAMETER', { parameter: 'inputs[1].pdf_base64', filename: 'z.pdf', input_index: 1 }],
    ['bad base64 to split', () => post('/pdf/split', { json: { input: { pdf_base64: '%%%', filename: 'z.pdf' }, split: { mode: 'each_page' } } }), 400, 'INVALID_PARAMETER', { parameter: 'input.pdf_base64', filename: 'z.pdf', input_index: 0 }],
    ['a page number past any document', () => post('/pdf/merge', { body: form(two(), { page_ranges: JSON.stringify(['1-9999999999999999999999', null]) }) }), 400, 'PAGE_OUT_OF_RANGE', { parameter: 'page_ranges[0]', total_pages: 3, token: '1-9999999999999999999999', filename: 'a.pdf', input_index: 0 }],
    ['a form page range that is not a string', () => post('/pdf/merge', { body: form(two(), { page_ranges: '[null, 2]' }) }), 400, 'INVALID_PARAMETER', { parameter: 'page_ranges[1]', filename: 'b.pdf', input_index: 1 }],
    ['a bad form page range', () => post('/pdf/merge', { body: form(two(), { page_ranges: '["1", "x"]' }) }), 400, 'INVALID_PAGE_RANGE', { parameter: 'page_ranges[1]', token: 'x', filename: 'b.pdf', input_index: 1 }],
    ['101 ranges to split', () => post('/pdf/split', { json: { input: { pdf_base64: b64(a), filename: 'a.pdf' }, split: { mode: 'ranges', ranges: Array(101).fill('1') } } }), 400, 'OUTPUT_COUNT_EXCEEDED', { output_count: 101, max_outputs: 100, filename: 'a.pdf', input_index: 0 }],
    ['a job of 501 ranges', () => post('/pdf/jobs', { json: { operation: 'split', inputs: [{ s3_key: 'not-uploaded', filename: 'big.pdf' }], split: { mode: 'ranges', ranges: Array(501).fill('1-end') } } }), 400, 'OUTPUT_COUNT_EXCEEDED', { output_count: 501, max_outputs: 500, filename: 'big.pdf', input_index: 0 }],
    ['a missing split mode', () => post('/pdf/split', { json: { input: { pdf_base64: b64(a) }, split: {} } }), 400, 'INVALID_SPLIT_MODE', {}],
    ['an unknown split mode', () => post('/pdf/split', { json: { input: { pdf_base64: b64(a) }, split: { mode: 'halves' } } }), 400, 'INVALID_SPLIT_MODE', { mode: 'halves' }],
    ['every_n of 0', () => post('/pdf/split', { json: { input: { pdf_base64: b64(a) }, split: { mode: 'every_n', every_n: 0 } } }), 400, 'INVALID_PARAMETER', { parameter: 'split.every_n' }],
    ['an unknown pattern token', () => post('/pdf/split', { json: { input: { pdf_base64: b64(a) }, split: { mode: 'each_page' }, options: { filename_pattern: '{name}.pdf' } } }), 400, 'INVALID_PARAMETER', { token: '{name}' }],
    ['malformed multipart', () => post('/pdf/split', { body: '--x\r\nnonsense', headers: { 'Content-Type': 'multipart/form-data; boundary=x' } }), 400, 'INVALID_MULTIPART', {}],
    ['a body that is not JSON', () => post('/pdf/split', { body: 'hello', headers: { 'Content-Type': 'application/json' } }), 400, 'INVALID_PARAMETER', { parameter: 'body' }],
  ])('%s → %d %s', async (_name, call, status, code, details) => {
    const err = await errorOf(await call());
    expect(err).toMatchObject({ status, code, details });
    expect(err.message.length).toBeGreaterThan(10);
  });

  it.each([
    ['a truncated PDF', async () => truncated(a), 422, 'INVALID_PDF'],
    ['an xref pointing nowhere', async () => xrefPointingNowhere(a), 422, 'INVALID_PDF'],
    ['a non-PDF', async () => NOT_A_PDF, 422, 'INVALID_PDF'],
    ['a password-protected PDF', () => encryptedPdf({ userPassword: 'pw', ownerPassword: 'owner' }), 422, 'PDF_ENCRYPTED'],
    ['an owner-password-only PDF', () => encryptedPdf({ userPassword: '', ownerPassword: 'owner' }), 422, 'PDF_ENCRYPTED'],
    ['a PDF without pages', () => zeroPagePdf(), 422, 'PDF_NO_PAGES'],
    ['a PDF nested too deeply', () => deeplyNestedPdf(), 422, 'PDF_TOO_COMPLEX'],
  ])('names %s as the culprit (%d %s) and charges nothing', async (_name, make, status, code) => {
    const before = await balance();
    const bad = await make();
    const merged = await errorOf(await post('/pdf/merge', { body: form([{ field: 'files', bytes: a, name: 'ok.pdf' }, { field: 'files', bytes: bad, name: 'bad.pdf' }]) }));
    expect(merged).toMatchObject({ status, code, details: { filename: 'bad.pdf', input_index: 1 } });
    const split = await errorOf(await post('/pdf/split', { json: { input: { pdf_base64: b64(bad), filename: 'bad.pdf' }, split: { mode: 'each_page' } } }));
    expect(split).toMatchObject({ status, code, details: { filename: 'bad.pdf', input_index: 0 } });
    expect(await balance()).toEqual(before);
  });

  it('refuses inputs over 4 MB, over 500 pages and over 100 outputs', async () => {
    const big = Buffer.alloc(4 * 1024 * 1024 + 10, 0x20);
    Buffer.from('%PDF-1.4\n').copy(big);
    expect(await errorOf(await post('/pdf/split', { body: form([{ field: 'file', bytes: big, name: 'big.pdf' }], { split: '{"mode":"each_page"}' }) }))).toMatchObject({
      status: 400,
      code: 'PDF_INPUT_TOO_LARGE',
      details: { max_bytes: 4 * 1024 * 1024 },
    });
    const many = await simplePdf(260);
    expect(await errorOf(await post('/pdf/merge', { json: { inputs: [{ pdf_base64: b64(many) }, { pdf_base64: b64(many), filename: 'second.pdf' }] } }))).toMatchObject({
      status: 400,
      code: 'PDF_PAGE_LIMIT_EXCEEDED',
      details: { pages: 520, max_pages: 500, filename: 'second.pdf', input_index: 1 },
    });
    const hundredOne = await simplePdf(101);
    expect(await errorOf(await post('/pdf/split', { json: { input: { pdf_base64: b64(hundredOne) }, split: { mode: 'each_page' } } }))).toMatchObject({
      status: 400,
      code: 'OUTPUT_COUNT_EXCEEDED',
      details: { output_count: 101, max_outputs: 100 },
    });
  });

  it('gates by plan and balance: 402 pending, 403 PDF_TOOLS_NOT_ENABLED, 403 INSUFFICIENT_CREDITS', async () => {
    const body = { json: { inputs: [{ pdf_base64: b64(a) }, { pdf_base64: b64(b) }] } };
    const pending = await stack.account({ plan_id: 'pending' });
    expect(await errorOf(await post('/pdf/merge', body, pending.api_key))).toMatchObject({ status: 402, code: 'UPGRADE_REQUIRED' });
    const standard = planCatalogue().find((p) => p.plan_id === 'standard')!;
    await stack.services.plans.put([{ ...standard, plan_id: 'no-tools', name: 'No tools', pdf_tools_enabled: false, pdf_editor_enabled: false }]);
    const noTools = await stack.account({ plan_id: 'no-tools', credits_usd: 5 });
    for (const route of ['/pdf/merge', '/pdf/split', '/pdf/upload-url', '/pdf/jobs', '/pdf/inspect']) {
      expect(await errorOf(await post(route, body, noTools.api_key))).toMatchObject({ status: 403, code: 'PDF_TOOLS_NOT_ENABLED' });
    }
    // The editor's source_key comes from /pdf/upload-url: an editor-only plan may upload (and inspect), not merge.
    await stack.services.plans.put([{ ...standard, plan_id: 'editor-only', name: 'Editor only', pdf_tools_enabled: false, pdf_editor_enabled: true }]);
    const editor = await stack.account({ plan_id: 'editor-only', credits_usd: 5 });
    const upload = await post('/pdf/upload-url', { json: { content_length_bytes: 1234 } }, editor.api_key);
    expect(upload.status).toBe(200);
    expect(await upload.json()).toMatchObject({ s3_key: expect.any(String), max_bytes: 150 * 1024 * 1024 });
    expect((await post('/pdf/inspect', { json: { input: { pdf_base64: b64(a) } } }, editor.api_key)).status).toBe(200);
    expect(await errorOf(await post('/pdf/merge', body, editor.api_key))).toMatchObject({ status: 403, code: 'PDF_TOOLS_NOT_ENABLED' });
    const poor = await stack.account({ credits_usd: 0.002 });
    expect(await errorOf(await post('/pdf/merge', body, poor.api_key))).toMatchObject({ status: 403, code: 'INSUFFICIENT_CREDITS', details: { required_amount: 0.0025 } });
    expect((await balance(poor.account_id)).credits).toBe(2_000);
  });
});

describe('merge charges across buckets', () => {
  it('takes a merge whole from the first bucket that covers it: an allowance or free credits short of it are passed over, not split', async () => {
    const body = { json: { inputs: [{ pdf_base64: b64(a) }, { pdf_base64: b64(b) }] } };
    const buckets = async (accountId: string) => {
      const acct = (await stack.services.accounts.get(accountId))!;
      return [acct.subscription!.allowance_micros, acct.free_credits_micros, acct.credits_micros, acct.total_pdf_count];
    };
    // One merge costs 0.0025 USD; the allowance (0.002) and free credits (0.001) hold 0.003 together, yet neither covers it.
    const short = await stack.account({ credits_usd: 0.01, free_credits_usd: 0.001, subscription: { name: 'Starter', monthly_pdfs: 0, price: 0.002 } });
    expect((await post('/pdf/merge', body, short.api_key)).status).toBe(200);
    expect(await buckets(short.account_id)).toEqual([2_000, 1_000, 7_500, 1]);
    // An allowance that covers it is used first, then free credits.
    const enough = await stack.account({ credits_usd: 0.01, free_credits_usd: 0.003, subscription: { name: 'Starter', monthly_pdfs: 0, price: 0.003 } });
    expect((await post('/pdf/merge', body, enough.api_key)).status).toBe(200);
    expect((await post('/pdf/merge', body, enough.api_key)).status).toBe(200);
    expect(await buckets(enough.account_id)).toEqual([500, 500, 10_000, 2]);
    // Without the one-off credits, nothing covers it: 403 with the spec's details, nothing taken.
    const none = await stack.account({ free_credits_usd: 0.001, subscription: { name: 'Starter', monthly_pdfs: 0, price: 0.002 } });
    expect(await errorOf(await post('/pdf/merge', body, none.api_key))).toMatchObject({
      status: 403,
      code: 'INSUFFICIENT_CREDITS',
      details: { current_balance: 0, required_amount: 0.0025, subscription_credits_remaining: 0.002, action_required: 'purchase_credits' },
    });
    expect(await buckets(none.account_id)).toEqual([2_000, 1_000, 0, 0]);
  });
});

describe('POST /pdf/inspect', () => {
  it('describes a PDF for free, without a job (multipart, base64, upload)', async () => {
    const before = await balance();
    const res = await post('/pdf/inspect', { body: form([{ field: 'file', bytes: b, name: 'b.pdf' }]) });
    expect(await res.json()).toEqual({
      filename: 'b.pdf', size_bytes: b.length, page_count: 2, encrypted: false, has_forms: false, has_signatures: false,
      first_page: { width: 300, height: 500 }, warnings: [], max_pages: 500,
    });
    const edit = await (await post('/pdf/inspect', { json: { input: { pdf_base64: b64(await pdfWithForm()), filename: 'f.pdf' }, for: 'edit' } })).json();
    expect(edit.pages).toEqual([
      { id: 'p0', width: 595, height: 842, rotation: 0 },
      { id: 'p1', width: 595, height: 842, rotation: 0 },
    ]);
    expect(edit.form.map((f: { name: string; type: string }) => `${f.name}:${f.type}`).sort()).toEqual(['agree:checkbox', 'applicant.name:text', 'country:dropdown', 'size:radio']);
    expect(edit.warnings).toEqual(['FORM_FIELDS_NOT_PRESERVED']);

    const up = await (await post('/pdf/upload-url', { json: { content_length_bytes: twelve.length } })).json();
    expect((await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(twelve) })).status).toBe(200);
    expect(await (await post('/pdf/inspect', { json: { s3_key: up.s3_key, filename: 'uploaded.pdf' } })).json()).toMatchObject({ filename: 'uploaded.pdf', page_count: 12, max_pages: 5000 });
    expect(await balance()).toEqual(before);
  });

  it('answers encrypted files with 200 encrypted: true, page_count: null; damaged ones with 422', async () => {
    for (const userPassword of ['', 'pw']) {
      const res = await post('/pdf/inspect', { json: { input: { pdf_base64: b64(await encryptedPdf({ userPassword, ownerPassword: 'o' })) } } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ encrypted: true, page_count: null });
    }
    expect(await errorOf(await post('/pdf/inspect', { json: { input: { pdf_base64: b64(truncated(a)) } } }))).toMatchObject({ status: 422, code: 'INVALID_PDF' });
    expect(await errorOf(await post('/pdf/inspect', { json: {} }))).toMatchObject({ status: 400, code: 'MISSING_PDF' });
    expect(await errorOf(await post('/pdf/inspect', { json: { input: { pdf_base64: b64(a) }, for: 'print' } }))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER', details: { parameter: 'for' } });
  });
});

describe('jobs routes for merge/split jobs', () => {
  it('refuses the files routes for other job types and answers 409 while a job runs', async () => {
    const q = await post('/quickjob', { json: { input_type: 'html', html: '<p>x</p>' } });
    const quickId = q.headers.get('x-job-id')!;
    expect(await errorOf(await get(`/jobs/${quickId}/files`))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER' });
    expect(await errorOf(await get(`/jobs/${quickId}/files/0/download`))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER' });
    const running = { ...newJob({ job_id: 'job_pdfrunning', account_id: user.account_id, job_type: 'pdfop', status: 'processing', now: new Date() }), operation: 'merge' as const, input_files: 2, output_count: 1, processed_count: 7 };
    await stack.services.jobs.put(running);
    expect(await (await get('/jobs/job_pdfrunning')).json()).toMatchObject({ status: 'processing', operation: 'merge', output_count: 1, processed_count: 7 });
    expect(await (await get('/jobs/job_pdfrunning/files')).json()).toMatchObject({ count: 0, files: [] });
    expect(await errorOf(await get('/jobs/job_pdfrunning/files/0/download'))).toMatchObject({ status: 409, code: 'JOB_NOT_READY' });
    const other = await stack.account();
    expect(await errorOf(await get('/jobs/job_pdfrunning/files', other.api_key))).toMatchObject({ status: 404, code: 'JOB_NOT_FOUND' });
  });
});

describe('instant time limit', () => {
  let slow: TestStack;
  beforeAll(async () => {
    slow = await startTestStack({ PDFOP_TIMEOUT_SECONDS: '0.001' });
  });
  afterAll(() => slow?.stop());

  it('answers 408 PDFOP_TIMEOUT, records the job as timed out and charges nothing', async () => {
    const acct = await slow.account({ credits_usd: 1 });
    const res = await slow.request('POST', '/pdf/merge', { key: acct.api_key, json: { inputs: [{ pdf_base64: b64(twelve) }, { pdf_base64: b64(twelve) }], store: true } });
    const err = await errorOf(res);
    expect(err).toMatchObject({ status: 408, code: 'PDFOP_TIMEOUT', details: { timeout_seconds: 0.001, suggestion: 'use_pdf_jobs_endpoint' } });
    const job = await (await slow.request('GET', `/jobs/${err.details.job_id}`, { key: acct.api_key })).json();
    expect(job).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'PDFOP_TIMEOUT' });
    expect((await slow.services.accounts.get(acct.account_id))!.credits_micros).toBe(1_000_000);
  });
});
