import type { Renderer } from '../render/ports';
import type { WorkflowJobDeps } from '../workflows/job-deps';
import type { BulkTiming } from './limits';
import type { BulkProgress } from './ports';

/** The workflow (statemachines/bulk.asl.json) and the slot kind of bulk jobs. */
export const BULK_WORKFLOW = 'bulk';
export const BULK_SLOT_KIND = 'bulk';

export interface BulkDeps extends WorkflowJobDeps {
  renderer: Renderer;
  progress: BulkProgress;
  timing: BulkTiming;
  /** A file's render failing for no reason the document explains (a crash, a protocol error): logged as an error, to be alerted on. */
  logUnexpected?: (message: string, err: unknown) => void;
}
