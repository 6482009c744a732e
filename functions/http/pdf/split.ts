import { requirePdfTools } from '../../core/pdfops/access';
import { runInstantOp } from '../../core/pdfops/instant';
import { parseSplitRequest } from '../../core/pdfops/requests';
import { authedRoute } from '../route';
import { instantDeps } from './deps';
import { readSplit } from './inputs';
import { respondInstant } from './respond';

/** POST /pdf/split: one PDF (4 MB, 500 pages) into up to 100 files. */
export const handler = authedRoute('pdf.split', async (req) => {
  const { services, account } = req;
  const plan = await requirePdfTools(services.plans, account);
  const request = parseSplitRequest(readSplit(req));
  return respondInstant(await runInstantOp(instantDeps(services), { account, plan, operation: 'split', request, spentMs: req.sinceReceivedMs() }));
});
