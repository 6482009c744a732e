import type { Services } from '../../composition';
import type { BulkDeps } from '../../core/bulk/deps';
import { workflowJobDeps } from '../job-deps';

/** What bulk code uses of the services (the workflow tasks, POST /bulkjob and the cancel route). */
export function bulkDeps(svc: Services): BulkDeps {
  return { ...workflowJobDeps(svc), renderer: svc.renderer, progress: svc.bulkProgress, timing: svc.config.bulkTiming };
}
