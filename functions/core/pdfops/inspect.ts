import type { Account } from '../accounts/account';
import type { Clock } from '../clock';
import { ServiceError, invalidParameter } from '../errors';
import type { BlobStore } from '../jobs/ports';
import { type InspectResult, inspectPdf } from '../pdf/inspect';
import { INSTANT_LIMITS, JOB_LIMITS } from '../pdf/limits';
import { checkUpload } from './background';
import { decodeBase64Pdf, inputFilename, isObject, type RawInput } from './requests';

/** What /pdf/inspect was given: a file in the request, or an uploaded one. */
export type InspectSource = { kind: 'inline'; input: RawInput } | { kind: 'upload'; s3_key: string; filename: unknown };

export function parseInspectFor(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (value === 'edit') return true;
  throw invalidParameter('for', 'for may only be "edit" (adds page ids and the form field listing).', { for: value });
}

/** The JSON body of /pdf/inspect: `{input: {pdf_base64, filename}}` or `{s3_key, filename}`, plus optional `for`. */
export function parseInspectJson(body: unknown): { source: InspectSource; forEdit: boolean } {
  if (!isObject(body)) throw invalidParameter('body', 'The request body must be a JSON object.');
  const forEdit = parseInspectFor(body.for);
  if (body.s3_key !== undefined && body.input !== undefined) throw invalidParameter('s3_key', 'Send either input.pdf_base64 or s3_key, not both.');
  if (typeof body.s3_key === 'string' && body.s3_key !== '') return { source: { kind: 'upload', s3_key: body.s3_key, filename: body.filename }, forEdit };
  if (body.s3_key !== undefined) throw invalidParameter('s3_key', 's3_key must be the s3_key returned by POST /pdf/upload-url.');
  if (!isObject(body.input)) throw new ServiceError('MISSING_PDF', 'No PDF in the request: send input.pdf_base64, an uploaded s3_key, or a multipart "file".');
  return { source: { kind: 'inline', input: { kind: 'base64', value: body.input.pdf_base64, filename: body.input.filename } }, forEdit };
}

/** POST /pdf/inspect. Direct input up to 4 MB (500-page path); uploads up to 150 MB (5000-page job path). */
export async function runInspect(deps: { blobs: BlobStore; clock: Clock }, account: Account, source: InspectSource, forEdit: boolean): Promise<InspectResult> {
  if (source.kind === 'upload') {
    const filename = inputFilename(source.filename, 0, 'filename');
    await checkUpload(deps, account, source.s3_key, { filename, index: 0 });
    const bytes = await deps.blobs.get(source.s3_key);
    if (!bytes) throw new ServiceError('UPLOAD_NOT_FOUND', `${filename}: nothing was uploaded to this s3_key.`, { filename, input_index: 0, s3_key: source.s3_key });
    return inspectPdf(bytes, { filename, maxPages: JOB_LIMITS.maxPages, forEdit });
  }
  const input = source.input;
  const filename = inputFilename(input.filename, 0, 'input.filename');
  const bytes = input.kind === 'bytes' ? input.data : decodeBase64Pdf(input.value, 0, filename, 'input.pdf_base64');
  if (bytes.length === 0) throw new ServiceError('MISSING_PDF', 'The PDF is empty.', { filename, input_index: 0 });
  if (bytes.length > INSTANT_LIMITS.maxInputBytes) {
    throw new ServiceError('PDF_INPUT_TOO_LARGE', `${filename} is larger than 4 MB. Upload it with POST /pdf/upload-url and inspect it by s3_key (up to 150 MB).`, {
      filename,
      input_index: 0,
      size_bytes: bytes.length,
      max_bytes: INSTANT_LIMITS.maxInputBytes,
    });
  }
  return inspectPdf(bytes, { filename, maxPages: INSTANT_LIMITS.maxPages, forEdit });
}
