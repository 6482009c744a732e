import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../../functions/adapters/dynamodb/client';
import { keys } from '../../functions/adapters/dynamodb/schema';
import { planCatalogue } from '../../functions/core/billing/plans';
import { newId } from '../../functions/core/ids';
import { newJob } from '../../functions/core/jobs/job';
import { png, multipart } from '../support/images';
import { readPdf, readPdfLinks } from '../support/pdf';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestServer, httpServer } from '../support/servers';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { type RawEntry, noise, rawZip, ratioEntry, unzip } from '../support/zips';
import { expectQuarterHour } from '../support/links';

let stack: TestStack;
let user: TestAccount;
let secret: TestServer;
let hang: TestServer;

beforeAll(async () => {
  secret = await httpServer((_req, res) => res.end('secret'));
  hang = await httpServer(() => undefined);
  stack = await startTestStack({
    LOCAL_SFN_RETRY_MS: '0',
    BULK_FILE_TIMEOUT_SECONDS: '6',
    BULK_IDLE_MAX_SECONDS: '2',
    // Only the never-answering server is reachable (by name); the "secret" one stays private.
    ALLOW_PRIVATE_TARGETS: `localhost:${hang.port}`,
  });
  user = await stack.account({ credits_usd: 5 });
  const standard = planCatalogue().find((p) => p.plan_id === 'standard')!;
  await stack.services.plans.put([
    { ...standard, plan_id: 'nobulk', name: 'No bulk', bulk_enabled: false },
    { ...standard, plan_id: 'htmlonly', name: 'HTML only', enabled_conversion_types: ['html'] },
    { ...standard, plan_id: 'tiny', name: 'Tiny budget', max_bulk_pages_per_job: 5, max_bulk_zip_mb: 1 },
  ]);
});
afterAll(async () => {
  await stack?.stop();
  await secret?.close();
  await hang?.close();
});

const post = (route: string, json: unknown, key = user.api_key) => stack.request('POST', route, { key, json });
const get = (route: string, key = user.api_key) => stack.request('GET', route, { key });
const zipB64 = (entries: RawEntry[]) => rawZip(entries).toString('base64');

async function errorOf(res: Response) {
  const body = await res.json();
  return { status: res.status, code: body.error?.code, details: body.error?.details ?? {} };
}

async function submit(body: Record<string, unknown>, key = user.api_key): Promise<string> {
  const res = await post('/bulkjob', body, key);
  const accepted = await res.json();
  if (res.status !== 202) throw new Error(`bulkjob ${res.status}: ${JSON.stringify(accepted)}`);
  return accepted.job_id;
}

async function finished(jobId: string, key = user.api_key) {
  await stack.workflows.idle();
  return (await get(`/jobs/${jobId}`, key)).json();
}

async function filesOf(jobId: string, key = user.api_key) {
  return (await get(`/jobs/${jobId}/files`, key)).json();
}

async function outputOf(jobId: string, key = user.api_key) {
  const link = await (await get(`/jobs/${jobId}/download`, key)).json();
  return { link, zip: await unzip(new Uint8Array(await (await fetch(link.download_url)).arrayBuffer())) };
}

async function outbox(jobId: string) {
  const db = createDynamo({ tableName: stack.services.config.tableName, region: 'us-east-1', endpoint: stack.services.config.dynamodbEndpoint });
  const { Items = [] } = await db.doc.send(
    new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)', ExpressionAttributeValues: { ':pk': keys.job(jobId).pk, ':e': 'EVENT#' } }),
  );
  return Items.map((i) => ({ ...(i.payload as Record<string, unknown>), output_key: i.output_key as string | null }) as Record<string, unknown>);
}

const credits = async (accountId = user.account_id) => (await stack.services.accounts.get(accountId))!.credits_micros;

/** POST /bulkjob/upload-url, then the PUT a client makes. */
async function upload(zip: Buffer, key = user.api_key): Promise<string> {
  const res = await post('/bulkjob/upload-url', { content_length_bytes: zip.length }, key);
  expect(res.status).toBe(200);
  const up = await res.json();
  const put = await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(zip) });
  expect(put.status).toBe(200);
  return up.s3_key;
}

/**
 * Holds the calls of the blob store's `method` whose key `matches` until `open()`: a step of the workflow paused there,
 * while the test acts. `reached` resolves when the first such call arrives; `release()` opens and restores.
 */
function holdBlobCalls(method: 'get' | 'putParts', matches: (key: string) => boolean) {
  const blobs = stack.services.blobs as unknown as Record<string, (key: string, ...rest: unknown[]) => Promise<unknown>>;
  const real = blobs[method].bind(blobs);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let arrive!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const spy = jest.spyOn(blobs, method).mockImplementation(async (key: string, ...rest: unknown[]) => {
    if (matches(key)) {
      arrive();
      await gate;
    }
    return real(key, ...rest);
  });
  return { reached, open, release: () => (open(), spy.mockRestore()) };
}

async function pdfText(bytes: Uint8Array) {
  return (await readPdf(bytes)).map((p) => p.text).join('\n');
}

describe('POST /bulkjob/upload-url', () => {
  it('gives a 15-minute presigned PUT for exactly the announced size of application/zip, within the plan limit', async () => {
    const res = await post('/bulkjob/upload-url', { content_length_bytes: 4321 });
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body).toEqual({
      upload_url: expect.stringMatching(/^http.*X-Amz-Expires=900/),
      s3_key: expect.stringMatching(new RegExp(`^uploads/${user.account_id}/bulk/[0-9A-Z]{26}\\.zip$`)),
      expires_at: expect.any(String),
      max_bytes: 50 * 1024 * 1024,
      required_headers: { 'Content-Type': 'application/zip' },
    });
    // Size and type are signed headers (S3 refuses a PUT with others; the local s3rver does not check them).
    expect(body.upload_url).toContain('content-length%3Bcontent-type');
    expectQuarterHour(res, body);
  });

  it('refuses sizes over the plan limit (400 BULK_ZIP_TOO_LARGE) and missing sizes; applies the plan gates', async () => {
    expect(await errorOf(await post('/bulkjob/upload-url', { content_length_bytes: 50 * 1024 * 1024 + 1 }))).toMatchObject({ status: 400, code: 'BULK_ZIP_TOO_LARGE', details: { max_bytes: 52428800 } });
    expect(await errorOf(await post('/bulkjob/upload-url', {}))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER', details: { parameter: 'content_length_bytes' } });
    const tiny = await stack.account({ plan_id: 'tiny', credits_usd: 1 });
    expect(await errorOf(await post('/bulkjob/upload-url', { content_length_bytes: 1024 * 1024 + 1 }, tiny.api_key))).toMatchObject({ status: 400, code: 'BULK_ZIP_TOO_LARGE', details: { max_bytes: 1048576 } });
    const pending = await stack.account({ plan_id: 'pending' });
    expect((await errorOf(await post('/bulkjob/upload-url', { content_length_bytes: 10 }, pending.api_key))).status).toBe(402);
    const nobulk = await stack.account({ plan_id: 'nobulk', credits_usd: 1 });
    expect(await errorOf(await post('/bulkjob/upload-url', { content_length_bytes: 10 }, nobulk.api_key))).toMatchObject({ status: 403, code: 'BULK_NOT_ENABLED' });
  });
});

describe('POST /bulkjob: a bundle in, a ZIP of PDFs out', () => {
  it('renders each HTML file with its bundle (relative and root references, missing assets, blocked private requests), charges each PDF, and delivers ZIP + manifest', async () => {
    const before = await credits();
    const zip = rawZip([
      { name: 'css/site.css', data: 'h1 { color: rgb(10, 20, 30); }' },
      { name: 'img/logo.png', data: png(6, 3), method: 0 },
      { name: 'index.html', data: '<link rel="stylesheet" href="css/site.css"><h1>Index</h1><img id="i" src="img/logo.png"><p id="o"></p><script>addEventListener("load",()=>{document.getElementById("o").textContent="logo="+document.getElementById("i").naturalWidth+" color="+getComputedStyle(document.querySelector("h1")).color})</script>' },
      { name: 'docs/guide.htm', data: `<link rel="stylesheet" href="/css/site.css"><h1>Guide</h1><img src="../img/logo.png"><img src="../img/missing.png"><link rel="stylesheet" href="gone.css"><img src="http://127.0.0.1:${secret.port}/x.png">` },
      { name: 'docs/notes.txt', data: 'an asset, not converted' },
      { name: '__MACOSX/docs/._guide.htm', data: 'finder data' },
    ]);
    const key = await upload(zip);
    const res = await post('/bulkjob', { s3_key: key, options: { format: 'A5', displayHeaderFooter: false, unknown_option: true } });
    expect(res.status).toBe(202);
    const accepted = await res.json();
    expect(accepted).toEqual({ job_id: expect.stringMatching(/^job_/), status: 'queued', job_type: 'bulk', bundle_type: 'html', message: expect.any(String) });

    const job = await finished(accepted.job_id);
    expect(job).toMatchObject({
      job_id: accepted.job_id,
      status: 'completed',
      job_type: 'bulk',
      bundle_type: 'html',
      file_count: 2,
      processed_count: 2,
      success_count: 2,
      failure_count: 0,
      pages_total: 2,
      pages: 2,
      error_code: null,
      s3_url: expect.stringMatching(/^http/),
    });
    const files = await filesOf(accepted.job_id);
    expect(files).toEqual({
      job_id: accepted.job_id,
      status: 'completed',
      bundle_type: 'html',
      count: 2,
      files: [
        { index: 0, input: 'index.html', output: 'index.pdf', status: 'success', pages: 1, error_code: null, error_message: null, blocked_requests: 0, render_timeout: false, missing_assets: 0 },
        { index: 1, input: 'docs/guide.htm', output: 'docs/guide.pdf', status: 'success', pages: 1, error_code: null, error_message: null, blocked_requests: 1, render_timeout: false, missing_assets: 2 },
      ],
    });
    const { link, zip: out } = await outputOf(accepted.job_id);
    expect(link).toMatchObject({ job_id: accepted.job_id, expires_in_seconds: 3600, content_type: 'application/zip' });
    expect([...out.keys()]).toEqual(['index.pdf', 'docs/guide.pdf', 'manifest.json']);
    expect(JSON.parse(out.get('manifest.json')!.toString())).toEqual(files);
    expect(await pdfText(out.get('index.pdf')!)).toContain('logo=6 color=rgb(10, 20, 30)');
    const [first] = await readPdf(out.get('index.pdf')!);
    expect(Math.round(first.width)).toBe(420); // A5 from the options
    expect(secret.hits).toEqual([]);

    expect(await credits()).toBe(before - 2 * 10_000);
    expect(await outbox(accepted.job_id)).toEqual([
      expect.objectContaining({ event: 'bulk.job.completed', job_id: accepted.job_id, status: 'completed', job_type: 'bulk', success_count: 2, failure_count: 0, file_count: 2, output_key: expect.stringContaining(`outputs/${user.account_id}/`) }),
    ]);
    // The upload and everything staged are gone; the slot is free.
    expect(await stack.services.blobs.head(key)).toBeNull();
    expect(await stack.services.blobs.head(`inputs/${user.account_id}/${accepted.job_id}/bundle.zip`)).toBeNull();
    expect(await errorOf(await get(`/jobs/${accepted.job_id}/files/0/download`))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER' });
    const list = await (await stack.request('GET', '/jobs?job_type=bulk', { token: user.id_token })).json();
    expect(list.jobs[0]).toMatchObject({ job_id: accepted.job_id, job_type: 'bulk', bundle_type: 'html', file_count: 2, success_count: 2, failure_count: 0, pages_total: 2 });
  });

  it('converts Markdown (files array) with the quickjob styles, front matter removed, options applied to every file', async () => {
    const jobId = await submit({
      bundle_type: 'markdown',
      files: [
        { path: 'notes/one.md', content_base64: Buffer.from('---\ntitle: Hidden front matter\n---\n# One\n\n| a | b |\n|---|---|\n| 1 | 2 |').toString('base64') },
        { path: 'two.markdown', content_base64: Buffer.from('# Two\n\n![logo](img/l.png)').toString('base64') },
        { path: 'img/l.png', content_base64: png(2, 2).toString('base64') },
        { path: 'page.html', content_base64: Buffer.from('<p>an asset in a Markdown bundle</p>').toString('base64') },
      ],
      options: { landscape: true },
    });
    const job = await finished(jobId);
    expect(job).toMatchObject({ status: 'completed', bundle_type: 'markdown', file_count: 2, success_count: 2 });
    const { zip } = await outputOf(jobId);
    expect([...zip.keys()]).toEqual(['notes/one.pdf', 'two.pdf', 'manifest.json']);
    const [page] = await readPdf(zip.get('notes/one.pdf')!);
    expect(page.width).toBeGreaterThan(page.height);
    expect(page.text).toContain('One');
    expect(page.text).not.toContain('Hidden front matter');
    expect((await filesOf(jobId)).files[1]).toMatchObject({ input: 'two.markdown', missing_assets: 0 });
  });

  it('links its PDFs to each other in the output ZIP: a link to another document opens its PDF, at the linked element when that PDF has it', async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const long = Array.from({ length: 101 }, (_, i) => `<p style="page-break-before:always">${i}</p>`).join('');
    const jobId = await submit({
      files: [
        {
          path: 'index.html',
          content_base64: b64('<a href="guide/intro.html#setup">Setup</a> <a href="guide/intro.html#two words">Words</a> <a href="guide/intro.html#nowhere">Nowhere</a> <a href="data.csv">Data</a> <a href="gone.html">Gone</a> <a href="long.html">Long</a> <a href="#top">Top</a><h1 id="top">Index</h1>'),
        },
        {
          path: 'guide/intro.html',
          content_base64: b64('<a href="#two words">Two</a> <a href="../index.html">Back</a><div style="height:1500px"></div><h2 id="setup">Setup</h2><div style="height:1500px"></div><h2 id="two words">Two words</h2>'),
        },
        { path: 'data.csv', content_base64: b64('a,b\n1,2\n') },
        { path: 'long.html', content_base64: b64(long) },
      ],
    });
    expect(await finished(jobId)).toMatchObject({ status: 'partial_failed', success_count: 2 });
    const { zip } = await outputOf(jobId);
    expect([...zip.keys()].sort()).toEqual(['guide/intro.pdf', 'index.pdf', 'manifest.json']);

    const linksOf = async (name: string) => (await readPdfLinks(zip.get(name)!)).flat().map((l) => `${l.text} -> ${l.target}`);
    // Into the other PDF at the element it names (a named destination there, also for an element no link inside that
    // document points at), else at its first page. The CSV and the missing file make no PDF, and the long file
    // failed: their links print as text.
    expect(await linksOf('index.pdf')).toEqual(['Setup -> guide/intro.pdf#setup', 'Words -> guide/intro.pdf#two%20words', 'Nowhere -> guide/intro.pdf#[0,{"name":"Fit"}]', 'Top -> page:0']);
    expect(await linksOf('guide/intro.pdf')).toEqual(['Two -> page:2', 'Back -> ../index.pdf#[0,{"name":"Fit"}]']);
    expect(await pdfText(zip.get('index.pdf')!)).toContain('Setup Words Nowhere Data Gone Long Top');
    // Internal bookkeeping stays out of the rows and the manifest.
    const manifest = JSON.parse(zip.get('manifest.json')!.toString());
    expect(Object.keys(manifest.files[0])).not.toContain('document_links');
    expect(Object.keys((await filesOf(jobId)).files[0])).not.toContain('document_links');
  }, 60_000);

  it('takes multipart files with paths, and without paths keeps each file at the top level under its own name', async () => {
    const withPaths = multipart([
      { name: 'bundle_type', value: 'html' },
      { name: 'paths', value: JSON.stringify(['site/a.html', 'site/s.css']) },
      { name: 'files', value: '<link rel="stylesheet" href="s.css"><p>A</p>', filename: 'a.html', type: 'text/html' },
      { name: 'files', value: 'p { color: red }', filename: 's.css', type: 'text/css' },
      { name: 'options', value: '{"format":"Letter"}' },
    ]);
    const res = await stack.request('POST', '/bulkjob', { key: user.api_key, body: withPaths.body, headers: { 'Content-Type': withPaths.contentType } });
    expect(res.status).toBe(202);
    const first = (await res.json()).job_id;
    expect(await finished(first)).toMatchObject({ status: 'completed', file_count: 1 });
    expect((await filesOf(first)).files[0]).toMatchObject({ input: 'site/a.html', output: 'site/a.pdf', missing_assets: 0 });

    const bare = multipart([
      { name: 'files', value: '<p>B</p>', filename: 'b.html' },
      // PHP-style `files[]` counts as `files`.
      { name: 'files[]', value: '<p>C</p>', filename: 'c.htm' },
    ]);
    const second = (await (await stack.request('POST', '/bulkjob', { key: user.api_key, body: bare.body, headers: { 'Content-Type': bare.contentType } })).json()).job_id;
    expect(await finished(second)).toMatchObject({ status: 'completed', file_count: 2 });
    expect([...(await outputOf(second)).zip.keys()]).toEqual(['b.pdf', 'c.pdf', 'manifest.json']);
  });
});

describe('POST /bulkjob refusals', () => {
  const okZip = () => zipB64([{ name: 'a.html', data: '<p>a</p>' }]);
  const form = (fields: Parameters<typeof multipart>[0]) => multipart(fields);

  it.each([
    ['an unknown bundle_type', 400, 'INVALID_BUNDLE_TYPE', () => ({ bundle_type: 'docx', zip_base64: okZip() })],
    ['an empty bundle_type', 400, 'INVALID_BUNDLE_TYPE', () => ({ bundle_type: '', zip_base64: okZip() })],
    ['no input', 400, 'INVALID_BULK_INPUT', () => ({ bundle_type: 'html' })],
    ['two inputs', 400, 'INVALID_BULK_INPUT', () => ({ zip_base64: okZip(), s3_key: `uploads/${user.account_id}/bulk/01J00000000000000000000000.zip` })],
    ['an absolute path', 400, 'INVALID_BULK_PATH', () => ({ files: [{ path: '/etc/a.html', content_base64: '' }] })],
    ['a path with ..', 400, 'INVALID_BULK_PATH', () => ({ files: [{ path: 'a/../../b.html', content_base64: '' }] })],
    ['an empty path', 400, 'INVALID_BULK_PATH', () => ({ files: [{ path: '', content_base64: '' }] })],
    ['invalid base64', 400, 'INVALID_BASE64', () => ({ zip_base64: '***' })],
    ['invalid base64 in files', 400, 'INVALID_BASE64', () => ({ files: [{ path: 'a.html', content_base64: 'a' }] })],
    ['a bad option value', 400, 'INVALID_PARAMETER', () => ({ zip_base64: okZip(), options: { format: 'B9' } })],
    ['more than 4 MB inline', 413, 'BULK_INLINE_TOO_LARGE', () => ({ zip_base64: noise(4 * 1024 * 1024 + 10).toString('base64') })],
    ['an s3_key of another account', 403, 'FORBIDDEN', () => ({ s3_key: 'uploads/someone-else/bulk/01J00000000000000000000000.zip' })],
    ['an s3_key never uploaded', 404, 'UPLOAD_NOT_FOUND', () => ({ s3_key: `uploads/${user.account_id}/bulk/01J00000000000000000000000.zip` })],
    ['an s3_key that is no upload', 404, 'UPLOAD_NOT_FOUND', () => ({ s3_key: 'outputs/x/y.zip' })],
    ['an s3_key in the uploads area that names no account', 404, 'UPLOAD_NOT_FOUND', () => ({ s3_key: 'uploads/nope.zip' })],
    ['more than 1000 files', 400, 'BULK_ZIP_TOO_MANY_ENTRIES', () => ({ files: Array.from({ length: 1001 }, (_, i) => ({ path: `f${i}.html`, content_base64: '' })) })],
  ])('refuses %s (%d %s), creating no job', async (_name, status, code, body) => {
    const before = (await (await stack.request('GET', '/jobs?job_type=bulk', { token: user.id_token })).json()).count;
    expect(await errorOf(await post('/bulkjob', (body as () => unknown)()))).toMatchObject({ status, code });
    expect((await (await stack.request('GET', '/jobs?job_type=bulk', { token: user.id_token })).json()).count).toBe(before);
  });

  it.each([
    ['paths that are not a JSON array', 400, 'INVALID_BULK_PATHS', () => form([{ name: 'paths', value: 'a.html' }, { name: 'files', value: 'x', filename: 'a.html' }])],
    ['one path for two files', 400, 'INVALID_BULK_PATHS', () => form([{ name: 'paths', value: '["a.html"]' }, { name: 'files', value: 'x', filename: 'a.html' }, { name: 'files', value: 'y', filename: 'b.html' }])],
    ['a path with ..', 400, 'INVALID_BULK_PATH', () => form([{ name: 'paths', value: '["../a.html"]' }, { name: 'files', value: 'x', filename: 'a.html' }])],
    ['no files part', 400, 'INVALID_BULK_INPUT', () => form([{ name: 'bundle_type', value: 'html' }])],
    ['an s3_key field beside the files', 400, 'INVALID_BULK_INPUT', () => form([{ name: 's3_key', value: 'uploads/x/bulk/a.zip' }, { name: 'files', value: 'x', filename: 'a.html' }])],
    ['a zip_base64 field beside the files', 400, 'INVALID_BULK_INPUT', () => form([{ name: 'zip_base64', value: 'UEsFBg==' }, { name: 'files', value: 'x', filename: 'a.html' }])],
    ['bad options JSON', 400, 'INVALID_OPTIONS_JSON', () => form([{ name: 'options', value: '{' }, { name: 'files', value: 'x', filename: 'a.html' }])],
    ['an empty bundle_type', 400, 'INVALID_BUNDLE_TYPE', () => form([{ name: 'bundle_type', value: '' }, { name: 'files', value: 'x', filename: 'a.html' }])],
    ['1001 files', 400, 'BULK_ZIP_TOO_MANY_ENTRIES', () => form(Array.from({ length: 1001 }, (_, i) => ({ name: 'files', value: 'x', filename: `f${i}.html` })))],
    ['more parts than any bundle', 400, 'BULK_ZIP_TOO_MANY_ENTRIES', () => form(Array.from({ length: 1200 }, (_, i) => ({ name: 'files', value: 'x', filename: `f${i}.html` })))],
    ['more parts than any bundle, most of them not files', 400, 'INVALID_MULTIPART', () => form(Array.from({ length: 1200 }, (_, i) => (i < 2 ? { name: 'files', value: 'x', filename: `f${i}.html` } : { name: `note${i}`, value: 'x' })))],
    // 1000 files is a full bundle, not too many: the fields beyond the part limit are what is refused.
    ['1000 files and too many other fields', 400, 'INVALID_MULTIPART', () => form(Array.from({ length: 1020 }, (_, i) => (i < 1000 ? { name: 'files', value: 'x', filename: `f${i}.html` } : { name: `note${i}`, value: 'x' })))],
    ['one file over 4 MB', 413, 'BULK_INLINE_TOO_LARGE', () => form([{ name: 'files', value: noise(4 * 1024 * 1024 + 10), filename: 'a.png' }])],
    ['more than 4 MB of files', 413, 'BULK_INLINE_TOO_LARGE', () => form([{ name: 'files', value: noise(2_200_000), filename: 'a.png' }, { name: 'files', value: noise(2_200_000, 'b'), filename: 'b.png' }])],
  ])('refuses multipart with %s (%d %s)', async (_name, status, code, make) => {
    const { body, contentType } = (make as () => ReturnType<typeof multipart>)();
    expect(await errorOf(await stack.request('POST', '/bulkjob', { key: user.api_key, body, headers: { 'Content-Type': contentType } }))).toMatchObject({ status, code });
  });

  it('takes a null bundle_type as the default, html', async () => {
    const res = await post('/bulkjob', { bundle_type: null, zip_base64: okZip() });
    expect(res.status).toBe(202);
    const job = await res.json();
    expect(job.bundle_type).toBe('html');
    expect(await finished(job.job_id)).toMatchObject({ status: 'completed', bundle_type: 'html' });
  });

  it('applies the plan and credit gates: 402, 403 BULK_NOT_ENABLED, CONVERSION_TYPE_NOT_ENABLED, INSUFFICIENT_CREDITS', async () => {
    const body = { zip_base64: okZip() };
    const pending = await stack.account({ plan_id: 'pending' });
    expect(await errorOf(await post('/bulkjob', body, pending.api_key))).toMatchObject({ status: 402, code: 'UPGRADE_REQUIRED' });
    const nobulk = await stack.account({ plan_id: 'nobulk', credits_usd: 1 });
    expect(await errorOf(await post('/bulkjob', body, nobulk.api_key))).toMatchObject({ status: 403, code: 'BULK_NOT_ENABLED' });
    const htmlOnly = await stack.account({ plan_id: 'htmlonly', credits_usd: 1 });
    expect(await errorOf(await post('/bulkjob', { ...body, bundle_type: 'markdown' }, htmlOnly.api_key))).toMatchObject({ status: 403, code: 'CONVERSION_TYPE_NOT_ENABLED' });
    const broke = await stack.account({ credits_usd: 0 });
    expect(await errorOf(await post('/bulkjob', body, broke.api_key))).toMatchObject({ status: 403, code: 'INSUFFICIENT_CREDITS', details: { required_amount: 0.01 } });
  });

  it('refuses a PDF upload sent as the ZIP with 404 UPLOAD_NOT_FOUND, and leaves it in place (it was taken, failed the job and was deleted)', async () => {
    const res = await post('/pdf/upload-url', { content_length_bytes: 5 });
    const { s3_key, upload_url } = await res.json();
    expect((await fetch(upload_url, { method: 'PUT', body: '%PDF-', headers: { 'Content-Type': 'application/pdf' } })).status).toBe(200);
    const refused = await post('/bulkjob', { s3_key });
    const { error } = await refused.json();
    expect([refused.status, error.code, error.details.s3_key]).toEqual([404, 'UPLOAD_NOT_FOUND', s3_key]);
    expect(error.message).toMatch(/this s3_key was not issued by POST \/bulkjob\/upload-url/);
    expect(await stack.services.blobs.head(s3_key)).toMatchObject({ size_bytes: 5 });
  });

  it('refuses an upload larger than the plan allows (400 BULK_ZIP_TOO_LARGE)', async () => {
    const tiny = await stack.account({ plan_id: 'tiny', credits_usd: 1 });
    // An upload issued in 2024 has expired (uploads are kept one day), even if it is still in storage.
    const old = `uploads/${tiny.account_id}/bulk/01J00000000000000000000000.zip`;
    await stack.services.blobs.put(old, noise(100), 'application/zip');
    expect(await errorOf(await post('/bulkjob', { s3_key: old }, tiny.api_key))).toMatchObject({ status: 404, code: 'UPLOAD_NOT_FOUND' });
    const fresh = `uploads/${tiny.account_id}/bulk/${(await import('ulid')).ulid()}.zip`;
    await stack.services.blobs.put(fresh, noise(1024 * 1024 + 1), 'application/zip');
    expect(await errorOf(await post('/bulkjob', { s3_key: fresh }, tiny.api_key))).toMatchObject({ status: 400, code: 'BULK_ZIP_TOO_LARGE', details: { max_bytes: 1048576 } });
    // Sent inline, the same limit holds: a ZIP by its size, files by their contents' size.
    const big = noise(1024 * 1024 + 1);
    expect(await errorOf(await post('/bulkjob', { zip_base64: big.toString('base64') }, tiny.api_key))).toMatchObject({ status: 400, code: 'BULK_ZIP_TOO_LARGE', details: { size_bytes: big.length, max_bytes: 1048576 } });
    const files = [{ path: 'a.html', content_base64: big.subarray(0, 600_000).toString('base64') }, { path: 'b.html', content_base64: big.subarray(600_000).toString('base64') }];
    expect(await errorOf(await post('/bulkjob', { bundle_type: 'html', files }, tiny.api_key))).toMatchObject({ status: 400, code: 'BULK_ZIP_TOO_LARGE', details: { size_bytes: big.length } });
    // Before the balance, as for uploads.
    const poorTiny = await stack.account({ plan_id: 'tiny', credits_usd: 0 });
    expect(await errorOf(await post('/bulkjob', { zip_base64: big.toString('base64') }, poorTiny.api_key))).toMatchObject({ status: 400, code: 'BULK_ZIP_TOO_LARGE' });
  });

  it('allows two active bulk jobs per account and answers a third with 409 BULK_JOB_ALREADY_ACTIVE', async () => {
    const acct = await stack.account({ credits_usd: 1 });
    const now = new Date();
    for (const jobId of ['job_bulk_busy1', 'job_bulk_busy2']) {
      expect(await stack.services.jobSlots.acquire({ accountId: acct.account_id, kind: 'bulk', jobId, max: 2, now, leaseSeconds: 1800 })).toBe(true);
    }
    expect(await errorOf(await post('/bulkjob', { zip_base64: okZip() }, acct.api_key))).toMatchObject({ status: 409, code: 'BULK_JOB_ALREADY_ACTIVE', details: { max_active_jobs: 2 } });
    await stack.services.jobSlots.release({ accountId: acct.account_id, kind: 'bulk', jobId: 'job_bulk_busy1' });
    const jobId = await submit({ zip_base64: okZip() }, acct.api_key);
    expect(await finished(jobId, acct.api_key)).toMatchObject({ status: 'completed' });
  });
});

describe('hostile archives end the job before anything is extracted', () => {
  const html = { name: 'ok.html', data: '<p>ok</p>' };
  it.each([
    ['zip-slip ../', 'BULK_ZIP_UNSAFE_ENTRY', [html, { name: '../../evil.html', data: 'x' }]],
    ['Windows ..\\', 'BULK_ZIP_UNSAFE_ENTRY', [html, { name: '..\\..\\evil.html', data: 'x' }]],
    ['an absolute path', 'BULK_ZIP_UNSAFE_ENTRY', [html, { name: '/tmp/evil.html', data: 'x' }]],
    ['a symlink, then a file through it', 'BULK_ZIP_UNSAFE_ENTRY', [{ name: 'link', data: '/etc', unixMode: 0o120777, method: 0 }, { name: 'link/evil.html', data: 'x' }]],
    ['duplicate names', 'BULK_ZIP_UNSAFE_ENTRY', [html, { ...html, data: '<p>other</p>' }]],
    ['1001 entries', 'BULK_ZIP_TOO_MANY_ENTRIES', Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}.html`, data: 'x', method: 0 as const }))],
    ['a bomb at 101x', 'BULK_ZIP_SUSPICIOUS_ENTRY', [html, ratioEntry('bomb.css', 2 * 1024 * 1024, 101)]],
    ['an entry inflating beyond its declared size', 'BULK_ZIP_INVALID', [html, { name: 'liar.css', data: 'p { color: red } p { color: red }', declaredSize: 4 }]],
    ['something that is not a ZIP', 'BULK_ZIP_INVALID', null],
  ])('%s → failed with %s, nothing charged, nothing kept', async (_name, code, entries) => {
    const before = await credits();
    const jobId = await submit({ zip_base64: entries ? zipB64(entries as RawEntry[]) : Buffer.from('not a zip archive').toString('base64') });
    const job = await finished(jobId);
    expect(job).toMatchObject({ status: 'failed', error_code: code, success_count: 0 });
    expect(typeof job.error_message).toBe('string');
    expect((await filesOf(jobId))).toMatchObject({ status: 'failed', count: 0, files: [] });
    expect(await errorOf(await get(`/jobs/${jobId}/download`))).toMatchObject({ status: 404, code: 'OUTPUT_NOT_AVAILABLE' });
    expect((await outbox(jobId)).map((e) => [e.event, e.error_code])).toEqual([['bulk.job.failed', code]]);
    expect(await credits()).toBe(before);
    expect(await stack.services.blobs.head(`inputs/${user.account_id}/${jobId}/bundle.zip`)).toBeNull();
  });

  it('accepts a large entry at 99x and opens no nested archive', async () => {
    const inner = rawZip([{ name: 'inner.html', data: '<p>inside</p>' }, { name: '../escape.html', data: 'x' }]);
    const jobId = await submit({ zip_base64: zipB64([html, ratioEntry('big.css', 2 * 1024 * 1024, 99), { name: 'nested.zip', data: inner, method: 0 }]) });
    expect(await finished(jobId)).toMatchObject({ status: 'completed', file_count: 1 });
    expect((await filesOf(jobId)).files.map((f: { input: string }) => f.input)).toEqual(['ok.html']);
  });
});

describe('budgets and per-file results', () => {
  const pages = (n: number, label: string) => Array.from({ length: n }, (_, i) => `<p style="${i ? 'page-break-before:always' : ''}">${label} ${i + 1}</p>`).join('');

  it('skips the file that would pass the page budget and all after it (partial_failed, bulk.job.partial), and counts files against it', async () => {
    const tiny = await stack.account({ plan_id: 'tiny', credits_usd: 1 });
    const jobId = await submit({ zip_base64: zipB64([0, 1, 2, 3].map((i) => ({ name: `f${i}.html`, data: pages(2, `f${i}`) }))) }, tiny.api_key);
    const job = await finished(jobId, tiny.api_key);
    expect(job).toMatchObject({ status: 'partial_failed', file_count: 4, success_count: 2, failure_count: 2, pages_total: 4, error_code: null });
    expect((await filesOf(jobId, tiny.api_key)).files.map((f: { status: string; error_code: string | null }) => [f.status, f.error_code])).toEqual([
      ['success', null],
      ['success', null],
      ['skipped', 'BULK_PAGE_BUDGET_EXCEEDED'],
      ['skipped', 'BULK_PAGE_BUDGET_EXCEEDED'],
    ]);
    expect([...(await outputOf(jobId, tiny.api_key)).zip.keys()]).toEqual(['f0.pdf', 'f1.pdf', 'manifest.json']);
    expect(await credits(tiny.account_id)).toBe(1_000_000 - 2 * 10_000);
    expect((await outbox(jobId)).map((e) => [e.event, e.success_count])).toEqual([['bulk.job.partial', 2]]);

    const tooMany = await submit({ zip_base64: zipB64(Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.html`, data: 'x' }))) }, tiny.api_key);
    expect(await finished(tooMany, tiny.api_key)).toMatchObject({ status: 'failed', error_code: 'BULK_FILE_COUNT_EXCEEDED', file_count: 6 });
    const twoHundredOne = await submit({ zip_base64: zipB64(Array.from({ length: 201 }, (_, i) => ({ name: `f${i}.html`, data: 'x', method: 0 as const }))) });
    expect(await finished(twoHundredOne)).toMatchObject({ status: 'failed', error_code: 'BULK_FILE_COUNT_EXCEEDED', file_count: 201 });
  });

  it('fails the whole job when the balance cannot cover every convertible file, charging nothing', async () => {
    const poor = await stack.account({ credits_usd: 0.02 });
    const jobId = await submit({ zip_base64: zipB64([0, 1, 2].map((i) => ({ name: `f${i}.html`, data: 'x' }))) }, poor.api_key);
    expect(await finished(jobId, poor.api_key)).toMatchObject({ status: 'failed', error_code: 'INSUFFICIENT_CREDITS', file_count: 3 });
    expect(await credits(poor.account_id)).toBe(20_000);
    const none = await submit({ zip_base64: zipB64([{ name: 'a.css', data: 'p{}' }]) }, poor.api_key);
    expect(await finished(none, poor.api_key)).toMatchObject({ status: 'failed', error_code: 'BULK_NO_CONVERTIBLE_FILES' });
  });

  it('charges a job that crosses bucket boundaries file by file in rule-1 order, and checks the three buckets together', async () => {
    // 2 PDFs of allowance, 1 of free credits, 1 of one-off credits: 4 files fit only across all three buckets.
    const body = { credits_usd: 0.01, free_credits_usd: 0.01, subscription: { name: 'Starter', monthly_pdfs: 2, price: 0.02 } };
    const mixed = await stack.account(body);
    const jobId = await submit({ zip_base64: zipB64([0, 1, 2, 3].map((i) => ({ name: `f${i}.html`, data: `<p>${i}</p>` }))) }, mixed.api_key);
    expect(await finished(jobId, mixed.api_key)).toMatchObject({ status: 'completed', success_count: 4 });
    const billing = (await (await stack.request('GET', '/accounts/me/billing', { token: mixed.id_token })).json()).billing;
    expect(billing).toMatchObject({
      credits_balance: 0,
      free_credits_remaining: 0,
      subscription_credits_remaining: 0,
      subscription_pdfs_remaining: 0,
      total_pdf_count: 4,
      total_amount: 0.04,
      subscription: expect.objectContaining({ credits_remaining: 0, pdfs_remaining: 0, active: true }),
    });

    // One file more than the three buckets hold: refused whole before rendering, nothing taken from any bucket.
    const short = await stack.account(body);
    const refused = await submit({ zip_base64: zipB64([0, 1, 2, 3, 4].map((i) => ({ name: `f${i}.html`, data: `<p>${i}</p>` }))) }, short.api_key);
    expect(await finished(refused, short.api_key)).toMatchObject({ status: 'failed', error_code: 'INSUFFICIENT_CREDITS', success_count: 0 });
    const after = (await stack.services.accounts.get(short.account_id))!;
    expect([after.subscription!.allowance_micros, after.free_credits_micros, after.credits_micros, after.total_pdf_count]).toEqual([20_000, 10_000, 10_000, 0]);
  });

  it('counts every refused page request, also those Chromium refuses itself (mixed content it cannot upgrade, unsafe ports)', async () => {
    const html = '<img src="http://192.0.2.2/a.png"><img src="http://[2001:db8::1]/b.png"><img src="https://127.0.0.1:9/c.png"><img src="https://127.0.0.1:4555/d.png"><p>refusals</p>';
    const jobId = await submit({ zip_base64: zipB64([{ name: 'r.html', data: html }]) });
    expect(await finished(jobId)).toMatchObject({ status: 'completed' });
    expect((await filesOf(jobId)).files[0]).toMatchObject({ status: 'success', blocked_requests: 4 });
  });

  it("checks each job against what the account's other running jobs will charge: of two jobs the balance covers only one of, the second fails whole", async () => {
    const pair = await stack.account({ credits_usd: 0.03 });
    // Files that take a while to print, so both jobs are checked before either charges.
    const slow = (name: string) => ({ name, data: `<p>${name}</p><script>const t = Date.now(); while (Date.now() - t < 400) {}</script>` });
    const [first, second] = await Promise.all([
      submit({ zip_base64: zipB64([slow('a1.html'), slow('a2.html')]) }, pair.api_key),
      submit({ zip_base64: zipB64([slow('b1.html'), slow('b2.html')]) }, pair.api_key),
    ]);
    const jobs = [await finished(first, pair.api_key), await finished(second, pair.api_key)];
    // Without the commitment both passed their check, and the later Finish ran out after one file (partial_failed).
    expect(jobs.map((j) => j.status).sort()).toEqual(['completed', 'failed']);
    const refused = jobs.find((j) => j.status === 'failed');
    expect(refused).toMatchObject({ error_code: 'INSUFFICIENT_CREDITS', file_count: 2, success_count: 0 });
    expect(refused.error_message).toMatch(/set aside for 1 running job/);
    expect(await credits(pair.account_id)).toBe(10_000);
    // Both ended, so nothing stays set aside: a job the remaining balance covers runs.
    expect((await stack.services.accounts.get(pair.account_id))!.commitments).toEqual({});
    const third = await submit({ zip_base64: zipB64([{ name: 'c.html', data: 'c' }]) }, pair.api_key);
    expect(await finished(third, pair.api_key)).toMatchObject({ status: 'completed' });
  });

  it('does not count a job\'s commitment again once Finish has charged its files (while it writes the output)', async () => {
    const acct = await stack.account({ credits_usd: 0.05 }); // 3 PDFs (0.03) and one merge/split job's top band (0.02)
    // Holds Finish at its write of the output ZIP: the files are charged, the job still processing.
    const writing = holdBlobCalls('putParts', (key) => key.includes(acct.account_id) && key.endsWith('.zip'));
    try {
      const jobId = await submit({ zip_base64: zipB64([1, 2, 3].map((i) => ({ name: `f${i}.html`, data: `<p>${i}</p>` }))) }, acct.api_key);
      await writing.reached;
      expect(await credits(acct.account_id)).toBe(20_000);
      const pdf = await simplePdf(2);
      const up = await (await post('/pdf/upload-url', { content_length_bytes: pdf.length }, acct.api_key)).json();
      await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(pdf) });
      const res = await post('/pdf/jobs', { operation: 'split', inputs: [{ s3_key: up.s3_key, filename: 'a.pdf' }], split: { mode: 'each_page' } }, acct.api_key);
      // The 0.03 already charged is in the balance: 0.02 is left, all of it free for the merge/split job.
      expect({ status: res.status, error: (await res.json()).error?.details }).toEqual({ status: 202, error: undefined });
      writing.open();
      expect(await finished(jobId, acct.api_key)).toMatchObject({ status: 'completed', success_count: 3 });
    } finally {
      writing.release();
      await stack.workflows.idle();
    }
  });

  it('records FILE_TOO_LARGE, PAGE_LIMIT_EXCEEDED, RENDER_TIMEOUT and RENDER_FAILED per file; a page that never goes idle prints as it stood', async () => {
    const before = await credits();
    const zip = rawZip([
      { name: 'big.html', data: noise(10 * 1024 * 1024 + 1), method: 0 },
      { name: 'long.html', data: pages(101, 'p') },
      { name: 'loop.html', data: '<p>busy</p><script>for(;;){}</script>' },
      { name: 'waiting.html', data: `<p>printed as it stood</p><img src="http://localhost:${hang.port}/never.png">` },
      { name: 'fine.html', data: '<p>fine</p>' },
    ]);
    const jobId = await submit({ s3_key: await upload(zip) });
    const job = await finished(jobId);
    const rows = (await filesOf(jobId)).files;
    expect(rows.map((f: Record<string, unknown>) => [f.input, f.status, f.error_code, f.render_timeout, f.pages])).toEqual([
      ['big.html', 'failed', 'FILE_TOO_LARGE', false, 0],
      ['long.html', 'failed', 'PAGE_LIMIT_EXCEEDED', false, 0],
      ['loop.html', 'failed', 'RENDER_TIMEOUT', false, 0],
      ['waiting.html', 'success', null, true, 1],
      ['fine.html', 'success', null, false, 1],
    ]);
    expect(job).toMatchObject({ status: 'partial_failed', success_count: 2, failure_count: 3 });
    expect(await credits()).toBe(before - 2 * 10_000);
    expect(await pdfText((await outputOf(jobId)).zip.get('waiting.pdf')!)).toContain('printed as it stood');

    // Options apply to every file: a page range one file does not have fails that file only.
    const ranged = await submit({ zip_base64: zipB64([{ name: 'one.html', data: pages(1, 'one') }, { name: 'three.html', data: pages(3, 'three') }]), options: { pageRanges: '3' } });
    await finished(ranged);
    expect((await filesOf(ranged)).files.map((f: Record<string, unknown>) => [f.status, f.error_code, f.pages])).toEqual([
      ['failed', 'RENDER_FAILED', 0],
      ['success', null, 1],
    ]);
  }, 90_000);
});

describe('cancel', () => {
  it('cancels a queued job with 200 (nothing charged, bulk.job.cancelled); again is harmless', async () => {
    const now = new Date();
    const job = { ...newJob({ job_id: `job_queued_${Date.now()}`, account_id: user.account_id, job_type: 'bulk', status: 'queued', now }), bundle_type: 'html', file_count: null };
    await stack.services.jobs.put(job);
    await stack.services.jobSlots.acquire({ accountId: user.account_id, kind: 'bulk', jobId: job.job_id, max: 2, now, leaseSeconds: 60 });
    const res = await post(`/jobs/${job.job_id}/cancel`, undefined);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ job_id: job.job_id, status: 'cancelled', cancel_requested: true, message: expect.any(String) });
    expect(await (await get(`/jobs/${job.job_id}`)).json()).toMatchObject({ status: 'cancelled', cancel_requested: true, success_count: 0 });
    expect((await outbox(job.job_id)).map((e) => e.event)).toEqual(['bulk.job.cancelled']);
    expect((await post(`/jobs/${job.job_id}/cancel`, undefined)).status).toBe(200);
    // The slot went back: two more jobs may start.
    expect(await stack.services.jobSlots.acquire({ accountId: user.account_id, kind: 'bulk', jobId: 'probe', max: 2, now, leaseSeconds: 1 })).toBe(true);
    await stack.services.jobSlots.release({ accountId: user.account_id, kind: 'bulk', jobId: 'probe' });
  });

  it('asks a running job to stop (202): only documents already printing are made and charged, the rest are skipped with CANCELLED', async () => {
    const before = await credits();
    // Printing slots of this stack; the workflow hands out 10 files at once, so with fewer slots most files queue.
    const slots = Math.min(stack.services.config.renderMaxConcurrent, 10);
    const slow = (i: number) => ({ name: `slow${String(i).padStart(2, '0')}.html`, data: `<p>slow ${i}</p><script>const t = Date.now(); while (Date.now() - t < 1000) {}</script>` });
    // Watches the renderer port (calls go through unchanged): the cancel lands once all 10 dispatched files have
    // asked for a slot (they read the job before the cancel) and one document has started printing.
    const renders: string[] = [];
    let printing = 0;
    const render = stack.services.renderer.render.bind(stack.services.renderer);
    const spy = jest.spyOn(stack.services.renderer, 'render').mockImplementation((request) => {
      renders.push(request.bundle!.documentPath);
      const shouldStart = request.shouldStart;
      return render(shouldStart ? { ...request, shouldStart: async () => (await shouldStart()) && ++printing > 0 } : request);
    });
    try {
      const jobId = await submit({ zip_base64: zipB64(Array.from({ length: 12 }, (_, i) => slow(i))) });
      for (const until = Date.now() + 10_000; !(renders.length >= 10 && printing > 0) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
      // The moment the test is about: had the wait run out, the cancel would land at some other point.
      expect(renders.length).toBeGreaterThanOrEqual(10);
      expect(printing).toBeGreaterThan(0);
      const res = await post(`/jobs/${jobId}/cancel`, undefined);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ job_id: jobId, status: 'processing', cancel_requested: true, message: expect.any(String) });
      expect((await post(`/jobs/${jobId}/cancel`, undefined)).status).toBe(202);
      expect(await (await get(`/jobs/${jobId}`)).json()).toMatchObject({ status: 'processing', cancel_requested: true });

      const job = await finished(jobId);
      const rows = (await filesOf(jobId)).files as { status: string; error_code: string | null; output: string | null }[];
      const made = rows.filter((r) => r.status === 'success');
      expect(job).toMatchObject({ status: 'cancelled', cancel_requested: true, file_count: 12, success_count: made.length, failure_count: 12 - made.length });
      // Exactly the documents that had started printing before the cancel: at most one per slot.
      expect(made.length).toBeGreaterThanOrEqual(1);
      expect(made.length).toBe(printing);
      expect(made.length).toBeLessThanOrEqual(slots);
      expect(renders.length).toBeGreaterThan(made.length); // files handed to the renderer were called off while queued
      expect(rows.filter((r) => r.status !== 'success').every((r) => r.status === 'skipped' && r.error_code === 'CANCELLED')).toBe(true);
      expect(await credits()).toBe(before - made.length * 10_000);
      expect([...(await outputOf(jobId)).zip.keys()]).toEqual([...made.map((r) => r.output), 'manifest.json']);
      expect((await outbox(jobId)).map((e) => [e.event, e.success_count, typeof e.output_key])).toEqual([['bulk.job.cancelled', made.length, 'string']]);
      // Cancelled already: cancelling again is harmless.
      expect((await post(`/jobs/${jobId}/cancel`, undefined)).status).toBe(200);
    } finally {
      spy.mockRestore();
    }
  }, 90_000);

  it("Finish's final write does not go over a cancel it has not seen nor over an ended job (the table's conditions), and goes through once the cancel is seen", async () => {
    const now = new Date();
    const job = newJob({ job_id: newId('job'), account_id: user.account_id, job_type: 'bulk', status: 'processing', now });
    await stack.services.jobs.put(job);
    expect(await stack.services.bulkProgress.requestCancel(job.job_id)).toBe(true);
    const done = { ...job, status: 'completed' as const, completed_at: now.toISOString() };
    expect(await stack.services.bulkProgress.finishJob(done, [], false)).toBe(false);
    expect(await stack.services.jobs.get(job.job_id)).toMatchObject({ status: 'processing', cancel_requested: true });
    expect(await stack.services.bulkProgress.finishJob({ ...done, status: 'cancelled', cancel_requested: true }, [], true)).toBe(true);
    expect(await stack.services.jobs.get(job.job_id)).toMatchObject({ status: 'cancelled' });
    // Nor over a job that ended meanwhile (the workflow failed it while Finish still ran).
    const ended = newJob({ job_id: newId('job'), account_id: user.account_id, job_type: 'bulk', status: 'failed', now });
    await stack.services.jobs.put(ended);
    expect(await stack.services.bulkProgress.finishJob({ ...ended, status: 'completed' }, [], false)).toBe(false);
    expect(await stack.services.jobs.get(ended.job_id)).toMatchObject({ status: 'failed' });
  });

  it('keeps a cancel answered (202) while Prepare reads the bundle: a refusal found then ends the job cancelled, not failed', async () => {
    // Holds Prepare (the job is processing by then) at its read of the ZIP until the cancel has been answered.
    const reading = holdBlobCalls('get', (key) => key.includes(user.account_id) && key.endsWith('bundle.zip'));
    try {
      const before = await credits();
      const jobId = await submit({ zip_base64: zipB64([{ name: 'notes.txt', data: 'no page here' }]) });
      await reading.reached;
      const res = await post(`/jobs/${jobId}/cancel`, undefined);
      expect(res.status).toBe(202);
      reading.open();
      const job = await finished(jobId);
      expect(job).toMatchObject({ status: 'cancelled', cancel_requested: true, error_code: null, success_count: 0 });
      expect((await outbox(jobId)).map((e) => e.event)).toEqual(['bulk.job.cancelled']);
      expect(await credits()).toBe(before);
      expect(await stack.services.jobSlots.holders({ accountId: user.account_id, kind: 'bulk', now: new Date() })).toEqual([]);
    } finally {
      reading.release();
    }
  });

  it('answers 409 for finished jobs and for job types that cannot be cancelled, 404 for other accounts', async () => {
    const jobId = await submit({ zip_base64: zipB64([{ name: 'a.html', data: '<p>a</p>' }]) });
    await finished(jobId);
    expect(await errorOf(await post(`/jobs/${jobId}/cancel`, undefined))).toMatchObject({ status: 409, code: 'JOB_NOT_CANCELLABLE', details: { status: 'completed' } });
    const quick = await post('/quickjob', { input_type: 'html', html: '<p>q</p>' });
    const quickId = quick.headers.get('x-job-id')!;
    expect(await errorOf(await post(`/jobs/${quickId}/cancel`, undefined))).toMatchObject({ status: 409, code: 'JOB_NOT_CANCELLABLE', details: { job_type: 'quick' } });
    const other = await stack.account({ credits_usd: 1 });
    expect(await errorOf(await post(`/jobs/${jobId}/cancel`, undefined, other.api_key))).toMatchObject({ status: 404, code: 'JOB_NOT_FOUND' });
  });
});

describe('retried steps', () => {
  it('a render step and the finish step that fail once are retried by the workflow, and nothing is charged twice', async () => {
    const before = await credits();
    const blobs = stack.services.blobs;
    const put = blobs.put.bind(blobs);
    const putParts = blobs.putParts.bind(blobs);
    const failed = new Set<string>();
    // The first PDF stored by a render step, and the first output ZIP: storage trouble, once each.
    const failOnce = (key: string) => {
      const kind = key.includes('/pdf/') ? 'pdf' : key.startsWith('outputs/') ? 'zip' : null;
      if (kind && !failed.has(kind)) {
        failed.add(kind);
        throw new Error(`storage unavailable (${kind})`);
      }
    };
    const spy = jest.spyOn(blobs, 'put').mockImplementation(async (key, body, type) => (failOnce(key), put(key, body, type)));
    const partsSpy = jest.spyOn(blobs, 'putParts').mockImplementation(async (key, parts, type) => (failOnce(key), putParts(key, parts, type)));
    try {
      const jobId = await submit({ zip_base64: zipB64([0, 1, 2].map((i) => ({ name: `f${i}.html`, data: `<p>${i}</p>` }))) });
      const job = await finished(jobId);
      expect(failed).toEqual(new Set(['pdf', 'zip']));
      expect(job).toMatchObject({ status: 'completed', success_count: 3, processed_count: 3 });
      expect(await credits()).toBe(before - 3 * 10_000);
      expect([...(await outputOf(jobId)).zip.keys()]).toEqual(['f0.pdf', 'f1.pdf', 'f2.pdf', 'manifest.json']);
      expect((await outbox(jobId)).map((e) => e.event)).toEqual(['bulk.job.completed']);
    } finally {
      spy.mockRestore();
      partsSpy.mockRestore();
    }
  });
});
