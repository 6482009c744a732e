import type { Services } from '../composition';
import type { WorkflowJobDeps } from '../core/workflows/job-deps';

/** The services a workflow-run job uses (the workflow tasks and the routes that submit or cancel such jobs). */
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
