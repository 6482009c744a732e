import { z } from 'zod';
import { MAX_IMAGE_REQUEST_BYTES } from '../../../../functions/core/render/images';
import { quickjobImageFormSchema } from '../../../../functions/core/conversion/image-form';
import { parseImageForm } from '../../../../functions/http/quickjob/image-form';
import { refusal } from '../../../support/errors';
import { multipart, png } from '../../../support/images';

type Field = { name: string; value: string | Buffer; filename?: string };
const image = (name = 'a.png', bytes = png(2, 2)): Field => ({ name: 'images', value: bytes, filename: name });
const typed: Field = { name: 'input_type', value: 'image' };

function read(fields: Field[]) {
  const { body, contentType } = multipart(fields);
  return parseImageForm(body, contentType);
}
const refused = (fields: Field[]) => refusal(() => read(fields));

describe('parseImageForm', () => {
  it('reads the images in order, the options JSON and store', () => {
    const form = read([{ name: 'input_type', value: ' image ' }, image('a.png'), image('b.png'), { name: 'options', value: '{"fit":"cover"}' }, { name: 'store', value: ' TRUE ' }]);
    expect(form.images.map((i) => i.filename)).toEqual(['a.png', 'b.png']);
    expect(form.options.fit).toBe('cover');
    expect(form.store).toBe(true);
  });

  it('takes images totalling exactly the request limit, and refuses one byte more', () => {
    const half = Math.floor(MAX_IMAGE_REQUEST_BYTES / 2);
    const rest = MAX_IMAGE_REQUEST_BYTES - half;
    expect(read([typed, image('a.png', Buffer.alloc(half)), image('b.png', Buffer.alloc(rest))]).images).toHaveLength(2);
    expect(refused([typed, image('a.png', Buffer.alloc(half)), image('b.png', Buffer.alloc(rest + 1))])).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { total_bytes: MAX_IMAGE_REQUEST_BYTES + 1 } });
  });

  it('takes blank options and store as the defaults', () => {
    const form = read([typed, image(), { name: 'options', value: '  ' }, { name: 'store', value: '' }]);
    expect(form).toMatchObject({ store: false, options: { fit: 'contain' } });
  });

  it.each<[string, Field[], string, Record<string, unknown>]>([
    ['no input_type', [image()], 'MISSING_INPUT_TYPE', {}],
    ['an unknown input_type', [{ name: 'input_type', value: 'docx' }, image()], 'INVALID_INPUT_TYPE', { input_type: 'docx' }],
    ['a JSON input_type', [{ name: 'input_type', value: 'html' }, { name: 'html', value: '<p>x</p>' }], 'INVALID_PARAMETER', { parameter: 'input_type' }],
    ['input_type sent twice, before anything else', [typed, typed, { name: 'html', value: 'x' }], 'INVALID_MULTIPART', { reason: 'duplicate_field' }],
    ['a content field, before the images', [typed, { name: 'markdown', value: '#' }, { name: 'url', value: 'x' }], 'WRONG_FIELD_PROVIDED', { field: 'markdown', expected_field: 'images' }],
    ['no images, before the text fields', [typed, { name: 'options', value: '{x' }, { name: 'store', value: 'a' }, { name: 'store', value: 'b' }], 'MISSING_IMAGES', {}],
    ['26 images', [typed, ...Array.from({ length: 26 }, (_, i) => image(`${i}.png`))], 'INVALID_PARAMETER', { parameter: 'images', max_images: 25, received: 26 }],
    [
      'too many bytes of images',
      [typed, image('a.png', Buffer.alloc(1_600_000)), image('b.png', Buffer.alloc(1_600_000)), image('c.png', Buffer.alloc(1_600_000))],
      'PAYLOAD_TOO_LARGE',
      { total_bytes: 4_800_000, max_bytes: MAX_IMAGE_REQUEST_BYTES },
    ],
    ['options that are not JSON, before store', [typed, image(), { name: 'options', value: '{fit:' }, { name: 'store', value: 'maybe' }], 'INVALID_OPTIONS_JSON', { parameter: 'options' }],
    ['options sent twice, before store', [typed, image(), { name: 'options', value: '{}' }, { name: 'options', value: '{}' }, { name: 'store', value: 'maybe' }], 'INVALID_MULTIPART', { reason: 'duplicate_field' }],
    ['store that is not true or false, before the options themselves', [typed, image(), { name: 'options', value: '{"fit":"zoom"}' }, { name: 'store', value: 'yes' }], 'INVALID_PARAMETER', { parameter: 'store' }],
    ['an unknown fit', [typed, image(), { name: 'options', value: '{"fit":"zoom"}' }], 'INVALID_PARAMETER', { parameter: 'options.fit' }],
  ])('refuses %s', (_name, fields, code, details) => {
    const err = refused(fields);
    expect(err.code).toBe(code);
    expect(err.details).toEqual(expect.objectContaining(details));
  });

  it('describes the form for the OpenAPI document', () => {
    const schema = z.toJSONSchema(quickjobImageFormSchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(schema.required).toEqual(['input_type', 'images']);
    expect(schema.properties.images).toMatchObject({ type: 'array', maxItems: 25, items: { type: 'string', format: 'binary' } });
    for (const [name, field] of Object.entries(schema.properties)) expect([name, typeof field.description]).toEqual([name, 'string']);
  });
});
