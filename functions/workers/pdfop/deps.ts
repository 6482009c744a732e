import type { Services } from '../../composition';
import type { PdfJobDeps } from '../../core/pdfops/background';
import { workflowJobDeps } from '../job-deps';

/** What background merge/split code uses of the services (the workflow tasks and POST /pdf/jobs). */
export function pdfJobDeps(svc: Services): PdfJobDeps {
  return { ...workflowJobDeps(svc), timeoutSeconds: svc.config.pdfJobTimeoutSeconds };
}
