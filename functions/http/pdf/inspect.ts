import { requireToolsOrEditor } from '../../core/pdfops/access';
import { parseInspectRequest, runInspect } from '../../core/pdfops/inspect';
import { json } from '../responses';
import { authedRoute } from '../route';
import { readInspect } from './inputs';

/** POST /pdf/inspect: free, not a job. Multipart `file`, JSON `input.pdf_base64`, or `{s3_key, filename}`; `for: "edit"`. */
export const handler = authedRoute('pdf.inspect', async (req) => {
  const { services, account } = req;
  await requireToolsOrEditor(services.plans, account, 'inspect PDFs');
  const { source, forEdit } = parseInspectRequest(readInspect(req));
  return json(200, await runInspect(services, account, source, forEdit));
});
