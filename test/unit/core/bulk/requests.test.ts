import { z } from 'zod';
import { isConvertible } from '../../../../functions/core/bulk/limits';
import { isIgnoredEntry, outputPaths, pathProblem, requestPath } from '../../../../functions/core/bulk/paths';
import { bulkJobFormSchema, bulkJobJsonBodySchema, bulkUploadUrlBodySchema, parseBulkForm, parseBulkJson, parseBulkUploadSize } from '../../../../functions/core/bulk/requests';
import { MARKDOWN_DEFAULT_MARGIN } from '../../../../functions/core/render/markdown';
import { lengthToInches } from '../../../../functions/core/render/options';
import { refusal } from '../../../support/errors';
import { runIsolated } from '../../../support/hang-guard';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

/** The refusal's code and details alone, to compare them exactly. */
function refused(fn: () => unknown) {
  const { code, details } = refusal(fn);
  return { code, details };
}

describe('paths', () => {
  it.each([
    ['', 'empty'],
    ['./', 'empty'],
    ['/etc/passwd', 'absolute'],
    ['C:\\x.html', 'backslash'],
    ['c:/x.html', 'absolute'],
    ['a/../../b.html', 'parent_reference'],
    ['..', 'parent_reference'],
    ['a\\b.html', 'backslash'],
    ['a\u0007.html', 'control_character'],
    ['a\u007f.html', 'control_character'],
    ['a\u009bb.html', 'control_character'],
    ['a\u0085b.html', 'control_character'],
    ['invoice\u202Elmth.exe', 'control_character'],
    ['a\u2066b\u2069.html', 'control_character'],
    ['a\u2028b.html', 'control_character'],
    ['\ud800.html', 'lone_surrogate'],
    ['docs/a\udfffb.html', 'lone_surrogate'],
    ['\udc00\ud800.html', 'lone_surrogate'],
    ['x'.repeat(1025), 'too_long'],
  ])('%j is refused (%s)', (path, problem) => {
    expect(pathProblem(path)).toBe(problem);
  });

  it('normalises acceptable paths and refuses folders in requests', () => {
    expect(requestPath('./docs//a.html', 'files[0].path')).toBe('docs/a.html');
    expect(requestPath('é/\ud83d\ude00.html', 'files[0].path')).toBe('é/\ud83d\ude00.html');
    expect(refused(() => requestPath('\ud800.html', 'files[0].path'))).toMatchObject({ code: 'INVALID_BULK_PATH', details: { parameter: 'files[0].path', reason: 'lone_surrogate' } });
    expect(requestPath('..a/b..html', 'p')).toBe('..a/b..html');
    expect(refused(() => requestPath('docs/', 'files[0].path'))).toEqual({ code: 'INVALID_BULK_PATH', details: { parameter: 'files[0].path', path: 'docs/', reason: 'directory' } });
    expect(refused(() => requestPath(7, 'files[1].path'))).toMatchObject({ code: 'INVALID_BULK_PATH', details: { parameter: 'files[1].path' } });
  });

  it('ignores macOS litter only', () => {
    expect(['__MACOSX/a.html', 'x/__MACOSX/y.css', '._a.html', 'd/._b.png', '.DS_Store', 'd/.DS_Store'].every(isIgnoredEntry)).toBe(true);
    expect(['a.html', '_MACOSX/a.html', 'a._b.html', '.DS_Store.html', 'x.DS_Store'].some(isIgnoredEntry)).toBe(false);
  });

  it('knows convertible files by extension, in any case', () => {
    expect(['a.html', 'b.HTM', 'c/d.Html'].every((p) => isConvertible(p, 'html'))).toBe(true);
    expect(['a.md', 'b.MARKDOWN'].every((p) => isConvertible(p, 'markdown'))).toBe(true);
    expect(['a.md', 'a.html.txt', 'x.xhtml', '.html'].some((p) => isConvertible(p, 'html'))).toBe(false);
  });

  it('names outputs after their inputs with .pdf, keeping every name distinct', () => {
    expect(outputPaths(['a.html', 'docs/b.htm', 'a.htm', 'a.HTML'], 'html')).toEqual(['a.pdf', 'docs/b.pdf', 'a.htm.pdf', 'a.HTML.pdf']);
    expect(outputPaths(['a.md', 'a.markdown', 'a.md.pdf.md'], 'markdown')).toEqual(['a.pdf', 'a.markdown.pdf', 'a.md.pdf.pdf']);
    expect(outputPaths(['x.html', 'x.htm', 'x.htm.html'], 'html')).toEqual(['x.pdf', 'x.htm.pdf', 'x.htm.html.pdf']);
  });

  it('gives outputs names Windows can create: no reserved characters, device names or trailing dots', () => {
    expect(outputPaths(['ab:c.html', 'docs/C:/x.html', 'NUL.html', 'com1.page.html', 'q?"<>|*.html', 'dir. /a.html', 'ab_c.html', 'nullable.html'], 'html')).toEqual([
      'ab_c.pdf',
      'docs/C_/x.pdf',
      '_NUL.pdf',
      '_com1.page.pdf',
      'q______.pdf',
      'dir_/a.pdf',
      'ab_c.html.pdf',
      'nullable.pdf',
    ]);
  });

  it('keeps names distinct where case and Unicode normalisation do not count (macOS, Windows)', () => {
    expect(outputPaths(['Report.html', 'report.html', 'REPORT.HTML'], 'html')).toEqual(['Report.pdf', 'report.html.pdf', 'REPORT.HTML-2.pdf']);
    expect(outputPaths(['caf\u00e9.html', 'cafe\u0301.html'], 'html')).toEqual(['caf\u00e9.pdf', 'cafe\u0301.html.pdf']);
    expect(outputPaths(['X.html', 'x.pdf/y.html'], 'html')).toEqual(['X.html.pdf', 'x.pdf/y.pdf']);
    expect(outputPaths(['Manifest.json/a.html'], 'html')).toEqual(['_Manifest.json/a.pdf']);
  });

  it('never names an output after a folder of another output, or after the manifest (the ZIP must unzip)', () => {
    expect(outputPaths(['x.html', 'x.pdf/y.html'], 'html')).toEqual(['x.html.pdf', 'x.pdf/y.pdf']);
    expect(outputPaths(['x.pdf/y.html', 'x.html'], 'html')).toEqual(['x.pdf/y.pdf', 'x.html.pdf']);
    expect(outputPaths(['index.html', 'manifest.json/x.html'], 'html')).toEqual(['index.pdf', '_manifest.json/x.pdf']);
    expect(outputPaths(['manifest.json.html'], 'html')).toEqual(['manifest.json.pdf']);
    // Deeper folders too.
    expect(outputPaths(['a/b.html', 'a/b.pdf/c/d.html'], 'html')).toEqual(['a/b.html.pdf', 'a/b.pdf/c/d.pdf']);
  });
});

describe('POST /bulkjob JSON', () => {
  it('takes one of s3_key, zip_base64 or files, with html as the default bundle type', () => {
    expect(parseBulkJson({ s3_key: 'uploads/a/bulk/x.zip' })).toMatchObject({ bundle_type: 'html', input: { kind: 's3', key: 'uploads/a/bulk/x.zip' } });
    expect(parseBulkJson({ bundle_type: 'markdown', zip_base64: `data:application/zip;base64,${b64('PK')}` })).toMatchObject({ bundle_type: 'markdown', input: { kind: 'zip', bytes: Buffer.from('PK') } });
    const files = parseBulkJson({ files: [{ path: 'a.html', content_base64: b64('<p>a</p>') }, { path: './css/s.css', content_base64: '' }] });
    expect(files.input).toEqual({ kind: 'files', files: [{ path: 'a.html', bytes: Buffer.from('<p>a</p>') }, { path: 'css/s.css', bytes: Buffer.alloc(0) }] });
  });

  it('applies only the listed options (others ignored), Markdown getting its default margins', () => {
    const r = parseBulkJson({ bundle_type: 'markdown', s3_key: 'k', options: { landscape: true, format: 'Letter', store: true, foo: 1 } });
    expect(r.options).toMatchObject({ landscape: true, paperWidthIn: 8.5 });
    expect(r.options.margin.top).toBeCloseTo(lengthToInches(MARKDOWN_DEFAULT_MARGIN.top)!);
    expect(refused(() => parseBulkJson({ s3_key: 'k', options: { scale: 7 } }))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'options.scale' } });
  });

  it.each([
    ['an unknown bundle_type', { bundle_type: 'pdf', s3_key: 'k' }, 'INVALID_BUNDLE_TYPE'],
    ['no input', { bundle_type: 'html' }, 'INVALID_BULK_INPUT'],
    ['an empty files array', { files: [] }, 'INVALID_BULK_INPUT'],
    ['an empty zip_base64', { zip_base64: '' }, 'INVALID_BULK_INPUT'],
    ['two inputs', { s3_key: 'k', zip_base64: b64('PK') }, 'INVALID_BULK_INPUT'],
    ['three inputs', { s3_key: 'k', zip_base64: b64('PK'), files: [{ path: 'a.html', content_base64: '' }] }, 'INVALID_BULK_INPUT'],
    ['an absolute path', { files: [{ path: '/a.html', content_base64: '' }] }, 'INVALID_BULK_PATH'],
    ['an empty path', { files: [{ path: '', content_base64: '' }] }, 'INVALID_BULK_PATH'],
    ['a .. path', { files: [{ path: 'x/../../a.html', content_base64: '' }] }, 'INVALID_BULK_PATH'],
    ['a duplicate path', { files: [{ path: 'a.html', content_base64: '' }, { path: './a.html', content_base64: '' }] }, 'INVALID_BULK_PATH'],
    ['invalid base64 in zip_base64', { zip_base64: 'not base64!' }, 'INVALID_BASE64'],
    ['invalid base64 in a file', { files: [{ path: 'a.html', content_base64: '@@@' }] }, 'INVALID_BASE64'],
    ['a non-string zip_base64', { zip_base64: 12 }, 'INVALID_BASE64'],
    ['a ZIP over 4 MB', { zip_base64: b64(Buffer.alloc(4 * 1024 * 1024 + 1)) }, 'BULK_INLINE_TOO_LARGE'],
    ['files over 4 MB in total', { files: [{ path: 'a.html', content_base64: b64(Buffer.alloc(3 * 1024 * 1024)) }, { path: 'b.html', content_base64: b64(Buffer.alloc(1024 * 1024 + 1)) }] }, 'BULK_INLINE_TOO_LARGE'],
    ['a body that is not an object', [1, 2], 'INVALID_PARAMETER'],
  ])('refuses %s (%s)', (_name, body, code) => {
    expect(refused(() => parseBulkJson(body)).code).toBe(code);
  });

  it('accepts exactly 4 MB inline', () => {
    expect(parseBulkJson({ zip_base64: b64(Buffer.alloc(4 * 1024 * 1024)) }).input).toMatchObject({ kind: 'zip' });
    const files = [{ path: 'a.html', content_base64: b64(Buffer.alloc(3 * 1024 * 1024)) }, { path: 'b.html', content_base64: b64(Buffer.alloc(1024 * 1024)) }];
    expect(parseBulkJson({ files }).input).toMatchObject({ kind: 'files' });
  });
});

describe('POST /bulkjob multipart', () => {
  const file = (filename: string | null, data = 'x') => ({ filename, data: Buffer.from(data) });

  it('places files at their paths, or at the top level under their own names without paths', () => {
    expect(parseBulkForm({ files: [file('a.html'), file('s.css')], paths: '["docs/a.html","css/s.css"]' }).input).toMatchObject({
      files: [{ path: 'docs/a.html' }, { path: 'css/s.css' }],
    });
    expect(parseBulkForm({ files: [file('C:\\Users\\me\\a.html'), file('dir/b.md')], bundle_type: 'markdown' })).toMatchObject({
      bundle_type: 'markdown',
      input: { files: [{ path: 'a.html' }, { path: 'b.md' }] },
    });
  });

  it.each([
    ['paths that are not JSON', { files: [file('a.html')], paths: 'a.html' }, 'INVALID_BULK_PATHS'],
    ['paths that are not an array', { files: [file('a.html')], paths: '{"a":1}' }, 'INVALID_BULK_PATHS'],
    ['fewer paths than files', { files: [file('a.html'), file('b.html')], paths: '["a.html"]' }, 'INVALID_BULK_PATHS'],
    ['a path with ..', { files: [file('a.html')], paths: '["../a.html"]' }, 'INVALID_BULK_PATH'],
    ['two files with one name', { files: [file('a.html'), file('a.html')] }, 'INVALID_BULK_PATH'],
    ['a file without a name', { files: [file(null)] }, 'INVALID_BULK_PATH'],
    ['no files', { files: [] }, 'INVALID_BULK_INPUT'],
    ['files and an s3_key field', { files: [file('a.html')], s3_key: 'k' }, 'INVALID_BULK_INPUT'],
    ['options that are not JSON', { files: [file('a.html')], options: '{nope' }, 'INVALID_OPTIONS_JSON'],
    ['a bad bundle_type', { files: [file('a.html')], bundle_type: 'docx' }, 'INVALID_BUNDLE_TYPE'],
  ])('refuses %s (%s)', (_name, form, code) => {
    expect(refused(() => parseBulkForm(form)).code).toBe(code);
  });

  it('takes up to 1000 files and refuses 1001 with BULK_ZIP_TOO_MANY_ENTRIES (the form parser lets 1010 parts through)', () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => file(`f${i}.html`));
    expect(parseBulkForm({ files: files(1000) }).input).toMatchObject({ kind: 'files', files: expect.arrayContaining([{ path: 'f999.html', bytes: Buffer.from('x') }]) });
    expect(refused(() => parseBulkForm({ files: files(1001) }))).toEqual({ code: 'BULK_ZIP_TOO_MANY_ENTRIES', details: { parameter: 'files', entries: 1001, max_entries: 1000 } });
  });
});

describe('POST /bulkjob/upload-url body', () => {
  it('needs a whole number of bytes within the plan limit', () => {
    expect(parseBulkUploadSize({ content_length_bytes: 50 * 1024 * 1024 }, 50 * 1024 * 1024)).toBe(50 * 1024 * 1024);
    expect(refused(() => parseBulkUploadSize({ content_length_bytes: 50 * 1024 * 1024 + 1 }, 50 * 1024 * 1024))).toEqual({
      code: 'BULK_ZIP_TOO_LARGE',
      details: { size_bytes: 50 * 1024 * 1024 + 1, max_bytes: 50 * 1024 * 1024 },
    });
    for (const body of [{}, { content_length_bytes: 0 }, { content_length_bytes: 1.5 }, { content_length_bytes: '10' }, null]) {
      expect(refused(() => parseBulkUploadSize(body, 100))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'content_length_bytes' } });
    }
    // Past 2^53 a number is no longer a whole number to JavaScript: still too large, not malformed.
    expect(refused(() => parseBulkUploadSize({ content_length_bytes: 1e20 }, 100))).toEqual({ code: 'BULK_ZIP_TOO_LARGE', details: { size_bytes: 1e20, max_bytes: 100 } });
  });
});

describe('POST /bulkjob problems in the spec order', () => {
  const file = (path: unknown, content: unknown = b64('x')) => ({ path, content_base64: content });

  it('takes null as the default of the inputs, options and bundle_type', () => {
    expect(parseBulkJson({ s3_key: 'k', zip_base64: null, files: null, options: null })).toMatchObject({ bundle_type: 'html', input: { kind: 's3', key: 'k' } });
    expect(parseBulkJson({ s3_key: 'k', files: [] }).bundle_type).toBe('html');
    expect(parseBulkJson({ bundle_type: null, s3_key: 'k' })).toMatchObject({ bundle_type: 'html' });
    expect(refused(() => parseBulkJson({ bundle_type: '', s3_key: 'k' }))).toEqual({ code: 'INVALID_BUNDLE_TYPE', details: { bundle_type: '', allowed: ['html', 'markdown'] } });
    expect(refused(() => parseBulkJson({ bundle_type: 'HTML', s3_key: 'k' }))).toMatchObject({ code: 'INVALID_BUNDLE_TYPE', details: { bundle_type: 'HTML' } });
  });

  it('checks bundle_type, then that one input was sent, then the options, then the input', () => {
    expect(refused(() => parseBulkJson({ bundle_type: 5, options: 'x' }))).toEqual({ code: 'INVALID_BUNDLE_TYPE', details: { bundle_type: 'number', allowed: ['html', 'markdown'] } });
    expect(refused(() => parseBulkJson({ s3_key: 5, zip_base64: '@', options: 'x' }))).toMatchObject({ code: 'INVALID_BULK_INPUT', details: { inputs_sent: 2 } });
    expect(refused(() => parseBulkJson({ zip_base64: '@', options: 'x' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'options' } });
    // Options that are valid one by one but leave no room on the page come before the input's problems too.
    expect(refused(() => parseBulkJson({ files: [file('/abs.html')], options: { margin: { top: '200in' } } }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'options.margin' } });
    expect(refused(() => parseBulkJson({ s3_key: '' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 's3_key' } });
    expect(refused(() => parseBulkJson({ files: 'x' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'files' } });
  });

  it('reads files one by one: shape, path, data, the running 4 MB total; duplicates last', () => {
    expect(refused(() => parseBulkJson({ files: [file('a.html'), 7] }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'files[1]', file_index: 1 } });
    expect(refused(() => parseBulkJson({ files: [file('a.html', '@@'), file('../b.html')] }))).toEqual({ code: 'INVALID_BASE64', details: { parameter: 'files[0].content_base64' } });
    expect(refused(() => parseBulkJson({ files: [file('a.html', 5)] }))).toEqual({ code: 'INVALID_BASE64', details: { parameter: 'files[0].content_base64' } });
    expect(refused(() => parseBulkJson({ files: [file('a.html', null)] }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'files[0].content_base64', file_index: 0 } });
    expect(refused(() => parseBulkJson({ files: [file(5, '@@')] }))).toMatchObject({ code: 'INVALID_BULK_PATH', details: { parameter: 'files[0].path' } });
    const big = b64(Buffer.alloc(3 * 1024 * 1024));
    expect(refused(() => parseBulkJson({ files: [file('a.html', big), file('b.html', big), file('/c.html', '@')] }))).toEqual({
      code: 'BULK_INLINE_TOO_LARGE',
      details: { max_bytes: 4 * 1024 * 1024, size_bytes: 6 * 1024 * 1024 },
    });
    // size_bytes is the decoded total of the files, not the size of the file that crossed the limit: a small last
    // file over a nearly full budget must not be reported as under max_bytes.
    const nearlyFull = b64(Buffer.alloc(4 * 1024 * 1024 - 5));
    expect(refused(() => parseBulkJson({ files: [file('a.css', nearlyFull), file('b.html', b64('<p>hello</p>')), file('c.html', b64('<p>x</p>'))] }))).toEqual({
      code: 'BULK_INLINE_TOO_LARGE',
      details: { max_bytes: 4 * 1024 * 1024, size_bytes: 4 * 1024 * 1024 - 5 + 12 + 8 },
    });
    expect(refused(() => parseBulkJson({ files: [file('a.html'), file('a.html'), file('b.html', '@')] })).code).toBe('INVALID_BASE64');
  });

  it('refuses s3_key or zip_base64 sent in a form as a second input', () => {
    const form = { files: [{ filename: 'a.html', data: Buffer.from('x') }] };
    expect(refused(() => parseBulkForm({ ...form, zip_base64: '' }))).toMatchObject({ code: 'INVALID_BULK_INPUT', details: { inputs_sent: 2 } });
    expect(refused(() => parseBulkForm({ files: [], s3_key: 'k' }))).toMatchObject({ code: 'INVALID_BULK_INPUT', details: { inputs_sent: 1 } });
    // One input sent, in the wrong place: the message must not say "not several".
    const only = refusal(() => parseBulkForm({ files: [], s3_key: 'k' }));
    expect(only.message).not.toMatch(/not several/);
    expect(only.message).toMatch(/JSON body/);
    expect(refusal(() => parseBulkForm({ ...form, s3_key: 'k' })).message).toMatch(/not several/);
    expect(refused(() => parseBulkForm({ ...form, options: '{"scale": 9}', paths: '[' }))).toEqual({ code: 'INVALID_PARAMETER', details: { parameter: 'options.scale' } });
    expect(parseBulkForm({ ...form, options: ' ' })).toMatchObject({ bundle_type: 'html', input: { files: [{ path: 'a.html' }] } });
    // An empty bundle_type field is no bundle type, as in JSON.
    expect(refused(() => parseBulkForm({ ...form, bundle_type: '' }))).toEqual({ code: 'INVALID_BUNDLE_TYPE', details: { bundle_type: '', allowed: ['html', 'markdown'] } });
  });
});

describe('POST /bulkjob JSON with a hostile files array', () => {
  it('refuses more than 1000 files before reading them (two million {} took 37 s)', () => {
    const outcome = runIsolated(`
      const { parseBulkJson } = load('functions/core/bulk/requests.ts');
      try { parseBulkJson({ bundle_type: 'html', files: new Array(2_000_000).fill({}) }); console.log('null'); } catch (err) { console.log(JSON.stringify({ code: err.code, details: err.details })); }
    `) as { code: string; details: Record<string, unknown> };
    expect(outcome).toEqual({ code: 'BULK_ZIP_TOO_MANY_ENTRIES', details: { parameter: 'files', max_entries: 1000, entries: 2_000_000 } });
    const files = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `f${i}.html`, content_base64: '' }));
    expect(refused(() => parseBulkJson({ files: files(1001) }))).toMatchObject({ code: 'BULK_ZIP_TOO_MANY_ENTRIES', details: { parameter: 'files', entries: 1001 } });
    expect(parseBulkJson({ files: files(1000) }).input).toMatchObject({ kind: 'files', files: expect.arrayContaining([{ path: 'f999.html', bytes: Buffer.alloc(0) }]) });
    // A field before files still comes first; checks across fields (one input, options) wait for a readable files.
    expect(refused(() => parseBulkJson({ bundle_type: 'pdf', files: files(1001) })).code).toBe('INVALID_BUNDLE_TYPE');
    expect(refused(() => parseBulkJson({ files: files(1001), s3_key: 'k' })).code).toBe('BULK_ZIP_TOO_MANY_ENTRIES');
  });
});

describe('the bulk schemas as the OpenAPI document reads them', () => {
  it.each(Object.entries({ bulkJobJsonBodySchema, bulkJobFormSchema, bulkUploadUrlBodySchema }))('%s converts to JSON Schema with its fields described', (_name, schema) => {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
    expect(Object.entries(json.properties).filter(([, p]) => !p.description)).toEqual([]);
  });
});
