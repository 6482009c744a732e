import { createPdfUploadUrl, parseUploadSize } from '../../core/pdfops/background';
import { requirePdfTools } from '../../core/pdfops/access';
import { json } from '../responses';
import { authedRoute } from '../route';

/** POST /pdf/upload-url: a presigned PUT (15 minutes) for one PDF of exactly `content_length_bytes` (≤ 150 MB). */
export const handler = authedRoute('pdf.uploadUrl', async (req) => {
  const { services, account } = req;
  await requirePdfTools(services.plans, account);
  const size = parseUploadSize(req.json());
  return json(200, await createPdfUploadUrl(services, account, size));
});
