import { requirePaidPlan } from '../../core/accounts/entitlements';
import { parseBulkUploadSize } from '../../core/bulk/requests';
import { createBulkUploadUrl, maxZipBytes, requireBulk } from '../../core/bulk/submit';
import { json } from '../responses';
import { authedRoute } from '../route';

/** POST /bulkjob/upload-url: a presigned PUT (15 minutes) for one ZIP of exactly `content_length_bytes` (≤ the plan's max_bulk_zip_mb). */
export const handler = authedRoute('bulkjob.uploadUrl', async (req) => {
  const { services, account } = req;
  const plan = await requirePaidPlan(services.plans, account);
  requireBulk(plan);
  const size = parseBulkUploadSize(req.json(), maxZipBytes(plan));
  return json(200, await createBulkUploadUrl(services, account, plan, size));
});
