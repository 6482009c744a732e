import type { Services } from './composition';
import type { BulkDeps } from './core/bulk/deps';
import type { PdfJobDeps } from './core/pdfops/background';
import type { WorkflowJobDeps } from './core/workflows/job-deps';

/**
 * What the workflow-run jobs use of the services, picked once for both sides that need it: the routes that submit or
 * cancel such jobs and the workflow tasks that run them.
 */
export function workflowJobDeps(svc: Services): WorkflowJobDeps {
  return {
    jobs: svc.jobs,
    files: svc.jobFiles,
    blobs: svc.blobs,
    billing: svc.billing,
    clock: svc.clock,
    slots: svc.jobSlots,
    commitments: svc.commitments,
    workflows: svc.workflows,
    accounts: svc.accounts,
    plans: svc.plans,
    log: (m, e) => svc.log.warn(m, e),
  };
}

/** Bulk jobs: POST /bulkjob, the cancel route and the bulk workflow's tasks. */
export function bulkDeps(svc: Services): BulkDeps {
  return { ...workflowJobDeps(svc), renderer: svc.renderer, progress: svc.bulkProgress, timing: svc.config.bulkTiming };
}

/** Background merge/split: POST /pdf/jobs and the pdfop workflow's tasks. */
export function pdfJobDeps(svc: Services): PdfJobDeps {
  return { ...workflowJobDeps(svc), timeoutSeconds: svc.config.pdfJobTimeoutSeconds };
}
