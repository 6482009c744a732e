/**
 * The multipart image request of POST /quickjob as a zod schema (the validation and the source of its OpenAPI form),
 * read from the form's fields as the HTTP layer's multipart parser yields them.
 */
import { z } from 'zod';
import { inputTypeRefusal } from './request';
import type { UploadedImage } from './sources';
import { ServiceError, invalidParameter } from '../errors';
import { MAX_IMAGES, MAX_IMAGE_REQUEST_BYTES, type ImageOptions, parseImageOptions } from '../render/images';
import { type Refuser, jsonFormField, parseRequest, refuse } from '../validation';

/**
 * Bounds parsing only: well above 25 images plus the form's fields, so a request with too many images gets the
 * images limit's own answer (400 INVALID_PARAMETER) rather than a multipart refusal.
 */
export const MAX_IMAGE_FORM_PARTS = 4 * MAX_IMAGES + 8;

export interface ImageRequest {
  images: UploadedImage[];
  options: ImageOptions;
  store: boolean;
}

const notHere = (field: string) =>
  z
    .never()
    .optional()
    .meta({ description: `Not accepted with images (400 WRONG_FIELD_PROVIDED): ${field} input is sent as a JSON body.` });

const isUpload = (value: unknown): value is UploadedImage => typeof value === 'object' && value !== null && Buffer.isBuffer((value as UploadedImage).bytes);

/**
 * Route quickjob.create, multipart/form-data: the image form, its fields in the order their problems are reported.
 * Text fields are read as UTF-8; `options` is JSON text, validated as image options (imageOptionsSchema) after the
 * other fields.
 */
export const quickjobImageFormSchema = z
  .object({
    input_type: z
      .string()
      .trim()
      .pipe(z.literal('image'))
      .meta({ description: 'Always "image" in a multipart request (HTML, Markdown and URLs are sent as JSON).', enum: ['image'] }),
    html: notHere('HTML'),
    markdown: notHere('Markdown'),
    url: notHere('URL'),
    images: z
      .array(z.custom<UploadedImage>(isUpload).meta({ type: 'string', format: 'binary', description: 'A PNG or JPEG file (up to 5 MB and 10000×10000 pixels).' }))
      .min(1)
      .max(MAX_IMAGES)
      .superRefine((images, ctx) => {
        const total = images.reduce((n, image) => n + (isUpload(image) ? image.bytes.length : 0), 0);
        if (total <= MAX_IMAGE_REQUEST_BYTES) return;
        const message = `The images total ${total} bytes; a request carries about 4.5 MB of images. Split them across requests.`;
        refuse(ctx, new ServiceError('PAYLOAD_TOO_LARGE', message, { total_bytes: total, max_bytes: MAX_IMAGE_REQUEST_BYTES }));
      })
      .meta({
        description: `The images, one page each in this order: the field repeated, 1 to ${MAX_IMAGES} files, about 4.5 MB in all. Unusable ones are skipped (X-PDF-Pages counts the pages made).`,
      }),
    options: jsonFormField(z.unknown(), () => new ServiceError('INVALID_OPTIONS_JSON', 'The options field is not valid JSON; send an object such as {"fit":"cover"}.', { parameter: 'options' }))
      .meta({
        description: 'Image options as JSON text, e.g. {"fit": "cover", "format": "Letter"}: format (A4), margin (10mm each side), landscape, width, height, fit (contain). Blank: the defaults.',
        contentMediaType: 'application/json',
      }),
    store: z
      .string()
      .trim()
      .toLowerCase()
      .refine((text) => text === 'true' || text === 'false' || text === '')
      .transform((text) => text === 'true')
      .optional()
      .meta({ description: '"true" stores the PDF and answers JSON with a one-hour download link instead of the PDF. Default "false".', enum: ['true', 'false'], default: 'false' }),
  })
  .meta({ description: 'Image input: PNG and JPEG files to one PDF, one page per image.' });

/** A text field whose part was malformed (sent twice) carries its INVALID_MULTIPART refusal as its value. */
const orMalformed =
  (refuser: Refuser): Refuser =>
  (value, issue) =>
    value instanceof ServiceError ? value : refuser(value, issue);

const wrongField = (field: string): Refuser => () =>
  new ServiceError('WRONG_FIELD_PROVIDED', `input_type is "image", so send files in "images", not "${field}".`, { field, input_type: 'image', expected_field: 'images' });

const imageFormRefusals: Record<string, Refuser> = {
  input_type: orMalformed((value) => {
    const type = typeof value === 'string' ? value.trim() : value;
    return (
      inputTypeRefusal(type, 'input_type is required; multipart requests carry input_type=image.') ??
      invalidParameter('input_type', `input_type "${String(type)}" is sent as a JSON body; multipart/form-data is only for images.`)
    );
  }),
  html: wrongField('html'),
  markdown: wrongField('markdown'),
  url: wrongField('url'),
  images: (value, issue) =>
    issue.code === 'too_small'
      ? new ServiceError('MISSING_IMAGES', 'Attach one or more PNG or JPEG files as "images" parts.')
      : invalidParameter('images', `At most ${MAX_IMAGES} images per request; send the rest in another request.`, {
          max_images: MAX_IMAGES,
          received: Array.isArray(value) ? value.length : 0,
        }),
  options: orMalformed((value, issue) => invalidParameter('options', `options must be JSON text (${issue.message}).`)),
  store: orMalformed(() => invalidParameter('store', 'store must be the text "true" or "false".')),
};

/** A text field as the multipart parser gave it: its text, its INVALID_MULTIPART refusal (sent twice), or absent. */
export type FormText = string | ServiceError | undefined;

/** The image form's fields as the multipart parser yields them (`present`: which JSON-only fields were sent at all). */
export interface ImageFormFields {
  input_type: FormText;
  present: ('html' | 'markdown' | 'url')[];
  images: UploadedImage[];
  options: FormText;
  store: FormText;
}

/** The image request from its form fields: refusals in the spec's order, then the image options. */
export function readImageForm(fields: ImageFormFields): ImageRequest {
  const { present, ...rest } = fields;
  const request = parseRequest(quickjobImageFormSchema, { ...rest, ...Object.fromEntries(present.map((field) => [field, true])) }, { refusals: imageFormRefusals });
  return { images: request.images, options: parseImageOptions(request.options), store: request.store ?? false };
}
