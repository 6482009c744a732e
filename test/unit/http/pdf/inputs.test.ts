import type { HttpRequest } from '../../../../functions/http/pipeline';
import { readInspect, readMerge, readSplit } from '../../../../functions/http/pdf/inputs';
import { refusal } from '../../../support/errors';
import { multipart } from '../../../support/images';

/** A form of `count` PDF parts named `name` and `fields` text fields, as the route reads it. */
function formRequest(name: string, count: number, fields = 0): HttpRequest {
  const { body, contentType } = multipart([
    ...Array.from({ length: count }, (_, i) => ({ name, value: Buffer.from('%PDF-1.7'), filename: `${i}.pdf` })),
    ...Array.from({ length: fields }, (_, i) => ({ name: `note${i}`, value: Buffer.from('x') })),
  ]);
  return { headers: { 'content-type': contentType }, body } as unknown as HttpRequest;
}

describe('PDF tool forms', () => {
  it('reads the parts of a form within its limit', () => {
    const submitted = readMerge(formRequest('files', 3));
    expect('form' in submitted && submitted.form.files.map((f) => f.filename)).toEqual(['0.pdf', '1.pdf', '2.pdf']);
  });

  it.each([
    ['merge', readMerge, 'files', /^A merge takes at most 20 PDFs/, 20],
    ['split', readSplit, 'file', /^A split takes exactly one PDF/, 1],
    ['inspect', readInspect, 'file', /^Inspect takes one PDF at a time/, 1],
  ] as const)('refuses a %s form of more than 64 parts as TOO_MANY_FILES, saying what the route takes', (_name, read, part, message, maxFiles) => {
    const err = refusal(() => read(formRequest(part, 65)));
    expect(err).toMatchObject({ code: 'TOO_MANY_FILES', details: { max_files: maxFiles, max_parts: 64 } });
    expect(err.message).toMatch(message);
  });

  it('refuses a form whose parts are mostly other fields as INVALID_MULTIPART, not as too many files', () => {
    expect(refusal(() => readMerge(formRequest('files', 2, 63)))).toMatchObject({ code: 'INVALID_MULTIPART', details: { reason: 'too_many_parts', limit: 64 } });
    expect(refusal(() => readSplit(formRequest('file', 1, 64)))).toMatchObject({ code: 'INVALID_MULTIPART', details: { reason: 'too_many_parts', limit: 64 } });
    expect(refusal(() => readMerge(formRequest('files', 21, 44)))).toMatchObject({ code: 'TOO_MANY_FILES', details: { max_files: 20 } });
  });
});
