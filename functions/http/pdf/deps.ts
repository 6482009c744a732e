import type { Services } from '../../composition';
import type { PdfOpDeps } from '../../core/pdfops/instant';
import type { PdfJobDeps } from '../../core/pdfops/background';

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

export function jobDeps(s: Services): PdfJobDeps {
  return { ...instantDeps(s), slots: s.jobSlots, workflows: s.workflows, accounts: s.accounts, plans: s.plans, timeoutSeconds: s.config.pdfJobTimeoutSeconds };
}
