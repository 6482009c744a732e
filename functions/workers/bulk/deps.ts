import type { Services } from '../../composition';
import type { BulkDeps } from '../../core/bulk/deps';

/** What bulk code uses of the services (the workflow tasks, POST /bulkjob and the cancel route). */
export function bulkDeps(svc: Services): BulkDeps {
  return {
    jobs: svc.jobs,
    files: svc.jobFiles,
    blobs: svc.blobs,
    billing: svc.billing,
    clock: svc.clock,
    slots: svc.jobSlots,
    workflows: svc.workflows,
    accounts: svc.accounts,
    plans: svc.plans,
    renderer: svc.renderer,
    progress: svc.bulkProgress,
    timing: svc.config.bulkTiming,
    log: (m, e) => svc.log.warn(m, e),
  };
}
