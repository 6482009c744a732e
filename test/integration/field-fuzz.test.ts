import fc from 'fast-check';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { multipart, png } from '../support/images';
import { b64, simplePdf } from '../support/pdf-fixtures';

/**
 * Hostile and odd values in every field of the built JSON, multipart and query routes, sent over HTTP: each answer
 * is the spec's status and code (never a 500), its details name the field, and a refused request charges nothing and
 * leaves no job queued or processing.
 */

let stack: TestStack;
let user: TestAccount;
let onePagePdf: string;
const HOOK_PORT = 9;

beforeAll(async () => {
  // Nothing listens there: the webhook is only made, never delivered to.
  stack = await startTestStack({ ALLOW_PRIVATE_TARGETS: `localhost:${HOOK_PORT}` });
  user = await stack.account({ credits_usd: 50 });
  onePagePdf = b64(await simplePdf(1));
  const hook = await stack.request('POST', '/accounts/me/webhooks', { token: user.id_token, json: { url: `https://localhost:${HOOK_PORT}/h` } });
  expect(hook.status).toBe(201);
  hookId = (await hook.json()).webhook.webhook_id;
  const merged = await stack.request('POST', '/pdf/merge', { key: user.api_key, json: { inputs: [{ pdf_base64: onePagePdf }, { pdf_base64: onePagePdf }], store: true } });
  expect(merged.status).toBe(200);
  mergeJobId = (await merged.json()).job_id;
});
afterAll(() => stack?.stop());

type Auth = 'key' | 'token';
interface Case {
  name: string;
  method?: string;
  route: string;
  auth?: Auth;
  /** A JSON value, sent as JSON. */
  json?: unknown;
  /** Raw text sent as application/json (duplicated keys, nesting no JSON.stringify writes). */
  raw?: string;
  form?: Parameters<typeof multipart>[0];
  status: number;
  code?: string;
  /** Text the error's details must hold (the field they name). */
  names?: string;
  /** X-PDF-Pages of a PDF answer. */
  pages?: string;
  /** What the error's message must say. */
  message?: RegExp;
}

/** Stands for the one-page PDF's base64 in a case (the PDF is made in beforeAll); replaced when the request is sent. */
const PDF_PLACEHOLDER = '@@one-page-pdf@@';
const onePagePdfRef = () => PDF_PLACEHOLDER;
/** Stands for the route of the webhook made in beforeAll. */
const HOOK_ROUTE = '/accounts/me/webhooks/@@hook@@';
let hookId: string;
let mergeJobId: string;

const HTML = { input_type: 'html', html: '<p>fuzz</p>' };
const html = (options: unknown) => ({ ...HTML, options });
const LONG = 'x'.repeat(200_000);
const CONTROL = 'a\u0000b\u0007c\u202ed\ud800e\uffff';
/** CONTROL without the lone surrogate, which has no URL encoding. */
const CONTROL_URL = encodeURIComponent('a\u0000b\u0007c\u202ed\uffff');

/** quickjob html options: [name, options, expected status, field named] (200: a PDF). */
const quickOptions: [string, unknown, number, string?][] = [
  ['format Letter', { format: 'Letter' }, 200],
  ['format lower case', { format: 'a4' }, 200],
  ['format null alone (A4 size)', { format: null }, 200],
  ['format B5', { format: 'B5' }, 400, 'options.format'],
  ['format number', { format: 4 }, 400, 'options.format'],
  ['format array', { format: ['A4'] }, 400, 'options.format'],
  ['format object', { format: {} }, 400, 'options.format'],
  ['format empty', { format: '' }, 400, 'options.format'],
  ['format __proto__', { format: '__proto__' }, 400, 'options.format'],
  ['format constructor', { format: 'constructor' }, 400, 'options.format'],
  ['format boolean', { format: true }, 400, 'options.format'],
  ['format control chars', { format: CONTROL }, 400, 'options.format'],
  ['margin -5mm', { margin: { top: '-5mm' } }, 400, 'options.margin.top'],
  ['margin 1e3cm', { margin: { top: '1e3cm' } }, 400, 'options.margin.top'],
  ['margin "10 mm"', { margin: { top: '10 mm' } }, 200],
  ['margin 10MM', { margin: { left: '10MM' } }, 200],
  ['margin bare 10', { margin: { right: '10' } }, 400, 'options.margin.right'],
  ['margin px alone', { margin: { bottom: 'px' } }, 400, 'options.margin.bottom'],
  ['margin empty', { margin: { top: '' } }, 400, 'options.margin.top'],
  ['margin number 10', { margin: { top: 10 } }, 400, 'options.margin.top'],
  ['margin number 0', { margin: { top: 0 } }, 200],
  ['margin Infinity text', { margin: { top: 'Infinitymm' } }, 400, 'options.margin.top'],
  ['margin NaN text', { margin: { top: 'NaN' } }, 400, 'options.margin.top'],
  ['margin huge digits', { margin: { top: `${'9'.repeat(400)}mm` } }, 400, 'options.margin'],
  ['margin leaves no room', { margin: { left: '150mm', right: '60mm' } }, 400, 'options.margin'],
  ['margin string', { margin: '10mm' }, 400, 'options.margin'],
  ['margin array', { margin: ['10mm'] }, 400, 'options.margin'],
  ['margin unknown side', { margin: { middle: '1mm' } }, 400, 'options.margin'],
  ['margin null side', { margin: { top: null } }, 200],
  ['scale 2', { scale: 2 }, 200],
  ['scale as string', { scale: '1' }, 400, 'options.scale'],
  ['scale 0', { scale: 0 }, 400, 'options.scale'],
  ['scale 1e308', { scale: 1e308 }, 400, 'options.scale'],
  ['scale 2^53+1', { scale: 2 ** 53 + 1 }, 400, 'options.scale'],
  ['scale NaN text', { scale: 'NaN' }, 400, 'options.scale'],
  ['scale Infinity text', { scale: 'Infinity' }, 400, 'options.scale'],
  ['scale array', { scale: [1] }, 400, 'options.scale'],
  ['landscape as string', { landscape: 'true' }, 400, 'options.landscape'],
  ['landscape number', { landscape: 1 }, 400, 'options.landscape'],
  ['printBackground as string', { printBackground: 'false' }, 400, 'options.printBackground'],
  ['preferCSSPageSize object', { preferCSSPageSize: {} }, 400, 'options.preferCSSPageSize'],
  ['displayHeaderFooter yes', { displayHeaderFooter: 'yes' }, 400, 'options.displayHeaderFooter'],
  ['custom size', { format: null, width: '100mm', height: '120mm' }, 200],
  ['width ignored under a format', { format: 'A5', width: '1mm' }, 200],
  ['width 0mm', { format: null, width: '0mm' }, 400, 'options.width'],
  ['width number 0', { format: null, width: 0 }, 400, 'options.width'],
  ['width 1e3cm', { format: null, width: '1e3cm' }, 400, 'options.width'],
  ['width too large', { format: null, width: '300in' }, 400, 'options.width'],
  ['height negative', { format: null, height: '-1in' }, 400, 'options.height'],
  ['height huge digits', { format: null, height: `${'9'.repeat(330)}px` }, 400, 'options.height'],
  ['pageRanges 1-', { pageRanges: '1-' }, 200],
  ['pageRanges -3', { pageRanges: '-3' }, 200],
  ['pageRanges " 1 "', { pageRanges: ' 1 ' }, 200],
  ['pageRanges empty', { pageRanges: '' }, 200],
  ['pageRanges 3-1', { pageRanges: '3-1' }, 400, 'options.pageRanges'],
  ['pageRanges 0', { pageRanges: '0' }, 400, 'options.pageRanges'],
  ['pageRanges 1,,2', { pageRanges: '1,,2' }, 400, 'options.pageRanges'],
  ['pageRanges 1-2-3', { pageRanges: '1-2-3' }, 400, 'options.pageRanges'],
  ['pageRanges 20 digits', { pageRanges: '99999999999999999999' }, 400, 'options.pageRanges'],
  ['pageRanges past the end', { pageRanges: '2' }, 400, 'options.pageRanges'],
  ['pageRanges number', { pageRanges: 1 }, 400, 'options.pageRanges'],
  ['pageRanges words', { pageRanges: 'all' }, 400, 'options.pageRanges'],
  ['pageRanges 1.5', { pageRanges: '1.5' }, 400, 'options.pageRanges'],
  // The whole string is trimmed (JS trim: Unicode blanks too) before Chromium reads it; inside, only ASCII blanks are.
  ['pageRanges trailing unicode blank', { pageRanges: '1\u00a0' }, 200],
  ['pageRanges inner unicode blank', { pageRanges: '1\u00a0,1' }, 400, 'options.pageRanges'],
  ['pageRanges long list', { pageRanges: '1 ,'.repeat(10_000) + '1' }, 200],
  ['headerTemplate with controls', { displayHeaderFooter: true, headerTemplate: `<span style="font-size:8px">${CONTROL}</span>` }, 200],
  ['headerTemplate number', { headerTemplate: 5 }, 400, 'options.headerTemplate'],
  ['footerTemplate too long', { displayHeaderFooter: true, footerTemplate: LONG }, 400, 'options.footerTemplate'],
  ['footerTemplate link', { displayHeaderFooter: true, footerTemplate: '<link rel=stylesheet href=x.css>' }, 400, 'options.footerTemplate'],
  ['empty templates', { displayHeaderFooter: true, headerTemplate: '', footerTemplate: '' }, 200],
  ['unknown fields ignored', { fooBar: [1, 2], __proto__: { x: 1 }, constructor: 'x' }, 200],
  ['options array', [], 400, 'options'],
  ['options string', '{}', 400, 'options'],
  ['options number', 1, 400, 'options'],
  ['options null', null, 200],
];

const cases: Case[] = [
  ...quickOptions.map(([name, options, status, names]): Case => ({ name: `quickjob options: ${name}`, route: '/quickjob', json: html(options), status, code: status === 200 ? undefined : 'INVALID_PARAMETER', names })),
  // quickjob body fields
  { name: 'quickjob: input_type missing', route: '/quickjob', json: { html: '<p>x</p>' }, status: 400, code: 'MISSING_INPUT_TYPE' },
  { name: 'quickjob: input_type null', route: '/quickjob', json: { input_type: null, html: '<p>x</p>' }, status: 400, code: 'MISSING_INPUT_TYPE' },
  { name: 'quickjob: input_type array', route: '/quickjob', json: { input_type: ['html'], html: '<p>x</p>' }, status: 400, code: 'INVALID_INPUT_TYPE', names: 'input_type' },
  { name: 'quickjob: input_type HTML', route: '/quickjob', json: { input_type: 'HTML', html: '<p>x</p>' }, status: 400, code: 'INVALID_INPUT_TYPE', names: 'input_type' },
  { name: 'quickjob: input_type with NUL', route: '/quickjob', json: { input_type: 'html\u0000', html: '<p>x</p>' }, status: 400, code: 'INVALID_INPUT_TYPE', names: 'input_type' },
  { name: 'quickjob: image as JSON', route: '/quickjob', json: { input_type: 'image' }, status: 400, code: 'INVALID_PARAMETER', names: 'input_type' },
  { name: 'quickjob: html number', route: '/quickjob', json: { input_type: 'html', html: 5 }, status: 400, names: 'html' },
  { name: 'quickjob: html object', route: '/quickjob', json: { input_type: 'html', html: { a: 1 } }, status: 400, names: 'html' },
  { name: 'quickjob: html empty', route: '/quickjob', json: { input_type: 'html', html: '' }, status: 400, code: 'EMPTY_CONTENT_FIELD', names: 'html' },
  { name: 'quickjob: html blank', route: '/quickjob', json: { input_type: 'html', html: ' \n\t ' }, status: 400, code: 'EMPTY_CONTENT_FIELD', names: 'html' },
  { name: 'quickjob: html and markdown', route: '/quickjob', json: { ...HTML, markdown: '# x' }, status: 400, code: 'CONFLICTING_FIELDS', names: 'markdown' },
  { name: 'quickjob: url with html', route: '/quickjob', json: { ...HTML, url: 'https://example.com' }, status: 400, code: 'WRONG_FIELD_PROVIDED', names: 'url' },
  { name: 'quickjob: markdown missing', route: '/quickjob', json: { input_type: 'markdown' }, status: 400, code: 'MISSING_CONTENT_FIELD', names: 'markdown' },
  { name: 'quickjob: url empty', route: '/quickjob', json: { input_type: 'url', url: '' }, status: 400, code: 'MISSING_URL' },
  { name: 'quickjob: url number', route: '/quickjob', json: { input_type: 'url', url: 5 }, status: 400, code: 'INVALID_URL' },
  { name: 'quickjob: url http', route: '/quickjob', json: { input_type: 'url', url: 'http://example.com' }, status: 400, code: 'INVALID_URL' },
  { name: 'quickjob: url localhost', route: '/quickjob', json: { input_type: 'url', url: 'https://localhost/x' }, status: 400, code: 'INVALID_URL' },
  { name: 'quickjob: url control chars', route: '/quickjob', json: { input_type: 'url', url: `https://${CONTROL}` }, status: 400, code: 'INVALID_URL' },
  { name: 'quickjob: url with bad options', route: '/quickjob', json: { input_type: 'url', url: 'https://example.com', options: { margin: { top: '10' } } }, status: 400, code: 'INVALID_PARAMETER', names: 'options.margin.top' },
  { name: 'quickjob: store as string', route: '/quickjob', json: { ...HTML, store: 'true' }, status: 400, code: 'INVALID_PARAMETER', names: 'store' },
  { name: 'quickjob: store number', route: '/quickjob', json: { ...HTML, store: 1 }, status: 400, code: 'INVALID_PARAMETER', names: 'store' },
  { name: 'quickjob: unknown top-level field', route: '/quickjob', json: { ...HTML, extra: { deep: [1] } }, status: 200 },
  { name: 'quickjob: body array', route: '/quickjob', json: [HTML], status: 400, code: 'INVALID_PARAMETER', names: 'body' },
  { name: 'quickjob: body null', route: '/quickjob', raw: 'null', status: 400, code: 'INVALID_PARAMETER', names: 'body' },
  { name: 'quickjob: body a string', route: '/quickjob', raw: '"html"', status: 400, code: 'INVALID_PARAMETER', names: 'body' },
  { name: 'quickjob: body not JSON', route: '/quickjob', raw: '{input_type: html}', status: 400 },
  { name: 'quickjob: body NaN literal', route: '/quickjob', raw: '{"input_type":"html","html":"<p>x</p>","options":{"scale":NaN}}', status: 400 },
  { name: 'quickjob: body -0 scale', route: '/quickjob', raw: '{"input_type":"html","html":"<p>x</p>","options":{"scale":-0}}', status: 400, code: 'INVALID_PARAMETER', names: 'options.scale' },
  { name: 'quickjob: body -0 margin', route: '/quickjob', raw: '{"input_type":"html","html":"<p>x</p>","options":{"margin":{"top":-0}}}', status: 200 },
  { name: 'quickjob: body 1e400 scale', route: '/quickjob', raw: '{"input_type":"html","html":"<p>x</p>","options":{"scale":1e400}}', status: 400, code: 'INVALID_PARAMETER', names: 'options.scale' },
  // The last of duplicated keys wins (JSON.parse), as in most JSON readers.
  { name: 'quickjob: duplicated keys', route: '/quickjob', raw: '{"input_type":"html","html":"<p>x</p>","options":{"scale":1},"options":{"scale":9}}', status: 400, code: 'INVALID_PARAMETER', names: 'options.scale' },
  { name: 'quickjob: duplicated keys, last valid', route: '/quickjob', raw: '{"input_type":"html","html":"<p>x</p>","options":{"scale":9},"options":{"scale":1}}', status: 200 },
  { name: 'quickjob: deeply nested options', route: '/quickjob', raw: `{"input_type":"html","html":"<p>x</p>","options":${'['.repeat(50_000)}${']'.repeat(50_000)}}`, status: 400 },
  { name: 'quickjob: deeply nested unknown field', route: '/quickjob', raw: `{"input_type":"html","html":"<p>x</p>","options":{"x":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}}`, status: 400, code: 'INVALID_PARAMETER', names: 'body' },
  { name: 'quickjob: deeply nested margin', route: '/quickjob', raw: `{"input_type":"html","html":"<p>x</p>","options":{"margin":{"top":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}}}`, status: 400, code: 'INVALID_PARAMETER', names: 'body' },
  { name: 'quickjob: 60 levels of margin', route: '/quickjob', raw: `{"input_type":"html","html":"<p>x</p>","options":{"margin":{"top":${'{"a":'.repeat(55)}1${'}'.repeat(55)}}}}`, status: 400, code: 'INVALID_PARAMETER', names: 'options.margin.top' },
  // markdown takes the same options
  // Refused before anything is printed (Chromium cannot read a blank after a leading dash; it refused after laying out).
  ...(['- 3', '-\t3', '1, - 3'] as const).map((pageRanges): Case => ({ name: `quickjob: pageRanges ${JSON.stringify(pageRanges)}`, route: '/quickjob', json: html({ pageRanges }), status: 400, code: 'INVALID_PARAMETER', names: 'options.pageRanges', message: /expected pages and ranges/ })),
  // Open ranges starting near or past the largest page number Chromium reads are past the end, as the README says.
  ...(['4294967290-', '4294967295-', '99999999999-'] as const).map((pageRanges): Case => ({ name: `quickjob: pageRanges ${pageRanges}`, route: '/quickjob', json: html({ pageRanges }), status: 400, code: 'INVALID_PARAMETER', names: 'options.pageRanges', message: /beyond the end of the document/ })),
  { name: 'longjob: pageRanges 99999999999-', route: '/longjob', json: html({ pageRanges: '99999999999-' }), status: 400, code: 'INVALID_PARAMETER', names: 'options.pageRanges', message: /beyond the end of the document/ },
  { name: 'quickjob markdown: pageRanges 0', route: '/quickjob', json: { input_type: 'markdown', markdown: '# x', options: { pageRanges: '0' } }, status: 400, code: 'INVALID_PARAMETER', names: 'options.pageRanges' },
  // longjob
  { name: 'longjob: options scale as string', route: '/longjob', json: html({ scale: '1' }), status: 400, code: 'INVALID_PARAMETER', names: 'options.scale' },
  { name: 'longjob: margin 10', route: '/longjob', json: html({ margin: { top: '10' } }), status: 400, code: 'INVALID_PARAMETER', names: 'options.margin.top' },
  { name: 'longjob: pageRanges past the end', route: '/longjob', json: html({ pageRanges: '5-9' }), status: 400, code: 'INVALID_PARAMETER', names: 'options.pageRanges' },
  { name: 'longjob: email_notification as string', route: '/longjob', json: { ...HTML, email_notification: 'false' }, status: 400, code: 'INVALID_PARAMETER', names: 'email_notification' },
  { name: 'longjob: email_notification number', route: '/longjob', json: { ...HTML, email_notification: 0 }, status: 400, code: 'INVALID_PARAMETER', names: 'email_notification' },
  { name: 'longjob: webhook_url http', route: '/longjob', json: { ...HTML, webhook_url: 'http://example.com/h' }, status: 400, code: 'INVALID_WEBHOOK_URL' },
  { name: 'longjob: webhook_url number', route: '/longjob', json: { ...HTML, webhook_url: 5 }, status: 400, code: 'INVALID_WEBHOOK_URL' },
  { name: 'longjob: webhook_url empty', route: '/longjob', json: { ...HTML, webhook_url: '' }, status: 400, code: 'INVALID_WEBHOOK_URL' },
  { name: 'longjob: input_type url', route: '/longjob', json: { input_type: 'url', url: 'https://example.com' }, status: 400, names: 'input_type' },
  { name: 'longjob: input_type object', route: '/longjob', json: { input_type: {}, html: '<p>x</p>' }, status: 400, code: 'INVALID_INPUT_TYPE', names: 'input_type' },
  { name: 'longjob: body array', route: '/longjob', json: [], status: 400, code: 'INVALID_PARAMETER', names: 'body' },
  // bulk
  { name: 'bulkjob: bundle_type pdf', route: '/bulkjob', json: { bundle_type: 'pdf', files: [{ path: 'a.html', content_base64: b64(Buffer.from('<p>a</p>')) }] }, status: 400, code: 'INVALID_BUNDLE_TYPE' },
  { name: 'bulkjob: bundle_type number', route: '/bulkjob', json: { bundle_type: 1, files: [{ path: 'a.html', content_base64: b64(Buffer.from('<p>a</p>')) }] }, status: 400, code: 'INVALID_BUNDLE_TYPE' },
  { name: 'bulkjob: no input', route: '/bulkjob', json: {}, status: 400, code: 'INVALID_BULK_INPUT' },
  { name: 'bulkjob: two inputs', route: '/bulkjob', json: { zip_base64: 'UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA==', files: [{ path: 'a.html', content_base64: 'PHA+' }] }, status: 400, code: 'INVALID_BULK_INPUT' },
  { name: 'bulkjob: files not an array', route: '/bulkjob', json: { files: 'a.html' }, status: 400, names: 'files' },
  { name: 'bulkjob: path with ..', route: '/bulkjob', json: { files: [{ path: '../a.html', content_base64: 'PHA+' }] }, status: 400, code: 'INVALID_BULK_PATH' },
  { name: 'bulkjob: absolute path', route: '/bulkjob', json: { files: [{ path: '/a.html', content_base64: 'PHA+' }] }, status: 400, code: 'INVALID_BULK_PATH' },
  { name: 'bulkjob: empty path', route: '/bulkjob', json: { files: [{ path: '', content_base64: 'PHA+' }] }, status: 400, code: 'INVALID_BULK_PATH' },
  { name: 'bulkjob: path number', route: '/bulkjob', json: { files: [{ path: 1, content_base64: 'PHA+' }] }, status: 400, names: 'path' },
  { name: 'bulkjob: invalid base64', route: '/bulkjob', json: { files: [{ path: 'a.html', content_base64: '!!!!' }] }, status: 400, code: 'INVALID_BASE64' },
  { name: 'bulkjob: zip_base64 not base64', route: '/bulkjob', json: { zip_base64: 'not base64!' }, status: 400, code: 'INVALID_BASE64' },
  { name: 'bulkjob: options scale string', route: '/bulkjob', json: { files: [{ path: 'a.html', content_base64: 'PHA+' }], options: { scale: '2' } }, status: 400, code: 'INVALID_PARAMETER', names: 'options.scale' },
  { name: 'bulkjob: options pageRanges 3-1', route: '/bulkjob', json: { files: [{ path: 'a.html', content_base64: 'PHA+' }], options: { pageRanges: '3-1' } }, status: 400, code: 'INVALID_PARAMETER', names: 'options.pageRanges' },
  { name: 'bulkjob: options array', route: '/bulkjob', json: { files: [{ path: 'a.html', content_base64: 'PHA+' }], options: [] }, status: 400, code: 'INVALID_PARAMETER', names: 'options' },
  { name: 'bulkjob: s3_key of nobody', route: '/bulkjob', json: { s3_key: '../../etc/passwd' }, status: 404, code: 'UPLOAD_NOT_FOUND', names: 's3_key' },
  { name: 'bulkjob: s3_key number', route: '/bulkjob', json: { s3_key: 5 }, status: 400, names: 's3_key' },
  // Sizes past the limit are too large, however they are written (2^53 + 1 is no longer exact, but still too large).
  ...([1e308, 2 ** 53 + 1, 50 * 1024 * 1024 + 1]).map((value): Case => ({ name: `bulkjob/upload-url: content_length_bytes ${value}`, route: '/bulkjob/upload-url', json: { content_length_bytes: value }, status: 400, code: 'BULK_ZIP_TOO_LARGE', names: 'size_bytes' })),
  ...(['100', -1, 0, 1.5, -1e308, null, [], true, '1e3'] as unknown[]).map((value): Case => ({
    name: `bulkjob/upload-url: content_length_bytes ${JSON.stringify(value)}`,
    route: '/bulkjob/upload-url',
    json: { content_length_bytes: value },
    status: 400,
    names: 'content_length_bytes',
  })),
  // merge
  ...([
    ['0', 'INVALID_PAGE_RANGE'],
    ['1-', 'INVALID_PAGE_RANGE'],
    ['-3', 'INVALID_PAGE_RANGE'],
    ['3-1', 'INVALID_PAGE_RANGE'],
    ['1,,2', 'INVALID_PAGE_RANGE'],
    ['1-2-3', 'INVALID_PAGE_RANGE'],
    ['1.5', 'INVALID_PAGE_RANGE'],
    ['', 'INVALID_PAGE_RANGE'],
    ['99999999999999999999', 'PAGE_OUT_OF_RANGE'],
    ['2', 'PAGE_OUT_OF_RANGE'],
    ['1-end,'.repeat(600), 'INVALID_PAGE_RANGE'],
  ] as const).map(([pages, code]): Case => ({
    name: `pdf/merge: pages ${JSON.stringify(pages.slice(0, 20))}`,
    route: '/pdf/merge',
    json: { inputs: [{ pdf_base64: onePagePdfRef(), pages }, { pdf_base64: onePagePdfRef() }] },
    status: 400,
    code,
    names: 'pages',
  })),
  { name: 'pdf/merge: pages " 1 "', route: '/pdf/merge', json: { inputs: [{ pdf_base64: onePagePdfRef(), pages: ' 1 ' }, { pdf_base64: onePagePdfRef(), pages: null }] }, status: 200 },
  { name: 'pdf/merge: pages number', route: '/pdf/merge', json: { inputs: [{ pdf_base64: onePagePdfRef(), pages: 1 }, { pdf_base64: onePagePdfRef() }] }, status: 400, names: 'pages' },
  { name: 'pdf/merge: one input', route: '/pdf/merge', json: { inputs: [{ pdf_base64: onePagePdfRef() }] }, status: 400, code: 'MISSING_PDFS' },
  { name: 'pdf/merge: inputs string', route: '/pdf/merge', json: { inputs: 'a.pdf' }, status: 400, names: 'inputs' },
  { name: 'pdf/merge: inputs null', route: '/pdf/merge', json: { inputs: null }, status: 400 },
  { name: 'pdf/merge: pdf_base64 number', route: '/pdf/merge', json: { inputs: [{ pdf_base64: 1 }, { pdf_base64: onePagePdfRef() }] }, status: 400, names: 'pdf_base64' },
  { name: 'pdf/merge: pdf_base64 not a PDF', route: '/pdf/merge', json: { inputs: [{ pdf_base64: 'aGVsbG8=' }, { pdf_base64: onePagePdfRef() }] }, status: 422, code: 'INVALID_PDF' },
  { name: 'pdf/merge: output_filename number', route: '/pdf/merge', json: { inputs: [{ pdf_base64: onePagePdfRef() }, { pdf_base64: onePagePdfRef() }], options: { output_filename: 5 } }, status: 400, code: 'INVALID_PARAMETER', names: 'output_filename' },
  { name: 'pdf/merge: output_filename controls', route: '/pdf/merge', json: { inputs: [{ pdf_base64: onePagePdfRef() }, { pdf_base64: onePagePdfRef() }], options: { output_filename: CONTROL, title: CONTROL } }, status: 200 },
  { name: 'pdf/merge: store as text', route: '/pdf/merge', json: { inputs: [{ pdf_base64: onePagePdfRef() }, { pdf_base64: onePagePdfRef() }], store: 'yes' }, status: 400, code: 'INVALID_PARAMETER', names: 'store' },
  { name: 'pdf/merge: options array', route: '/pdf/merge', json: { inputs: [{ pdf_base64: onePagePdfRef() }, { pdf_base64: onePagePdfRef() }], options: [] }, status: 400, code: 'INVALID_PARAMETER', names: 'options' },
  // split
  ...([
    [null, 'INVALID_SPLIT_MODE', 'mode'],
    ['each_page', 'INVALID_SPLIT_MODE', 'mode'],
    [{}, 'INVALID_SPLIT_MODE', 'mode'],
    [{ mode: 'EACH_PAGE' }, 'INVALID_SPLIT_MODE', 'mode'],
    [{ mode: ['each_page'] }, 'INVALID_SPLIT_MODE', 'mode'],
    [{ mode: 'every_n', every_n: 0 }, 'INVALID_PARAMETER', 'every_n'],
    [{ mode: 'every_n', every_n: '2' }, 'INVALID_PARAMETER', 'every_n'],
    [{ mode: 'every_n', every_n: 1.5 }, 'INVALID_PARAMETER', 'every_n'],
    [{ mode: 'every_n', every_n: -1 }, 'INVALID_PARAMETER', 'every_n'],
    [{ mode: 'every_n', every_n: null }, 'INVALID_PARAMETER', 'every_n'],
    [{ mode: 'extract', pages: '0' }, 'INVALID_PAGE_RANGE', 'pages'],
    [{ mode: 'extract', pages: '1-' }, 'INVALID_PAGE_RANGE', 'pages'],
    [{ mode: 'extract', pages: 3 }, 'INVALID_PARAMETER', 'pages'],
    [{ mode: 'extract', pages: '99999999999999999999' }, 'PAGE_OUT_OF_RANGE', 'pages'],
    [{ mode: 'extract' }, 'INVALID_PARAMETER', 'pages'],
    [{ mode: 'ranges', ranges: '1-2' }, 'INVALID_PARAMETER', 'ranges'],
    [{ mode: 'ranges', ranges: [] }, 'INVALID_PARAMETER', 'ranges'],
    [{ mode: 'ranges', ranges: ['1', '3-1'] }, 'INVALID_PAGE_RANGE', 'ranges'],
    [{ mode: 'ranges', ranges: [null] }, 'INVALID_PARAMETER', 'ranges'],
  ] as const).map(([split, code, names]): Case => ({
    name: `pdf/split: split ${JSON.stringify(split)}`,
    route: '/pdf/split',
    json: { input: { pdf_base64: onePagePdfRef() }, split },
    status: 400,
    code,
    names,
  })),
  { name: 'pdf/split: every_n 1e308', route: '/pdf/split', json: { input: { pdf_base64: onePagePdfRef() }, split: { mode: 'every_n', every_n: 1e308 } }, status: 200 },
  { name: 'pdf/split: every_n 2^53+1', route: '/pdf/split', json: { input: { pdf_base64: onePagePdfRef() }, split: { mode: 'every_n', every_n: 2 ** 53 + 1 } }, status: 200 },
  ...([
    [5, 400],
    ['', 400],
    [null, 200],
    ['../../{basename}', 200],
    [`${CONTROL}{index}`, 200],
    ['{nope}', 400],
    ['{index:99}', 400],
    [LONG, 400],
    ['{basename}', 200],
  ] as const).map(([pattern, status]): Case => ({
    name: `pdf/split: filename_pattern ${JSON.stringify(typeof pattern === 'string' ? pattern.slice(0, 20) : pattern)}`,
    route: '/pdf/split',
    json: { input: { pdf_base64: onePagePdfRef() }, split: { mode: 'each_page' }, options: { filename_pattern: pattern } },
    status,
    code: status === 200 ? undefined : 'INVALID_PARAMETER',
    names: status === 200 ? undefined : 'filename_pattern',
  })),
  { name: 'pdf/split: input missing', route: '/pdf/split', json: { split: { mode: 'each_page' } }, status: 400, code: 'MISSING_PDF' },
  { name: 'pdf/split: input array', route: '/pdf/split', json: { input: [], split: { mode: 'each_page' } }, status: 400, names: 'input' },
  { name: 'pdf/split: pdf_base64 not base64', route: '/pdf/split', json: { input: { pdf_base64: '%%%' }, split: { mode: 'each_page' } }, status: 400, names: 'pdf_base64' },
  // inspect
  { name: 'pdf/inspect: no input', route: '/pdf/inspect', json: {}, status: 400, code: 'MISSING_PDF' },
  { name: 'pdf/inspect: input null', route: '/pdf/inspect', json: { input: null }, status: 400, code: 'MISSING_PDF' },
  { name: 'pdf/inspect: input string', route: '/pdf/inspect', json: { input: 'x.pdf' }, status: 400, names: 'input' },
  { name: 'pdf/inspect: pdf_base64 number', route: '/pdf/inspect', json: { input: { pdf_base64: 12 } }, status: 400, names: 'pdf_base64' },
  { name: 'pdf/inspect: not a PDF', route: '/pdf/inspect', json: { input: { pdf_base64: 'aGVsbG8=' } }, status: 422, code: 'INVALID_PDF' },
  { name: 'pdf/inspect: for other', route: '/pdf/inspect', json: { input: { pdf_base64: onePagePdfRef() }, for: 'print' }, status: 400, code: 'INVALID_PARAMETER', names: 'for' },
  { name: 'pdf/inspect: for edit', route: '/pdf/inspect', json: { input: { pdf_base64: onePagePdfRef() }, for: 'edit' }, status: 200 },
  { name: 'pdf/inspect: s3_key number', route: '/pdf/inspect', json: { s3_key: 5 }, status: 400, names: 's3_key' },
  // webhooks
  ...([
    [{ url: 'http://example.com/h' }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: 5 }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: '' }, 'INVALID_WEBHOOK_URL', 'url'],
    [{}, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: 'https://127.0.0.1/h' }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: 'https://[::ffff:10.0.0.1]/h' }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: 'https://x.internal/h' }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: `https://${CONTROL}/` }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: `https://example.com/${LONG}` }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: 'https://example.com/h', events: [] }, 'INVALID_EVENTS', 'events'],
    [{ url: 'https://example.com/h', events: ['job.nope'] }, 'INVALID_EVENTS', 'events'],
    [{ url: 'https://example.com/h', events: 'job.completed' }, 'INVALID_EVENTS', 'events'],
    [{ url: 'https://example.com/h', events: [1] }, 'INVALID_EVENTS', 'events'],
    [{ url: 'https://example.com/h', is_active: 'true' }, 'INVALID_PARAMETER', 'is_active'],
    [{ url: 'https://example.com/h', name: 5 }, 'INVALID_PARAMETER', 'name'],
    [{ url: 'https://example.com/h', name: LONG }, 'INVALID_PARAMETER', 'name'],
  ] as const).map(([json, code, names]): Case => ({ name: `webhooks create: ${JSON.stringify(json).slice(0, 60)}`, route: '/accounts/me/webhooks', auth: 'token', json, status: 400, code, names })),
  // webhook update (the webhook is made in beforeAll)
  ...([
    [{ url: 'http://example.com/h' }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: null }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: ['https://example.com'] }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ url: 'https://169.254.169.254/latest' }, 'INVALID_WEBHOOK_URL', 'url'],
    [{ events: [] }, 'INVALID_EVENTS', 'events'],
    [{ events: null }, 'INVALID_EVENTS', 'events'],
    [{ events: ['job.completed', {}] }, 'INVALID_EVENTS', 'events'],
    [{ is_active: 'false' }, 'INVALID_PARAMETER', 'is_active'],
    [{ is_active: null }, 'INVALID_PARAMETER', 'is_active'],
    [{ name: [] }, 'INVALID_PARAMETER', 'name'],
  ] as const).map(([json, code, names]): Case => ({ name: `webhooks update: ${JSON.stringify(json).slice(0, 60)}`, method: 'PUT', route: HOOK_ROUTE, auth: 'token', json, status: 400, code, names })),
  { name: 'webhooks update: unknown id with odd characters', method: 'PUT', route: `/accounts/me/webhooks/${CONTROL_URL}`, auth: 'token', json: { is_active: true }, status: 404, code: 'WEBHOOK_NOT_FOUND' },
  // API keys
  ...([5, [], {}, true, LONG, '\u0000\u0001'] as unknown[]).map((name): Case => ({
    name: `api key create: name ${JSON.stringify(name).slice(0, 20)}`,
    route: '/accounts/me/api-keys',
    auth: 'token',
    json: { name },
    status: 400,
    code: 'INVALID_PARAMETER',
    names: 'name',
  })),
  { name: 'api key create: body array', route: '/accounts/me/api-keys', auth: 'token', json: [], status: 400, code: 'INVALID_PARAMETER' },
  // jobs list
  ...(['0', '101', 'abc', '1e2', '-1', '1.5', '', ' 5', '99999999999999999999', 'NaN', 'Infinity', '0x10'] as const).map((limit): Case => ({
    name: `jobs list: limit ${JSON.stringify(limit)}`,
    method: 'GET',
    route: `/jobs?limit=${encodeURIComponent(limit)}`,
    auth: 'token',
    status: 400,
    code: 'INVALID_PARAMETER',
    names: 'limit',
  })),
  ...([
    ['status=running', 'status'],
    ['status=', 'status'],
    ['status=COMPLETED', 'status'],
    ['job_type=pdf', 'job_type'],
    ['job_type=', 'job_type'],
    ['truncated=yes', 'truncated'],
    ['month=2026-13', 'month'],
    ['month=2026-1', 'month'],
    ['next_token=garbage', 'next_token'],
    [`next_token=${'A'.repeat(400)}.${'B'.repeat(43)}`, 'next_token'],
    [`next_token=${CONTROL_URL}`, 'next_token'],
    ['next_token=%ED%A0%80', 'next_token'],
    ['status=%', 'status'],
    ['limit=%FF', 'limit'],
  ] as const).map(([query, names]): Case => ({ name: `jobs list: ${query.slice(0, 40)}`, method: 'GET', route: `/jobs?${query}`, auth: 'token', status: 400, code: 'INVALID_PARAMETER', names })),
  { name: 'jobs list: limit 100 and unknown parameter', method: 'GET', route: '/jobs?limit=100&foo=bar', auth: 'token', status: 200 },
  // account and plans
  { name: 'plans get: odd id', method: 'GET', route: `/plans/${CONTROL_URL}`, auth: 'token', status: 404 },
  { name: 'plans get: long id', method: 'GET', route: `/plans/${'p'.repeat(5000)}`, auth: 'token', status: 404 },
  ...([5, '', null, [], LONG] as unknown[]).map((price_id): Case => ({
    name: `subscription change: price_id ${JSON.stringify(price_id).slice(0, 20)}`,
    route: '/accounts/me/subscription/change',
    auth: 'token',
    json: { price_id },
    status: 400,
    names: 'price_id',
  })),
  { name: 'jobs get: odd id', method: 'GET', route: `/jobs/${CONTROL_URL}`, status: 404, code: 'JOB_NOT_FOUND' },
  // image form
  ...([
    ['{', 'INVALID_OPTIONS_JSON', 'options'],
    ['[]', 'INVALID_PARAMETER', 'options'],
    ['null', undefined, undefined],
    ['{"fit":"stretch"}', 'INVALID_PARAMETER', 'options.fit'],
    ['{"fit":null}', undefined, undefined],
    ['{"margin":{"top":"-5mm"}}', 'INVALID_PARAMETER', 'options.margin.top'],
    ['{"margin":{"top":"10"}}', 'INVALID_PARAMETER', 'options.margin.top'],
    ['{"landscape":"true"}', 'INVALID_PARAMETER', 'options.landscape'],
    ['{"format":"B5"}', 'INVALID_PARAMETER', 'options.format'],
    ['{"format":null,"width":"1e3cm"}', 'INVALID_PARAMETER', 'options.width'],
    ['{"scale":2,"pageRanges":"0"}', undefined, undefined],
  ] as const).map(([options, code, names]): Case => ({
    name: `quickjob image: options ${options}`,
    route: '/quickjob',
    form: [{ name: 'input_type', value: 'image' }, { name: 'images', value: png(8, 8), filename: 'a.png', type: 'image/png' }, { name: 'options', value: options }],
    status: code ? 400 : 200,
    code,
    names,
  })),
  // Margins or paper leaving a fraction of a millimetre: still one page per image.
  ...(['{"margin":{"top":"148mm","bottom":"148.9mm"}}', '{"format":null,"width":"0.1mm","height":"0.1mm","margin":{"top":0,"right":0,"bottom":0,"left":0}}'] as const).map((options): Case => ({
    name: `quickjob image: options ${options}`,
    route: '/quickjob',
    form: [{ name: 'input_type', value: 'image' }, { name: 'images', value: png(8, 8), filename: 'a.png', type: 'image/png' }, { name: 'options', value: options }],
    status: 200,
    pages: '1',
  })),
  { name: 'quickjob image: store yes', route: '/quickjob', form: [{ name: 'input_type', value: 'image' }, { name: 'images', value: png(8, 8), filename: 'a.png', type: 'image/png' }, { name: 'store', value: 'yes' }], status: 400, code: 'INVALID_PARAMETER', names: 'store' },
  { name: 'quickjob image: no images', route: '/quickjob', form: [{ name: 'input_type', value: 'image' }], status: 400, code: 'MISSING_IMAGES' },
  ...([
    ['{', 'page_ranges'],
    ['"1"', 'page_ranges'],
    ['["1"]', 'page_ranges'],
    ['["0", null]', 'page_ranges'],
    ['[1, null]', 'page_ranges'],
  ] as const).map(([ranges, names]): Case => ({
    name: `pdf/merge form: page_ranges ${ranges}`,
    route: '/pdf/merge',
    form: [pdfPart('files'), pdfPart('files'), { name: 'page_ranges', value: ranges }],
    status: 400,
    names,
  })),
  { name: 'pdf/merge form: page_ranges " 1 ", null', route: '/pdf/merge', form: [pdfPart('files'), pdfPart('files'), { name: 'page_ranges', value: '[" 1 ", null]' }], status: 200 },
  { name: 'pdf/merge form: options not JSON', route: '/pdf/merge', form: [pdfPart('files'), pdfPart('files'), { name: 'options', value: '{x' }], status: 400, code: 'INVALID_OPTIONS_JSON', names: 'options' },
  { name: 'pdf/merge form: store yes', route: '/pdf/merge', form: [pdfPart('files'), pdfPart('files'), { name: 'store', value: 'yes' }], status: 400, code: 'INVALID_PARAMETER', names: 'store' },
  { name: 'pdf/split form: bare mode', route: '/pdf/split', form: [pdfPart('file'), { name: 'split', value: 'each_page' }], status: 400, code: 'INVALID_SPLIT_MODE', names: 'split' },
  { name: 'pdf/split form: split array', route: '/pdf/split', form: [pdfPart('file'), { name: 'split', value: '[]' }], status: 400, code: 'INVALID_SPLIT_MODE' },
  { name: 'pdf/split form: no split', route: '/pdf/split', form: [pdfPart('file')], status: 400, code: 'INVALID_SPLIT_MODE' },
  { name: 'pdf/split form: filename_pattern number', route: '/pdf/split', form: [pdfPart('file'), { name: 'split', value: '{"mode":"each_page"}' }, { name: 'options', value: '{"filename_pattern":1}' }], status: 400, code: 'INVALID_PARAMETER', names: 'filename_pattern' },
  { name: 'pdf/split form: two files', route: '/pdf/split', form: [pdfPart('file'), pdfPart('file'), { name: 'split', value: '{"mode":"each_page"}' }], status: 400 },
  { name: 'pdf/inspect form: no file', route: '/pdf/inspect', form: [{ name: 'for', value: 'edit' }], status: 400, code: 'MISSING_PDF' },
  // background PDF jobs and their uploads
  { name: 'pdf/jobs: operation unknown', route: '/pdf/jobs', json: { operation: 'rotate', inputs: [{ s3_key: 'k' }] }, status: 400, names: 'operation' },
  { name: 'pdf/jobs: operation missing', route: '/pdf/jobs', json: { inputs: [{ s3_key: 'k' }] }, status: 400, names: 'operation' },
  { name: 'pdf/jobs: merge of one', route: '/pdf/jobs', json: { operation: 'merge', inputs: [{ s3_key: 'k' }] }, status: 400, code: 'MISSING_PDFS' },
  { name: 'pdf/jobs: s3_key number', route: '/pdf/jobs', json: { operation: 'merge', inputs: [{ s3_key: 5 }, { s3_key: 'k' }] }, status: 400, names: 's3_key' },
  { name: 'pdf/jobs: split every_n 0', route: '/pdf/jobs', json: { operation: 'split', inputs: [{ s3_key: 'k' }], split: { mode: 'every_n', every_n: 0 } }, status: 400, code: 'INVALID_PARAMETER', names: 'every_n' },
  { name: 'pdf/jobs: merge pages 0', route: '/pdf/jobs', json: { operation: 'merge', inputs: [{ s3_key: 'k', pages: '0' }, { s3_key: 'k' }] }, status: 400, code: 'INVALID_PAGE_RANGE', names: 'pages' },
  { name: 'pdf/jobs: key of nobody', route: '/pdf/jobs', json: { operation: 'merge', inputs: [{ s3_key: '../x' }, { s3_key: 'k' }] }, status: 404, code: 'UPLOAD_NOT_FOUND' },
  ...(['9', -1, 0, 2.5, null, [], '1e3'] as unknown[]).map((value): Case => ({
    name: `pdf/upload-url: content_length_bytes ${JSON.stringify(value)}`,
    route: '/pdf/upload-url',
    json: { content_length_bytes: value },
    status: 400,
    code: 'INVALID_PARAMETER',
    names: 'content_length_bytes',
  })),
  { name: 'pdf/upload-url: content_length_bytes 1e308', route: '/pdf/upload-url', json: { content_length_bytes: 1e308 }, status: 400, code: 'PDF_INPUT_TOO_LARGE' },
  // bulk multipart
  { name: 'bulkjob form: paths not JSON', route: '/bulkjob', form: [{ name: 'paths', value: '{' }, { name: 'files', value: '<p>a</p>', filename: 'a.html', type: 'text/html' }], status: 400, code: 'INVALID_BULK_PATHS' },
  { name: 'bulkjob form: paths count', route: '/bulkjob', form: [{ name: 'paths', value: '["a.html","b.html"]' }, { name: 'files', value: '<p>a</p>', filename: 'a.html', type: 'text/html' }], status: 400, code: 'INVALID_BULK_PATHS' },
  { name: 'bulkjob form: paths object', route: '/bulkjob', form: [{ name: 'paths', value: '{"0":"a.html"}' }, { name: 'files', value: '<p>a</p>', filename: 'a.html', type: 'text/html' }], status: 400, code: 'INVALID_BULK_PATHS' },
  { name: 'bulkjob form: path ..', route: '/bulkjob', form: [{ name: 'paths', value: '["../a.html"]' }, { name: 'files', value: '<p>a</p>', filename: 'a.html', type: 'text/html' }], status: 400, code: 'INVALID_BULK_PATH' },
  { name: 'bulkjob form: path number', route: '/bulkjob', form: [{ name: 'paths', value: '[1]' }, { name: 'files', value: '<p>a</p>', filename: 'a.html', type: 'text/html' }], status: 400, code: 'INVALID_BULK_PATH' },
  { name: 'bulkjob form: bundle_type', route: '/bulkjob', form: [{ name: 'bundle_type', value: 'HTML ' }, { name: 'files', value: '<p>a</p>', filename: 'a.html', type: 'text/html' }], status: 400, code: 'INVALID_BUNDLE_TYPE' },
  { name: 'bulkjob form: options not JSON', route: '/bulkjob', form: [{ name: 'options', value: '{' }, { name: 'files', value: '<p>a</p>', filename: 'a.html', type: 'text/html' }], status: 400, names: 'options' },
  // content size and repeated query parameters
  { name: 'quickjob: html over 5 MB', route: '/quickjob', json: { input_type: 'html', html: `<p>${'x'.repeat(5 * 1024 * 1024)}</p>` }, status: 400, code: 'INPUT_SIZE_EXCEEDED', names: 'html' },
  { name: 'jobs list: limit repeated', method: 'GET', route: '/jobs?limit=1&limit=2', auth: 'token', status: 400, code: 'INVALID_PARAMETER', names: 'limit' },
  ...(['abc', '-1', '1e3', '99999999999999999999', '', '%20', '0x1'] as const).map((index): Case => ({
    name: `file download: file_index ${JSON.stringify(index)}`,
    method: 'GET',
    route: `/jobs/@@merge-job@@/files/${index}/download`,
    status: index === '' ? 404 : 400,
    names: index === '' ? undefined : 'file_index',
  })),
  { name: 'file download: file_index past the outputs', method: 'GET', route: '/jobs/@@merge-job@@/files/999999/download', status: 404, code: 'FILE_NOT_FOUND' },
  { name: 'longjob multipart', route: '/longjob', form: [{ name: 'input_type', value: 'html' }, { name: 'html', value: '<p>x</p>' }], status: 400, code: 'INVALID_PARAMETER' },
];

/** A multipart part holding the one-page PDF (its bytes are put in when the request is sent). */
function pdfPart(name: string) {
  return { name, value: PDF_PLACEHOLDER, filename: 'in.pdf', type: 'application/pdf' };
}

function send(c: Case): Promise<Response> {
  const credential = c.auth === 'token' ? { token: user.id_token } : { key: user.api_key };
  const method = c.method ?? 'POST';
  const route = c.route.replace('@@hook@@', hookId).replace('@@merge-job@@', mergeJobId);
  if (c.form) {
    const { body, contentType } = multipart(c.form.map((f) => (f.value === PDF_PLACEHOLDER ? { ...f, value: Buffer.from(onePagePdf, 'base64') } : f)));
    return stack.request(method, route, { ...credential, body, headers: { 'Content-Type': contentType } });
  }
  if (c.raw !== undefined) return stack.request(method, route, { ...credential, body: c.raw, headers: { 'Content-Type': 'application/json' } });
  if (c.json === undefined) return stack.request(method, route, credential);
  const text = JSON.stringify(c.json).split(PDF_PLACEHOLDER).join(onePagePdf);
  return stack.request(method, route, { ...credential, body: text, headers: { 'Content-Type': 'application/json' } });
}

async function creditsMicros(): Promise<number> {
  return (await stack.services.accounts.get(user.account_id))!.credits_micros;
}

async function jobsIn(status: string): Promise<number> {
  const res = await stack.request('GET', `/jobs?status=${status}&limit=100`, { token: user.id_token });
  expect(res.status).toBe(200);
  return (await res.json()).count;
}

describe('request-field fuzz over HTTP', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const before = await creditsMicros();
    const res = await send(c);
    const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
    const summary = `${res.status} ${text.slice(0, 300)}`;
    expect(res.status).not.toBeGreaterThanOrEqual(500);
    expect(summary).toMatch(new RegExp(`^${c.status} `));
    if (c.pages !== undefined) expect(res.headers.get('x-pdf-pages')).toBe(c.pages);
    if (c.status < 400) return;
    const body = JSON.parse(text);
    expect(Object.keys(body)).toEqual(['error']);
    expect(typeof body.error.message).toBe('string');
    expect(body.error.details).toEqual(expect.any(Object));
    if (c.code) expect(body.error.code).toBe(c.code);
    if (c.names) expect(JSON.stringify(body.error.details)).toContain(c.names);
    if (c.message) expect(body.error.message).toMatch(c.message);
    expect(await creditsMicros()).toBe(before);
  });

  it('leaves no refused request queued or processing', async () => {
    expect(await jobsIn('processing')).toBe(0);
    expect(await jobsIn('queued')).toBe(0);
  });

  it('answers a few hundred random quickjob options with a PDF or a 4xx envelope, never a 500', async () => {
    // Mostly values the service takes, with one odd value now and then, so that both answers are reached.
    const goodLength = fc.constantFrom('10mm', '0', '1in', '10 mm', '10MM', '0.5cm', '20px', 0);
    const badLength = fc.oneof(fc.constantFrom('-5mm', '1e3cm', '10', 'px', '', '9999in', 'NaN'), fc.double(), fc.string({ maxLength: 8 }));
    const odd = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.string({ maxLength: 6 }),
      fc.integer(),
      fc.double(),
      fc.constantFrom('true', 'NaN', 'Infinity', 2 ** 53 + 1, 1e308, -0, '1'),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.object({ maxDepth: 1, maxKeys: 2 }),
    );
    const mostly = <T,>(good: fc.Arbitrary<T>) => fc.oneof({ arbitrary: good, weight: 20 }, { arbitrary: odd as fc.Arbitrary<unknown>, weight: 1 });
    const length = fc.oneof({ arbitrary: goodLength, weight: 16 }, { arbitrary: badLength, weight: 1 });
    const options = fc.record(
      {
        format: mostly(fc.constantFrom('A4', 'letter', 'a6', 'Legal', null)),
        margin: mostly(fc.record({ top: length, right: length, bottom: length, left: length }, { requiredKeys: [] })),
        scale: mostly(fc.oneof({ arbitrary: fc.double({ min: 0.1, max: 2, noNaN: true }), weight: 8 }, fc.constantFrom(0, 0.05, 2.01, 3))),
        landscape: mostly(fc.boolean()),
        printBackground: mostly(fc.boolean()),
        preferCSSPageSize: mostly(fc.boolean()),
        displayHeaderFooter: mostly(fc.boolean()),
        width: mostly(length),
        height: mostly(length),
        pageRanges: mostly(fc.oneof({ arbitrary: fc.constantFrom('1-', '-3', ' 1 ', '1', ''), weight: 4 }, fc.constantFrom('3-1', '0', '1,,2', '99999999999999999999', '1-2-3', '2'), fc.stringMatching(/^[0-9 ,-]{0,8}$/))),
        headerTemplate: mostly(fc.oneof(fc.constantFrom('<span style="font-size:8px" class="pageNumber"></span>', ''), fc.string({ maxLength: 20 }))),
        footerTemplate: mostly(fc.oneof(fc.constantFrom('<span style="font-size:8px" class="title"></span>', '<link href=x>'), fc.string({ maxLength: 20 }))),
        extra: odd,
      },
      { requiredKeys: [] },
    );
    const answers: number[] = [];
    await fc.assert(
      fc.asyncProperty(options, async (o) => {
        const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: html(o) });
        const bytes = Buffer.from(await res.arrayBuffer());
        answers.push(res.status);
        if (res.status === 200) return bytes.subarray(0, 5).toString() === '%PDF-';
        if (res.status < 400 || res.status >= 500) return false;
        const body = JSON.parse(bytes.toString('utf8'));
        return typeof body.error?.code === 'string' && typeof body.error.message === 'string' && typeof body.error.details === 'object';
      }),
      { seed: 20261124, numRuns: 300 },
    );
    // The generator reaches both sides.
    expect(answers.filter((s) => s === 200).length).toBeGreaterThan(30);
    expect(answers.filter((s) => s === 400).length).toBeGreaterThan(30);
    expect(await jobsIn('processing')).toBe(0);
  }, 120_000);
});
