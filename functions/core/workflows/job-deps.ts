import type { AccountRepository, PlanRepository } from '../accounts/ports';
import type { Billing } from '../billing/charging';
import type { CommitmentStore } from '../billing/commitments';
import type { Clock } from '../clock';
import type { JobFileRepository } from '../jobs/files';
import type { BlobStore, JobRepository } from '../jobs/ports';
import type { JobSlots } from '../jobs/slots';
import type { WorkflowStarter } from './ports';

/**
 * What a job run by a Step Functions workflow needs (background merge/split, bulk): its record and file rows,
 * storage, charging, the account's plan, one of the account's running slots, and the workflow itself.
 */
export interface WorkflowJobDeps {
  jobs: JobRepository;
  files: JobFileRepository;
  blobs: BlobStore;
  billing: Billing;
  clock: Clock;
  slots: JobSlots;
  /** What the account's running jobs will charge: the whole-job credit check. */
  commitments: CommitmentStore;
  workflows: WorkflowStarter;
  accounts: AccountRepository;
  plans: PlanRepository;
  log?: (message: string, err: unknown) => void;
}
