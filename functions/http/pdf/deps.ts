import type { Services } from '../../composition';
import type { PdfOpDeps } from '../../core/pdfops/instant';

export function instantDeps(s: Services): PdfOpDeps {
  return {
    jobs: s.jobs,
    files: s.jobFiles,
    blobs: s.blobs,
    billing: s.billing,
    clock: s.clock,
    timeoutSeconds: s.config.pdfopTimeoutSeconds,
    log: (m, e) => s.log.warn(m, e),
  };
}
