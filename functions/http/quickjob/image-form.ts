import { CONVERSION_TYPES } from '../../core/billing/plans';
import type { UploadedImage } from '../../core/conversion/sources';
import { ServiceError, invalidParameter } from '../../core/errors';
import { MAX_IMAGES, MAX_IMAGE_REQUEST_BYTES, type ImageOptions, parseImageOptions } from '../../core/render/images';
import { parseMultipart } from '../multipart';

/**
 * Bounds parsing only: well above 25 images plus the form's fields, so a request with too many images gets the
 * images limit's own answer (400 INVALID_PARAMETER) rather than a multipart refusal.
 */
const MAX_IMAGE_FORM_PARTS = 4 * MAX_IMAGES + 8;

export interface ImageRequest {
  images: UploadedImage[];
  options: ImageOptions;
  store: boolean;
}

/** The multipart image request of POST /quickjob: input_type=image, repeated `images`, `options` (JSON text), `store`. */
export function parseImageForm(body: Buffer, contentType: string | undefined): ImageRequest {
  const form = parseMultipart(body, contentType, { maxParts: MAX_IMAGE_FORM_PARTS, maxFileBytes: 6 * 1024 * 1024, maxFieldBytes: 64 * 1024 });
  const inputType = form.text('input_type')?.trim();
  if (!inputType) throw new ServiceError('MISSING_INPUT_TYPE', 'input_type is required; multipart requests carry input_type=image.');
  if (!(CONVERSION_TYPES as readonly string[]).includes(inputType)) {
    throw new ServiceError('INVALID_INPUT_TYPE', `input_type must be one of ${CONVERSION_TYPES.join(', ')}.`, { input_type: inputType, allowed: CONVERSION_TYPES });
  }
  if (inputType !== 'image') throw invalidParameter('input_type', `input_type "${inputType}" is sent as a JSON body; multipart/form-data is only for images.`);
  for (const field of ['html', 'markdown', 'url']) {
    if (form.has(field)) throw new ServiceError('WRONG_FIELD_PROVIDED', `input_type is "image", so send files in "images", not "${field}".`, { field, input_type: 'image', expected_field: 'images' });
  }
  const images = form.all('images').map((p) => ({ filename: p.filename, bytes: p.data }));
  if (images.length === 0) throw new ServiceError('MISSING_IMAGES', 'Attach one or more PNG or JPEG files as "images" parts.');
  if (images.length > MAX_IMAGES) throw invalidParameter('images', `At most ${MAX_IMAGES} images per request; send the rest in another request.`, { max_images: MAX_IMAGES, received: images.length });
  const total = images.reduce((n, i) => n + i.bytes.length, 0);
  if (total > MAX_IMAGE_REQUEST_BYTES) {
    throw new ServiceError('PAYLOAD_TOO_LARGE', `The images total ${total} bytes; a request carries about 4.5 MB of images. Split them across requests.`, {
      total_bytes: total,
      max_bytes: MAX_IMAGE_REQUEST_BYTES,
    });
  }
  const optionsText = form.text('options');
  let rawOptions: unknown;
  if (optionsText !== undefined && optionsText.trim() !== '') {
    try {
      rawOptions = JSON.parse(optionsText);
    } catch {
      throw new ServiceError('INVALID_OPTIONS_JSON', 'The options field is not valid JSON; send an object such as {"fit":"cover"}.');
    }
  }
  const storeText = form.text('store')?.trim().toLowerCase();
  if (storeText !== undefined && storeText !== 'true' && storeText !== 'false' && storeText !== '') throw invalidParameter('store', 'store must be the text "true" or "false".');
  return { images, options: parseImageOptions(rawOptions), store: storeText === 'true' };
}
