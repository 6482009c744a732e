import { requirePdfTools } from '../../core/pdfops/access';
import { runInstantOp } from '../../core/pdfops/instant';
import { parseMergeRequest } from '../../core/pdfops/requests';
import { authedRoute } from '../route';
import { instantDeps } from './deps';
import { readMerge } from './inputs';
import { respondInstant } from './respond';

/** POST /pdf/merge: 2–20 PDFs (multipart `files` or JSON `inputs`), 4 MB in total, in the order given. */
export const handler = authedRoute('pdf.merge', async (req) => {
  const { services, account } = req;
  const plan = await requirePdfTools(services.plans, account);
  const request = parseMergeRequest(readMerge(req));
  return respondInstant(await runInstantOp(instantDeps(services), { account, plan, operation: 'merge', request, spentMs: req.sinceReceivedMs() }));
});
