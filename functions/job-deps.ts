import type { Services } from './composition';
import type { BulkDeps } from './core/bulk/deps';
import type { LongJobEndingDeps, LongJobWorkerDeps } from './core/conversion/longjob';
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
  return { ...workflowJobDeps(svc), renderer: svc.renderer, progress: svc.bulkProgress, timing: svc.config.bulkTiming, logUnexpected: (m, e) => svc.log.error(m, e) };
}

/** Background merge/split: POST /pdf/jobs and the pdfop workflow's tasks. */
export function pdfJobDeps(svc: Services): PdfJobDeps {
  return { ...workflowJobDeps(svc), timeoutSeconds: svc.config.pdfJobTimeoutSeconds };
}

/** The long-job render worker. */
export function longJobWorkerDeps(svc: Services): LongJobWorkerDeps {
  return {
    jobs: svc.jobs,
    blobs: svc.blobs,
    renderer: svc.renderer,
    clock: svc.clock,
    accounts: svc.accounts,
    plans: svc.plans,
    billing: svc.billing,
    mailer: svc.mailer,
    slots: svc.jobSlots,
    queue: svc.renderQueue,
    share: svc.config.longjobShare,
    log: (m, e) => svc.log.warn(m, e),
  };
}

/**
 * Ending a long job a worker gave up on (its last delivery failed, or it reached the dead-letter queue). Accounts and
 * mailer are read only for the failure email, once the failure is written: one that cannot be set up (what the
 * delivery may have failed on) costs the email, not the record.
 */
export function longJobEndingDeps(svc: Services): LongJobEndingDeps {
  return {
    jobs: svc.jobs,
    clock: svc.clock,
    get accounts() {
      return svc.accounts;
    },
    get mailer() {
      return svc.mailer;
    },
    log: (m, e) => svc.log.warn(m, e),
  };
}
