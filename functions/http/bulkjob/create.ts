import { applyPlanRateLimit, requireConversionType, requirePaidPlan } from '../../core/accounts/entitlements';
import { BULK_LIMITS } from '../../core/bulk/limits';
import { type BulkRequest, parseBulkForm, parseBulkJson, tooManyFiles } from '../../core/bulk/requests';
import { requireBulk, submitBulkJob } from '../../core/bulk/submit';
import { withDeclaredCharset } from '../../core/conversion/url-input';
import { ServiceError } from '../../core/errors';
import { bulkDeps } from '../../job-deps';
import { type MultipartPart, isMultipart, parseMultipart } from '../multipart';
import { json } from '../responses';
import { type AuthedRequest, authedRoute } from '../route';

/** A text part's charset (`text/html; charset=windows-1252`), else null: other types' bytes are not text. */
function textCharset(part: MultipartPart): string | null {
  const m = /^\s*(?:text\/[\w.+-]+|application\/xhtml\+xml)\s*;(?:.*;)?\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(part.contentType ?? '');
  return m?.[1] ?? null;
}

/** JSON, or multipart with repeated `files` parts, optional `paths`, `bundle_type` and `options`. */
function readRequest(req: AuthedRequest): BulkRequest {
  const contentType = req.headers['content-type'];
  if (!isMultipart(contentType)) return parseBulkJson(req.json());
  const tooLarge = () => new ServiceError('BULK_INLINE_TOO_LARGE', 'Inline files may total 4 MB; upload the ZIP with POST /bulkjob/upload-url instead.', { max_bytes: BULK_LIMITS.inlineBytes });
  const form = parseMultipart(req.body, contentType, {
    maxParts: BULK_LIMITS.entries + 10,
    maxFileBytes: BULK_LIMITS.inlineBytes,
    maxTotalFileBytes: BULK_LIMITS.inlineBytes,
    maxFieldBytes: 512 * 1024,
    // Too many parts is too many files when files fill the form; too many other fields stays INVALID_MULTIPART.
    refuse: (limit, info) =>
      limit === 'file_bytes' || limit === 'total_bytes' ? tooLarge() : limit === 'parts' && (info.fileParts ?? 0) > BULK_LIMITS.entries ? tooManyFiles(null) : undefined,
  });
  const text = (name: string) => (form.has(name) ? form.all(name)[0].data.toString('utf8') : undefined);
  return parseBulkForm({
    bundle_type: form.text('bundle_type'),
    options: form.text('options'),
    paths: form.text('paths'),
    // In body order whichever of the two names each part uses: `paths` follows that order.
    // A file's declared charset is kept (a Latin-1 page printed U+FFFD for each accented letter): see withDeclaredCharset.
    files: form.all('files', 'files[]').map((p) => ({ filename: p.filename, data: withDeclaredCharset(p.data, textCharset(p)) })),
    // Not accepted in a form (refused as INVALID_BULK_INPUT); only whether they were sent matters.
    s3_key: text('s3_key'),
    zip_base64: text('zip_base64'),
  });
}

/** POST /bulkjob: a ZIP (upload, base64) or inline files of HTML or Markdown → a queued bulk job run by the `bulk` workflow. */
export const handler = authedRoute('bulkjob.create', async (req) => {
  const { services, account } = req;
  const plan = await requirePaidPlan(services.plans, account);
  requireBulk(plan);
  const request = readRequest(req);
  requireConversionType(plan, request.bundle_type);
  await applyPlanRateLimit(services.rateLimiter, plan, account, services.clock.now(), (m, e) => services.log.warn(m, e));
  return json(202, await submitBulkJob(bulkDeps(services), { account, plan, request }));
});
