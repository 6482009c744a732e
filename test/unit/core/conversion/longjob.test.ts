import { z } from 'zod';
import { longjobBodySchema, parseLongJobRequest } from '../../../../functions/core/conversion/longjob';
import { refusal } from '../../../support/errors';

const refused = (body: unknown) => refusal(() => parseLongJobRequest(body));

describe('parseLongJobRequest', () => {
  it('reads HTML or Markdown with the options, and email_notification when sent', () => {
    expect(parseLongJobRequest({ input_type: 'markdown', markdown: '# Hi', email_notification: false })).toMatchObject({ input_type: 'markdown', content: '# Hi', email_notification: false });
    const plain = parseLongJobRequest({ input_type: 'html', html: '<p>x</p>', options: { landscape: true }, email_notification: null, webhook_url: null });
    expect(plain.options.landscape).toBe(true);
    expect('email_notification' in plain).toBe(false);
  });

  it.each<[string, unknown, string, Record<string, unknown>]>([
    ['url input, before its content rules', { input_type: 'url', html: '<p>x</p>', markdown: '# x' }, 'INVALID_INPUT_TYPE', { input_type: 'url', allowed: ['html', 'markdown'] }],
    ['image input', { input_type: 'image' }, 'INVALID_INPUT_TYPE', { input_type: 'image', allowed: ['html', 'markdown'] }],
    ['an unknown type, with every conversion type allowed', { input_type: 'docx' }, 'INVALID_INPUT_TYPE', { allowed: ['html', 'markdown', 'url', 'image'] }],
    ['a url next to html', { input_type: 'html', html: '<p>x</p>', url: 'https://example.com' }, 'WRONG_FIELD_PROVIDED', { field: 'url' }],
    ['options before store', { input_type: 'html', html: '<p>x</p>', options: { scale: 0 }, store: 'yes' }, 'INVALID_PARAMETER', { parameter: 'options.scale' }],
    ['store before email_notification', { input_type: 'html', html: '<p>x</p>', store: 'yes', email_notification: 'yes' }, 'INVALID_PARAMETER', { parameter: 'store' }],
    ['email_notification before webhook_url', { input_type: 'html', html: '<p>x</p>', email_notification: 1, webhook_url: 'http://x' }, 'INVALID_PARAMETER', { parameter: 'email_notification' }],
    ['a webhook_url that is not a string', { input_type: 'html', html: '<p>x</p>', webhook_url: 5 }, 'INVALID_WEBHOOK_URL', { webhook_url: 5 }],
    ['a body that is not an object', [1], 'INVALID_PARAMETER', { parameter: 'body' }],
  ])('refuses %s', (_name, body, code, details) => {
    const err = refused(body);
    expect(err.code).toBe(code);
    expect(err.details).toEqual(expect.objectContaining(details));
  });

  it('describes every field for the OpenAPI document', () => {
    const schema = z.toJSONSchema(longjobBodySchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
    expect(Object.keys(schema.properties)).toEqual(['input_type', 'html', 'markdown', 'options', 'store', 'email_notification', 'webhook_url']);
    for (const [name, field] of Object.entries(schema.properties)) expect([name, typeof field.description]).toEqual([name, 'string']);
  });
});
