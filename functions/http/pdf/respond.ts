import type { InstantResult } from '../../core/pdfops/instant';
import { attachment, json, pdf } from '../responses';

/** A merge/split result: the PDF itself (single file under 4.4 MB, no `store`), else the stored-result JSON. */
export function respondInstant(result: InstantResult) {
  if (result.direct) {
    return pdf(result.direct.bytes, {
      'Content-Disposition': attachment(result.direct.name),
      'X-PDF-Pages': String(result.direct.pages),
      'X-PDF-Output-Count': '1',
      'X-PDF-Warnings': result.warnings.join(','),
      'X-Job-Id': result.job.job_id,
    });
  }
  return json(200, result.stored, { 'X-Job-Id': result.job.job_id, 'X-PDF-Warnings': result.warnings.join(',') });
}
