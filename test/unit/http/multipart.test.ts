import fc from 'fast-check';
import { ServiceError } from '../../../functions/core/errors';
import { boundaryOf, headerParams, isMultipart, parseMultipart } from '../../../functions/http/multipart';
import { refusal } from '../../support/errors';

const LIMITS = { maxParts: 10, maxFileBytes: 1000, maxFieldBytes: 100 };
const CT = 'multipart/form-data; boundary=XyZ';

function body(parts: { headers: string[]; data: string | Buffer }[], boundary = 'XyZ', closing = '--\r\n'): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${p.headers.join('\r\n')}\r\n\r\n`));
    chunks.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}${closing}`));
  return Buffer.concat(chunks);
}


describe('multipart/form-data parser', () => {
  it('reads fields and files, binary-safe, in order, with quoted and RFC 5987 file names', () => {
    const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff]);
    const form = parseMultipart(
      body([
        { headers: ['Content-Disposition: form-data; name="files"; filename="a \\"b\\".pdf"', 'Content-Type: application/pdf'], data: pdf },
        { headers: ["Content-Disposition: form-data; name=files; filename=\"fallback.pdf\"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf"], data: 'x' },
        { headers: ['content-disposition: form-data; name="options"'], data: '{"title":"Ünïcode"}' },
      ]),
      CT,
      LIMITS,
    );
    const files = form.all('files');
    expect(files.map((f) => f.filename)).toEqual(['a "b".pdf', 'Résumé.pdf']);
    expect(files[0].data.equals(pdf)).toBe(true);
    expect(files[0].contentType).toBe('application/pdf');
    expect(form.text('options')).toBe('{"title":"Ünïcode"}');
    expect(form.text('missing')).toBeUndefined();
  });

  it('reads RFC 5987 ISO-8859-1 file names, and keeps a part whose name cannot be read a file', () => {
    const form = parseMultipart(
      body([
        { headers: ["Content-Disposition: form-data; name=files; filename*=iso-8859-1''caf%E9.pdf"], data: 'x'.repeat(500) },
        { headers: ["Content-Disposition: form-data; name=files; filename*=UTF-8''%ED%A0%80.pdf"], data: 'x'.repeat(500) },
        { headers: ["Content-Disposition: form-data; name=files; filename*=koi8-r''%C1.pdf"], data: 'x'.repeat(500) },
      ]),
      CT,
      LIMITS,
    );
    // Files of 500 bytes: over the 100-byte field limit, within the 1000-byte file limit.
    expect(form.all('files').map((f) => f.filename)).toEqual(['café.pdf', '', '']);
  });

  it('reads a lone % in an RFC 5987 file name as itself, and no charset but UTF-8 and ISO-8859-1', () => {
    const form = parseMultipart(
      body([
        { headers: ["Content-Disposition: form-data; name=files; filename*=UTF-8''100%25%20sure%.pdf"], data: 'x' },
        // ASCII would decode the same in UTF-8: a charset the parser does not know is still not read.
        { headers: ["Content-Disposition: form-data; name=files; filename*=koi8-r''plain.pdf"], data: 'x' },
      ]),
      CT,
      LIMITS,
    );
    expect(form.all('files').map((f) => f.filename)).toEqual(['100% sure%.pdf', '']);
  });

  it('does not read a continuation section sent both plain and extended', () => {
    const form = parseMultipart(
      body([{ headers: ["Content-Disposition: form-data; name=files; filename*0*=UTF-8''a; filename*1=\"b.pdf\"; filename*1*=c.pdf"], data: 'x' }]),
      CT,
      LIMITS,
    );
    expect(form.all('files').map((f) => f.filename)).toEqual(['']);
  });

  it('reads file names split into RFC 2231 continuations, and keeps such a part a file when they cannot be read', () => {
    const form = parseMultipart(
      body([
        { headers: ["Content-Disposition: form-data; name=files; filename*0*=UTF-8''R%C3%A9sum; filename*1*=%C3%A9; filename*2=\" 2026.pdf\""], data: 'x'.repeat(500) },
        { headers: ['Content-Disposition: form-data; name=files; filename*0="quarterly-"; filename*1="report.pdf"'], data: 'x'.repeat(500) },
        { headers: ["Content-Disposition: form-data; name=files; filename*0*=koi8-r''%C1; filename*1*=.pdf"], data: 'x'.repeat(500) },
        // Sections are joined up to the first missing one.
        { headers: ['Content-Disposition: form-data; name=files; filename*0="a.pdf"; filename*2="ignored"'], data: 'x'.repeat(500) },
      ]),
      CT,
      LIMITS,
    );
    // Files of 500 bytes: read as text fields they were over the 100-byte field limit.
    expect(form.all('files').map((f) => f.filename)).toEqual(['Résumé 2026.pdf', 'quarterly-report.pdf', '', 'a.pdf']);
  });

  it('round-trips arbitrary field values and file bytes', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { minLength: 1, maxLength: 5 }), (blobs) => {
        const boundary = 'b0undary-7f3a';
        const form = parseMultipart(
          body(blobs.map((b, i) => ({ headers: [`Content-Disposition: form-data; name="f${i}"; filename="f${i}.bin"`], data: Buffer.from(b) })), boundary),
          `multipart/form-data; boundary="${boundary}"`,
          LIMITS,
        );
        blobs.forEach((b, i) => expect(form.all(`f${i}`)[0].data.equals(Buffer.from(b))).toBe(true));
      }),
    );
  });

  it.each([
    ['no boundary', 'multipart/form-data', body([]), 'no_boundary'],
    ['not multipart', 'application/json', body([]), 'not_multipart'],
    ['a body without the opening boundary', CT, Buffer.from('hello'), 'no_opening_boundary'],
    ['a truncated body', CT, body([{ headers: ['Content-Disposition: form-data; name="a"'], data: 'x' }]).subarray(0, 52), 'unterminated'],
    ['a part without Content-Disposition', CT, body([{ headers: ['Content-Type: text/plain'], data: 'x' }]), 'no_disposition'],
    ['a part without a name', CT, body([{ headers: ['Content-Disposition: form-data; filename="a.pdf"'], data: 'x' }]), 'no_name'],
    ['a non-form-data disposition', CT, body([{ headers: ['Content-Disposition: attachment; name="a"'], data: 'x' }]), 'bad_disposition'],
    ['a broken header line', CT, body([{ headers: ['Content-Disposition form-data'], data: 'x' }]), 'bad_header'],
    ['an unclosed quote', CT, body([{ headers: ['Content-Disposition: form-data; name="a'], data: 'x' }]), 'bad_header'],
    ['data after the end', CT, Buffer.concat([body([{ headers: ['Content-Disposition: form-data; name="a"'], data: 'x' }]), Buffer.from('junk')]), 'trailing_data'],
    ['headers without a blank line', CT, Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a"\r\nx'), 'unterminated_headers'],
    ['two Content-Disposition headers', CT, body([{ headers: ['Content-Disposition: form-data; name="a"', 'Content-Disposition: form-data; name="b"'], data: 'x' }]), 'bad_header'],
    ['a parameter sent twice', CT, body([{ headers: ['Content-Disposition: form-data; name="a"; name="b"'], data: 'x' }]), 'bad_header'],
    ['a header line without a name', CT, body([{ headers: ['Content-Disposition: form-data; name="a"', ': x'], data: 'x' }]), 'bad_header'],
    ['an empty field name', CT, body([{ headers: ['Content-Disposition: form-data; name=""'], data: 'x' }]), 'no_name'],
    ['a parameter name with a space', CT, body([{ headers: ['Content-Disposition: form-data; na me="a"'], data: 'x' }]), 'bad_header'],
    ['text after a quoted parameter', CT, body([{ headers: ['Content-Disposition: form-data; name="a"b'], data: 'x' }]), 'bad_header'],
    ['a boundary that only starts a longer line', CT, Buffer.from('--XyZab\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--XyZ--\r\n'), 'bad_boundary_line'],
  ])('answers %s with 400 INVALID_MULTIPART', (_name, contentType, data, reason) => {
    const err = refusal(() => parseMultipart(data, contentType, LIMITS));
    expect(err.code).toBe('INVALID_MULTIPART');
    expect(err.details.reason).toBe(reason);
  });

  it('enforces part counts and sizes while parsing, or lets the caller answer them', () => {
    const many = body(Array.from({ length: 11 }, (_, i) => ({ headers: [`Content-Disposition: form-data; name="f${i}"`], data: 'x' })));
    expect(refusal(() => parseMultipart(many, CT, LIMITS))).toMatchObject({ message: 'The form has more than 10 parts; send fewer fields and files.', details: { reason: 'too_many_parts', limit: 10 } });
    const bigField = body([{ headers: ['Content-Disposition: form-data; name="a"'], data: 'x'.repeat(101) }]);
    // A limit is answered with what to send instead, not with advice on how to encode a form.
    expect(refusal(() => parseMultipart(bigField, CT, LIMITS))).toMatchObject({ message: 'Field "a" is larger than 100 bytes; send a shorter value.', details: { reason: 'too_many_bytes', field: 'a', limit: 100 } });
    const bigFile = body([{ headers: ['Content-Disposition: form-data; name="f"; filename="f.pdf"'], data: 'x'.repeat(1001) }]);
    const custom = refusal(() => parseMultipart(bigFile, CT, { ...LIMITS, refuse: (limit) => (limit === 'file_bytes' ? new ServiceError('PDF_INPUT_TOO_LARGE', 'too big') : undefined) }));
    expect(custom.code).toBe('PDF_INPUT_TOO_LARGE');
    const total = body([1, 2].map((i) => ({ headers: [`Content-Disposition: form-data; name="f"; filename="${i}.pdf"`], data: 'x'.repeat(600) })));
    expect(refusal(() => parseMultipart(total, CT, { ...LIMITS, maxTotalFileBytes: 1000 }))).toMatchObject({
      message: 'The files total more than 1000 bytes; send fewer or smaller files.',
      details: { reason: 'too_many_bytes' },
    });
    expect(refusal(() => parseMultipart(bigFile, CT, LIMITS)).message).toBe('File "f.pdf" is larger than 1000 bytes; send a smaller file.');
  });

  it('takes limits as inclusive: exactly the limit is accepted, one byte more refused', () => {
    const files = (second: number) => body([600, second].map((n, i) => ({ headers: [`Content-Disposition: form-data; name="f"; filename="${i}.pdf"`], data: 'x'.repeat(n) })));
    expect(parseMultipart(files(400), CT, { ...LIMITS, maxTotalFileBytes: 1000 }).all('f')).toHaveLength(2);
    expect(refusal(() => parseMultipart(files(401), CT, { ...LIMITS, maxTotalFileBytes: 1000 })).details).toMatchObject({ reason: 'too_many_bytes', limit: 1000 });
    // Headers of one part: the default 8 KB, counted up to the blank line that ends them.
    const header = (length: number) => {
      const line = 'Content-Disposition: form-data; name="a"';
      return body([{ headers: [line, `X-Pad: ${'p'.repeat(length - line.length - 2 - 'X-Pad: '.length)}`], data: 'x' }]);
    };
    expect(parseMultipart(header(8192), CT, LIMITS).text('a')).toBe('x');
    expect(refusal(() => parseMultipart(header(8193), CT, LIMITS)).details).toMatchObject({ reason: 'too_many_bytes', limit: 8192 });
  });

  it('takes file and field sizes as inclusive: exactly the limit is accepted, one byte more refused', () => {
    const part = (filename: string | null, n: number) =>
      body([{ headers: [`Content-Disposition: form-data; name="p"${filename === null ? '' : `; filename="${filename}"`}`], data: 'x'.repeat(n) }]);
    expect(parseMultipart(part('f.pdf', 1000), CT, LIMITS).all('p')[0].data).toHaveLength(1000);
    expect(refusal(() => parseMultipart(part('f.pdf', 1001), CT, LIMITS)).details).toMatchObject({ reason: 'too_many_bytes', limit: 1000 });
    expect(parseMultipart(part(null, 100), CT, LIMITS).text('p')).toHaveLength(100);
    expect(refusal(() => parseMultipart(part(null, 101), CT, LIMITS)).details).toMatchObject({ reason: 'too_many_bytes', limit: 100 });
  });

  it('accepts a boundary of 70 characters, padding after a boundary, and blank lines after the closing one', () => {
    const long = 'b'.repeat(70);
    expect(boundaryOf(`multipart/form-data; boundary=${long}`)).toBe(long);
    const field = [{ headers: ['Content-Disposition: form-data; name="a"'], data: 'x' }];
    // RFC 2046: transport padding (spaces, tabs) may follow a boundary before its line break.
    const padded = Buffer.from(body(field).toString().replace('--XyZ\r\n', '--XyZ \t\r\n'));
    expect(parseMultipart(padded, CT, LIMITS).text('a')).toBe('x');
    expect(parseMultipart(body(field, 'XyZ', '--\r\n\r\n'), CT, LIMITS).text('a')).toBe('x');
    expect(parseMultipart(body(field, 'XyZ', '--'), CT, LIMITS).text('a')).toBe('x');
  });

  it('answers a part without any header as one without Content-Disposition', () => {
    expect(refusal(() => parseMultipart(Buffer.from('--XyZ\r\n\r\nx\r\n--XyZ--\r\n'), CT, LIMITS)).details.reason).toBe('no_disposition');
  });

  it('reads a plain continuation section of an extended file name literally (its % is no escape)', () => {
    const form = parseMultipart(body([{ headers: ["Content-Disposition: form-data; name=files; filename*0*=UTF-8''caf%C3%A9; filename*1=\"-%41.pdf\""], data: 'x' }]), CT, LIMITS);
    expect(form.all('files')[0].filename).toBe('café-%41.pdf');
  });

  it('refuses a field sent twice when read as a single value', () => {
    const twice = body([1, 2].map(() => ({ headers: ['Content-Disposition: form-data; name="store"'], data: 'true' })));
    expect(refusal(() => parseMultipart(twice, CT, LIMITS).text('store')).details.reason).toBe('duplicate_field');
  });

  it('refuses a text field that is not UTF-8 rather than reading it with replacement characters', () => {
    const latin1 = body([{ headers: ['Content-Disposition: form-data; name="input_type"'], data: Buffer.from([0xff, 0xfe, 0x68]) }]);
    expect(refusal(() => parseMultipart(latin1, CT, LIMITS).text('input_type')).details).toEqual({ reason: 'not_utf8', field: 'input_type' });
    const bom = body([{ headers: ['Content-Disposition: form-data; name="input_type"'], data: Buffer.from('\ufeffhtml') }]);
    expect(parseMultipart(bom, CT, LIMITS).text('input_type')).toBe('html');
  });

  it('keeps the body order of parts across the names asked for (files and files[] mixed)', () => {
    const mixed = body([
      { headers: ['Content-Disposition: form-data; name="files[]"; filename="a.html"'], data: 'A' },
      { headers: ['Content-Disposition: form-data; name="paths"'], data: '[]' },
      { headers: ['Content-Disposition: form-data; name="files"; filename="b.html"'], data: 'B' },
      { headers: ['Content-Disposition: form-data; name="files[]"; filename="c.html"'], data: 'C' },
    ]);
    expect(parseMultipart(mixed, CT, LIMITS).all('files', 'files[]').map((p) => p.filename)).toEqual(['a.html', 'b.html', 'c.html']);
  });

  it('takes backslashes in quoted parameters literally, except before a quote or a backslash', () => {
    expect(headerParams('form-data; name="files"; filename="C:\\Users\\x\\a.html"').params.get('filename')).toBe('C:\\Users\\x\\a.html');
    expect(headerParams('form-data; name="f"; filename="say \\"hi\\".pdf"').params.get('filename')).toBe('say "hi".pdf');
    expect(headerParams('form-data; name="f"; filename="a\\\\b.pdf"').params.get('filename')).toBe('a\\b.pdf');
  });

  it('parses header parameters and validates boundaries', () => {
    expect(headerParams('form-data; name="a;b"; filename=plain.pdf')).toEqual({ value: 'form-data', params: new Map([['name', 'a;b'], ['filename', 'plain.pdf']]) });
    expect(boundaryOf('Multipart/Form-Data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW')).toBe('----WebKitFormBoundary7MA4YWxkTrZu0gW');
    expect(refusal(() => boundaryOf(`multipart/form-data; boundary=${'x'.repeat(71)}`)).details.reason).toBe('bad_boundary');
    // RFC 2046: a boundary may hold spaces but not end in one.
    expect(boundaryOf('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(refusal(() => boundaryOf('multipart/form-data; boundary="ab "')).details.reason).toBe('bad_boundary');
    expect(isMultipart('multipart/form-data;boundary=a')).toBe(true);
    expect(isMultipart('multipart/form-dataX; boundary=a')).toBe(false);
  });

  it('never throws anything but a ServiceError on garbage', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          parseMultipart(Buffer.concat([Buffer.from('--XyZ'), Buffer.from(bytes)]), CT, LIMITS);
        } catch (err) {
          expect(err).toBeInstanceOf(ServiceError);
        }
      }),
    );
  });
});
