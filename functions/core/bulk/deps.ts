import type { AccountRepository, PlanRepository } from '../accounts/ports';
import type { Billing } from '../billing/charging';
import type { Clock } from '../clock';
import type { JobFileRepository } from '../jobs/files';
import type { BlobStore, JobRepository } from '../jobs/ports';
import type { JobSlots } from '../jobs/slots';
import type { Renderer } from '../render/ports';
import type { WorkflowStarter } from '../workflows/ports';
import type { BulkTiming } from './limits';
import type { BulkProgress } from './ports';

/** The workflow (statemachines/bulk.asl.json) and the slot kind of bulk jobs. */
export const BULK_WORKFLOW = 'bulk';
export const BULK_SLOT_KIND = 'bulk';

export interface BulkDeps {
  jobs: JobRepository;
  files: JobFileRepository;
  blobs: BlobStore;
  billing: Billing;
  clock: Clock;
  slots: JobSlots;
  workflows: WorkflowStarter;
  accounts: AccountRepository;
  plans: PlanRepository;
  renderer: Renderer;
  progress: BulkProgress;
  timing: BulkTiming;
  log?: (message: string, err: unknown) => void;
}
