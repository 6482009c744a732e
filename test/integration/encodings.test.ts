import { PDFDocument } from 'pdf-lib';
import { multipart } from '../support/images';
import { readPdf } from '../support/pdf';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { unzip } from '../support/zips';

// Text encodings and names end to end: what a client sends in another charset, or with half a surrogate pair, must
// print (and be named) as the characters it meant.

let stack: TestStack;
let user: TestAccount;

beforeAll(async () => {
  stack = await startTestStack({ LOCAL_SFN_RETRY_MS: '0' });
  user = await stack.account({ credits_usd: 5 });
});
afterAll(async () => {
  await stack?.stop();
});

const get = (route: string) => stack.request('GET', route, { key: user.api_key });
const pdfText = async (pdf: Uint8Array) => (await readPdf(pdf)).map((p) => p.text).join(' ');

async function bulkOutputs(form: { body: Buffer; contentType: string }): Promise<Map<string, Buffer>> {
  const res = await stack.request('POST', '/bulkjob', { key: user.api_key, body: form.body, headers: { 'Content-Type': form.contentType } });
  expect(res.status).toBe(202);
  const { job_id: jobId } = await res.json();
  await stack.workflows.idle();
  expect(await (await get(`/jobs/${jobId}`)).json()).toMatchObject({ status: 'completed' });
  const link = await (await get(`/jobs/${jobId}/download`)).json();
  return unzip(new Uint8Array(await (await fetch(link.download_url)).arrayBuffer()));
}

describe('bulk multipart files in a declared charset', () => {
  it("reads a file as its part's Content-Type charset says, before a <meta> and without one", async () => {
    const latin1 = Buffer.from('<p>Grüße aus Köln, café</p>', 'latin1');
    const form = multipart([
      { name: 'files', value: latin1, filename: 'plain.html', type: 'text/html; charset=ISO-8859-1' },
      // The part's charset wins over the document's own <meta>, as HTTP's does in a browser.
      { name: 'files', value: Buffer.concat([Buffer.from('<meta charset="utf-8">'), latin1]), filename: 'meta.html', type: 'text/html; charset="windows-1252"' },
      { name: 'files', value: Buffer.from('<p>UTF-16: Grüße</p>', 'utf16le'), filename: 'wide.html', type: 'text/html; charset=utf-16le' },
      // Without a charset nothing changes: UTF-8.
      { name: 'files', value: '<p>UTF-8: Grüße</p>', filename: 'utf8.html', type: 'text/html' },
      // XHTML is text too, and the charset need not be the first parameter.
      { name: 'files', value: latin1, filename: 'xhtml.html', type: 'application/xhtml+xml; charset=ISO-8859-1' },
      { name: 'files', value: latin1, filename: 'second.html', type: 'text/html; q=1; charset=ISO-8859-1' },
      // A charset on a non-text type says nothing about the bytes: they stay UTF-8.
      { name: 'files', value: '<p>UTF-8: Grüße</p>', filename: 'octets.html', type: 'application/octet-stream; charset=ISO-8859-1' },
    ]);
    const zip = await bulkOutputs(form);
    expect(await pdfText(zip.get('plain.pdf')!)).toBe('Grüße aus Köln, café');
    expect(await pdfText(zip.get('meta.pdf')!)).toBe('Grüße aus Köln, café');
    expect(await pdfText(zip.get('wide.pdf')!)).toBe('UTF-16: Grüße');
    expect(await pdfText(zip.get('utf8.pdf')!)).toBe('UTF-8: Grüße');
    expect(await pdfText(zip.get('xhtml.pdf')!)).toBe('Grüße aus Köln, café');
    expect(await pdfText(zip.get('second.pdf')!)).toBe('Grüße aus Köln, café');
    expect(await pdfText(zip.get('octets.pdf')!)).toBe('UTF-8: Grüße');
  }, 60_000);
});

describe('half a surrogate pair in text written into a PDF', () => {
  // JSON lets a string hold "\ud800"; written into /Title as is, readers took the next character with it ("lone\ufffd").
  const title = async (res: Response) => (await PDFDocument.load(new Uint8Array(await res.arrayBuffer()), { updateMetadata: false })).getTitle();

  it("a merge's title keeps every character, the half pair shown as U+FFFD", async () => {
    const pdf = Buffer.from(await simplePdf(1)).toString('base64');
    const inputs = [{ pdf_base64: pdf, filename: 'a.pdf' }, { pdf_base64: pdf, filename: 'b.pdf' }];
    const res = await stack.request('POST', '/pdf/merge', { key: user.api_key, json: { inputs, options: { title: 'Q1 \ud800x \udc00y 😀' } } });
    expect(res.status).toBe(200);
    expect(await title(res)).toBe('Q1 \ufffdx \ufffdy 😀');
  }, 30_000);

  it("a document's <title> and header print keep every character, the half pair shown as U+FFFD", async () => {
    const html = '<title>Report \ud800x</title><p>Body \udbffz</p>';
    const options = { displayHeaderFooter: true, headerTemplate: '<span style="font-size:10px">Head \ud800h</span>', footerTemplate: '<span></span>', margin: { top: '20mm' } };
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html, options } });
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.clone().arrayBuffer());
    expect(await title(res)).toBe('Report \ufffdx');
    const text = await pdfText(bytes);
    expect(text).toContain('Body \ufffdz');
    expect(text).toContain('Head \ufffdh');
  }, 30_000);
});
