import { z } from 'zod';
import type { Account } from '../accounts/account';
import type { Clock } from '../clock';
import { ServiceError, invalidParameter } from '../errors';
import type { BlobStore } from '../jobs/ports';
import { Deadline } from '../pdf/errors';
import { type InspectResult, inspectPdf } from '../pdf/inspect';
import { INSTANT_LIMITS, JOB_LIMITS } from '../pdf/limits';
import { EVEN_AFTER_FIELD_ERRORS, isJsonObject, optional, parseRequest, refuse } from '../validation';
import { checkUpload } from './background';
import { type FormFields, type FormFile, inputName, inputRefusal, pdfBase64Schema, type Submitted } from './requests';

/** What /pdf/inspect was given: a file in the request (decoded), or an uploaded one. */
export type InspectSource = { kind: 'inline'; bytes: Uint8Array; filename: string } | { kind: 'upload'; s3_key: string; filename: string };

const forSchema = optional(z.enum(['edit', '']))
  .transform((value) => value === 'edit')
  .meta({ description: '"edit" adds page ids and the form field listing (what the editor needs). Default: the plain description.' });

const noPdf = () => new ServiceError('MISSING_PDF', 'No PDF in the request: send input.pdf_base64, an uploaded s3_key, or a multipart "file".');

/** A top-level filename that is not a string: refused with s3_key, ignored beside an inline input (which names itself). */
const WRONG_NAME = Symbol('filename is not a string');

/** The JSON body of /pdf/inspect: `{input: {pdf_base64, filename}}` or `{s3_key, filename}`, plus optional `for`. */
export const inspectJsonBodySchema = z
  .object({
    for: forSchema,
    s3_key: z.string().min(1).optional().meta({ description: 'An upload from POST /pdf/upload-url (up to 150 MB, 5000 pages), instead of input.' }),
    input: z
      .object({
        filename: optional(z.string()).meta({ description: 'The file name shown in the result; default "input-1.pdf".' }),
        pdf_base64: pdfBase64Schema,
      })
      .optional()
      .meta({ description: 'The PDF in the request (4 MB decoded, 500 pages), instead of s3_key.' }),
    filename: z
      .string()
      .nullish()
      .catch(() => WRONG_NAME as unknown as string)
      .meta({ description: 'With s3_key: the file name shown in the result; default "input-1.pdf".' }),
  })
  .superRefine((body, ctx) => {
    if (body.s3_key !== undefined && body.input !== undefined) refuse(ctx, invalidParameter('s3_key', 'Send either input.pdf_base64 or s3_key, not both.'), { rank: 0.5 });
    else if (body.s3_key === undefined && (body.input === undefined || body.input === null)) refuse(ctx, noPdf(), { path: ['input'] });
    if (body.s3_key !== undefined && (body.filename as unknown) === WRONG_NAME) refuse(ctx, invalidParameter('filename', 'filename must be a string.', { input_index: 0 }), { path: ['filename'] });
  }, EVEN_AFTER_FIELD_ERRORS);

/** The multipart form of /pdf/inspect. */
export const inspectFormSchema = z.object({
  file: z
    .custom<FormFile>((v) => isJsonObject(v) && v.data instanceof Uint8Array)
    .meta({ type: 'string', format: 'binary', description: 'A PDF file.' } as Record<string, unknown>)
    .array()
    .superRefine((files, ctx) => {
      if (files.length === 0) refuse(ctx, new ServiceError('MISSING_PDF', 'No PDF in the request: send it as the multipart field "file".'));
      else if (files.length > 1) refuse(ctx, new ServiceError('TOO_MANY_FILES', 'Inspect takes one PDF at a time.', { file_count: files.length, max_files: 1 }));
    })
    .meta({ description: 'The PDF: exactly one file (4 MB, 500 pages).' }),
  for: forSchema,
});

export type InspectForm = FormFields<typeof inspectFormSchema>;

const forRefusal = (value: unknown) => invalidParameter('for', 'for may only be "edit" (adds page ids and the form field listing).', { for: value });

/** /pdf/inspect as JSON or multipart. */
export function parseInspectRequest(submitted: Submitted<InspectForm>): { source: InspectSource; forEdit: boolean } {
  if ('form' in submitted) {
    const form = parseRequest(inspectFormSchema, submitted.form, { refusals: { for: forRefusal } });
    const file = form.file[0];
    return { source: { kind: 'inline', bytes: file.data, filename: inputName(file.filename, 0) }, forEdit: form.for };
  }
  const body = parseRequest(inspectJsonBodySchema, submitted.json, {
    example: '{"input": {"pdf_base64": "JVBERi0…"}} or {"s3_key": "uploads/…"}',
    refusals: {
      for: forRefusal,
      s3_key: () => invalidParameter('s3_key', 's3_key must be the s3_key returned by POST /pdf/upload-url.'),
      input: (value, issue) => {
        if (issue.path.length > 1) {
          return inputRefusal({ base: 'input', index: 0, shape: '', uploadsGo: 'at the top level of the body: {"s3_key": "…", "filename": "…"}' }, issue.path[1], issue, value);
        }
        // An input that is there but not an object is malformed (as for /pdf/split), not missing.
        return value === undefined || value === null ? noPdf() : invalidParameter('input', 'input must be an object {pdf_base64, filename}.');
      },
    },
  });
  if (body.s3_key !== undefined) return { source: { kind: 'upload', s3_key: body.s3_key, filename: inputName(body.filename, 0) }, forEdit: body.for };
  const input = body.input!;
  return { source: { kind: 'inline', bytes: input.pdf_base64, filename: inputName(input.filename, 0) }, forEdit: body.for };
}

/** POST /pdf/inspect. Direct input up to 4 MB (500-page path); uploads up to 150 MB (5000-page job path). */
export async function runInspect(deps: { blobs: BlobStore; clock: Clock; timeoutSeconds?: number }, account: Account, source: InspectSource, forEdit: boolean): Promise<InspectResult> {
  const { filename } = source;
  // An instant request's time (document 2: 408 PDFOP_TIMEOUT over 25 seconds), counted from here: an upload's download too.
  const timeoutSeconds = deps.timeoutSeconds ?? INSTANT_LIMITS.timeoutSeconds;
  const timing = { deadline: Deadline.in(timeoutSeconds * 1000), timeoutSeconds };
  if (source.kind === 'upload') {
    await checkUpload(deps, account, source.s3_key, { filename, index: 0 });
    const bytes = await deps.blobs.get(source.s3_key);
    if (!bytes) throw new ServiceError('UPLOAD_NOT_FOUND', `${filename}: nothing was uploaded to this s3_key, or a job already used it (a job deletes its uploads when it ends). Upload it again.`, { filename, input_index: 0, s3_key: source.s3_key });
    return inspectPdf(bytes, { filename, maxPages: JOB_LIMITS.maxPages, forEdit, ...timing });
  }
  const bytes = source.bytes;
  if (bytes.length === 0) throw new ServiceError('MISSING_PDF', `${filename} is empty (0 bytes); send the PDF's bytes.`, { filename, input_index: 0 });
  if (bytes.length > INSTANT_LIMITS.maxInputBytes) {
    throw new ServiceError('PDF_INPUT_TOO_LARGE', `${filename} is larger than 4 MB. Upload it with POST /pdf/upload-url and inspect it by s3_key (up to 150 MB).`, {
      filename,
      input_index: 0,
      size_bytes: bytes.length,
      max_bytes: INSTANT_LIMITS.maxInputBytes,
    });
  }
  return inspectPdf(bytes, { filename, maxPages: INSTANT_LIMITS.maxPages, forEdit, ...timing });
}
