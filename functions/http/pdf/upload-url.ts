import { createPdfUploadUrl, parseUploadSize } from '../../core/pdfops/background';
import { requireToolsOrEditor } from '../../core/pdfops/access';
import { json } from '../responses';
import { authedRoute } from '../route';

/**
 * POST /pdf/upload-url: a presigned PUT (15 minutes) for one PDF of exactly `content_length_bytes` (≤ 150 MB).
 * Uploads feed merge/split jobs and the editor's `source_key`, so a plan with either may ask for one.
 */
export const handler = authedRoute('pdf.uploadUrl', async (req) => {
  const { services, account } = req;
  await requireToolsOrEditor(services.plans, account, 'upload PDFs');
  const size = parseUploadSize(req.json());
  return json(200, await createPdfUploadUrl(services, account, size));
});
