import { type FormText, type ImageRequest, MAX_IMAGE_FORM_PARTS, readImageForm } from '../../core/conversion/image-form';
import { ServiceError } from '../../core/errors';
import { parseMultipart } from '../multipart';

/** The multipart image request of POST /quickjob: input_type=image, repeated `images`, `options` (JSON text), `store`. */
export function parseImageForm(body: Buffer, contentType: string | undefined): ImageRequest {
  const form = parseMultipart(body, contentType, { maxParts: MAX_IMAGE_FORM_PARTS, maxFileBytes: 6 * 1024 * 1024, maxFieldBytes: 64 * 1024 });
  const text = (name: string): FormText => {
    try {
      return form.text(name);
    } catch (err) {
      if (err instanceof ServiceError) return err;
      throw err;
    }
  };
  return readImageForm({
    input_type: text('input_type'),
    present: (['html', 'markdown', 'url'] as const).filter((field) => form.has(field)),
    images: form.all('images').map((part) => ({ filename: part.filename, bytes: part.data })),
    options: text('options'),
    store: text('store'),
  });
}
