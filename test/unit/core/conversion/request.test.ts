import { MAX_CONTENT_BYTES, parseJsonConversion } from '../../../../functions/core/conversion/request';
import type { ServiceError } from '../../../../functions/core/errors';

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

  it('accepts a valid request and applies option defaults', () => {
    const r = parseJsonConversion({ input_type: 'markdown', markdown: '# Hi', store: true });
    expect(r).toMatchObject({ input_type: 'markdown', content: '# Hi', store: true });
    // Markdown gets a readable default margin; an explicit margin wins.
    expect(r.input_type === 'markdown' && r.options.margin.top).toBeGreaterThan(0.5);
  });
});
