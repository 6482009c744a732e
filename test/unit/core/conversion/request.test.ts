import { z } from 'zod';
import { MAX_CONTENT_BYTES, parseJsonConversion, quickjobBodySchema } from '../../../../functions/core/conversion/request';
import type { ServiceError } from '../../../../functions/core/errors';
import { refusal } from '../../../support/errors';

function code(body: unknown): string {
  try {
    parseJsonConversion(body);
  } catch (err) {
    return (err as ServiceError).code;
  }
  return 'OK';
}

describe('parseJsonConversion (conversion request errors)', () => {
  it.each<[string, unknown, string]>([
    ['no input_type', { html: '<p>x</p>' }, 'MISSING_INPUT_TYPE'],
    ['empty input_type', { input_type: '', html: '<p>x</p>' }, 'MISSING_INPUT_TYPE'],
    ['unknown input_type', { input_type: 'docx', html: '<p>x</p>' }, 'INVALID_INPUT_TYPE'],
    ['non-string input_type', { input_type: 3 }, 'INVALID_INPUT_TYPE'],
    ['field absent', { input_type: 'html' }, 'MISSING_CONTENT_FIELD'],
    ['field empty', { input_type: 'markdown', markdown: '   ' }, 'EMPTY_CONTENT_FIELD'],
    ['both html and markdown', { input_type: 'html', html: '<p>x</p>', markdown: '# x' }, 'CONFLICTING_FIELDS'],
    ['markdown field for html', { input_type: 'html', markdown: '# x' }, 'WRONG_FIELD_PROVIDED'],
    ['url field next to html', { input_type: 'html', html: '<p>x</p>', url: 'https://example.com' }, 'WRONG_FIELD_PROVIDED'],
    ['markdown content as html', { input_type: 'html', html: '# Title\n\n- a\n- b' }, 'CONTENT_TYPE_MISMATCH'],
    ['html document as markdown', { input_type: 'markdown', markdown: '<!doctype html><html><body>x</body></html>' }, 'CONTENT_TYPE_MISMATCH'],
    ['content not a string', { input_type: 'html', html: 42 }, 'INVALID_PARAMETER'],
    ['url absent', { input_type: 'url' }, 'MISSING_URL'],
    ['url empty', { input_type: 'url', url: '' }, 'MISSING_URL'],
    ['image as JSON', { input_type: 'image' }, 'INVALID_PARAMETER'],
    ['store not boolean', { input_type: 'html', html: '<p>x</p>', store: 'yes' }, 'INVALID_PARAMETER'],
    ['bad option', { input_type: 'html', html: '<p>x</p>', options: { scale: 9 } }, 'INVALID_PARAMETER'],
    ['url with an option no fetched type could use', { input_type: 'url', url: 'https://example.com/a', options: { format: 'B9' } }, 'INVALID_PARAMETER'],
    ['url with options not an object', { input_type: 'url', url: 'https://example.com/a', options: 'A4' }, 'INVALID_PARAMETER'],
    // Images take no scale, so an image behind the URL could still be printed: decided once it is fetched.
    ['url with an option only images ignore', { input_type: 'url', url: 'https://example.com/a', options: { scale: 9 } }, 'OK'],
    ['url with an image-only option', { input_type: 'url', url: 'https://example.com/a', options: { fit: 'cover' } }, 'OK'],
    ['body not an object', [1, 2], 'INVALID_PARAMETER'],
    ['body missing', undefined, 'INVALID_PARAMETER'],
  ])('%s → %s', (_name, body, expected) => {
    expect(code(body)).toBe(expected);
  });

  it('refuses content over 5 MB', () => {
    expect(code({ input_type: 'html', html: `<p>${'x'.repeat(MAX_CONTENT_BYTES)}</p>` })).toBe('INPUT_SIZE_EXCEEDED');
  });

  it('takes exactly 5 MB, and counts UTF-8 bytes, not characters', () => {
    const fill = (bytes: number, char: string) => `<p>${char.repeat((bytes - 7) / Buffer.byteLength(char))}</p>`;
    expect(code({ input_type: 'html', html: fill(MAX_CONTENT_BYTES, 'x') })).toBe('OK');
    expect(code({ input_type: 'html', html: `${fill(MAX_CONTENT_BYTES, 'x')} ` })).toBe('INPUT_SIZE_EXCEEDED');
    // 2.7 million characters, 5.4 MB: over the limit although its length is under it.
    const wide = `<p>${'é'.repeat(2_700_000)}</p>`;
    expect(wide.length).toBeLessThan(MAX_CONTENT_BYTES);
    expect(refusal(() => parseJsonConversion({ input_type: 'html', html: wide })).details).toMatchObject({ size_bytes: Buffer.byteLength(wide) });
  });

  it('accepts a valid request and applies option defaults', () => {
    const r = parseJsonConversion({ input_type: 'markdown', markdown: '# Hi', store: true });
    expect(r).toMatchObject({ input_type: 'markdown', content: '# Hi', store: true });
    // Markdown gets a readable default margin; an explicit margin wins.
    expect(r.input_type === 'markdown' && r.options.margin.top).toBeGreaterThan(0.5);
  });
});

describe('parseJsonConversion (precedence and field types)', () => {
  const refused = (body: unknown) => refusal(() => parseJsonConversion(body));

  it.each<[string, unknown, string, Record<string, unknown>]>([
    ['input_type before conflicting fields', { input_type: 'docx', html: '<p>x</p>', markdown: '# x' }, 'INVALID_INPUT_TYPE', {}],
    ['conflicting fields before the wrong field', { input_type: 'url', html: 5, markdown: 7 }, 'CONFLICTING_FIELDS', {}],
    ['the wrong field before the content field type', { input_type: 'html', html: 5, url: 7 }, 'WRONG_FIELD_PROVIDED', { field: 'url', expected_field: 'html' }],
    ['the missing field before options and store', { input_type: 'markdown', options: 'A4', store: 'yes' }, 'MISSING_CONTENT_FIELD', {}],
    ['the content type before emptiness checks and options', { input_type: 'html', html: 42, options: { scale: 9 } }, 'INVALID_PARAMETER', { parameter: 'html' }],
    ['a url that is not a string', { input_type: 'url', url: 5 }, 'INVALID_URL', { url: 5 }],
    ['a blank url', { input_type: 'url', url: '   ' }, 'MISSING_URL', {}],
    ['a mismatch before options', { input_type: 'html', html: '# Title\n\n- a\n- b', options: { scale: 9 } }, 'CONTENT_TYPE_MISMATCH', {}],
    ['options before store', { input_type: 'html', html: '<p>x</p>', options: { scale: 9 }, store: 'yes' }, 'INVALID_PARAMETER', { parameter: 'options.scale' }],
    ['margins without room before store', { input_type: 'html', html: '<p>x</p>', options: { margin: { left: '150mm', right: '150mm' } }, store: 1 }, 'INVALID_PARAMETER', { parameter: 'options.margin' }],
    ['store last, naming it', { input_type: 'html', html: '<p>x</p>', store: 'yes' }, 'INVALID_PARAMETER', { parameter: 'store' }],
    ['an image in JSON names input_type', { input_type: 'image', html: '<p>x</p>' }, 'INVALID_PARAMETER', { parameter: 'input_type' }],
  ])('%s', (_name, body, expectedCode, details) => {
    const err = refused(body);
    expect(err.code).toBe(expectedCode);
    expect(err.details).toMatchObject(details);
  });

  it('reads options as input_type uses them: Markdown keeps its own margins', () => {
    // A 30 mm page has room with HTML's zero margins, not with Markdown's 16 mm sides.
    const options = { format: null, width: '30mm', height: '30mm' };
    expect(code({ input_type: 'html', html: '<p>x</p>', options })).toBe('OK');
    expect(refused({ input_type: 'markdown', markdown: 'Hi', options }).details.parameter).toBe('options.margin');
  });

  it('treats null options and store as absent, and trims the url', () => {
    expect(parseJsonConversion({ input_type: 'html', html: '<p>x</p>', options: null, store: null })).toMatchObject({ store: false, options: { scale: 1 } });
    // Clients that send every field, null when unused, are neither conflicting nor sending the wrong field.
    expect(parseJsonConversion({ input_type: 'html', html: '<p>x</p>', markdown: null, url: null })).toMatchObject({ input_type: 'html', content: '<p>x</p>' });
    expect(parseJsonConversion({ input_type: 'url', url: 'https://example.com/a', html: null, markdown: null })).toMatchObject({ input_type: 'url' });
    expect(refused({ input_type: 'markdown', markdown: null, html: null }).code).toBe('MISSING_CONTENT_FIELD');
    expect(parseJsonConversion({ input_type: 'url', url: ' https://example.com/a ' })).toMatchObject({ url: 'https://example.com/a', store: false });
  });

  it('refuses URL options that neither an HTML nor an image reading can print, before anything is fetched', () => {
    // Valid field by field (so the schema lets them through); only reading them as a page refuses them.
    expect(refused({ input_type: 'url', url: 'https://example.com/a', options: { format: null, width: '300in' } }).details).toMatchObject({ parameter: 'options.width' });
    expect(refused({ input_type: 'url', url: 'https://example.com/a', options: { margin: { left: '150mm', right: '150mm' } } }).details).toMatchObject({ parameter: 'options.margin' });
  });

  it('refuses options that are not an object with the options reading\'s own words, not zod\'s', () => {
    for (const input of [{ input_type: 'html', html: '<p>x</p>' }, { input_type: 'url', url: 'https://example.com/a' }]) {
      const err = refused({ ...input, options: 'A4' });
      expect(err.details).toMatchObject({ parameter: 'options' });
      expect(err.message).toMatch(/options must be a JSON object/);
    }
  });

  it('keeps URL options raw for when the fetched type is known', () => {
    const r = parseJsonConversion({ input_type: 'url', url: 'https://example.com/a', options: { fit: 'cover', scale: 9 } });
    expect(r.input_type === 'url' && r.rawOptions).toEqual({ fit: 'cover', scale: 9 });
  });

  it('describes the body for the OpenAPI document', () => {
    const schema = z.toJSONSchema(quickjobBodySchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
    expect(Object.keys(schema.properties)).toEqual(['input_type', 'html', 'markdown', 'url', 'options', 'store']);
    for (const [name, field] of Object.entries(schema.properties)) expect([name, typeof field.description]).toEqual([name, 'string']);
  });
});
