/**
 * The workflow table: every Step Functions state machine (an ASL file in statemachines/) and the Lambda
 * handler behind each of its Task states. The CDK app builds the state machines and task functions from
 * it (lib/state-machine.ts); the local stack runs the same ASL with the same handlers
 * (local/emulators/stepfunctions.ts). In the ASL, a task's `Resource` is `${<state name>}`.
 */
import type { FunctionProfile, Permission } from './routes';

export interface WorkflowTask {
  /** "<file under functions/, without .ts>#<export>" */
  ref: string;
  profile: FunctionProfile;
  permissions: Permission[];
  timeoutSeconds?: number;
}

export interface WorkflowDef {
  name: string;
  /** Path of the ASL file from the repository root. */
  definition: string;
  /** Task state name → handler. */
  tasks: Record<string, WorkflowTask>;
}

const JOB_WORK: Permission[] = ['table:read', 'table:write', 'bucket:read', 'bucket:write', 'bucket:delete'];

export const WORKFLOWS: readonly WorkflowDef[] = [
  {
    name: 'pdfop',
    definition: 'statemachines/pdfop.asl.json',
    tasks: {
      MarkProcessing: { ref: 'workers/pdfop/tasks#markProcessing', profile: 'light', permissions: ['table:read', 'table:write'] },
      Process: { ref: 'workers/pdfop/tasks#processJob', profile: 'worker', permissions: [...JOB_WORK, 'queue:webhooks'], timeoutSeconds: 900 },
      RecordFailure: { ref: 'workers/pdfop/tasks#recordFailure', profile: 'light', permissions: [...JOB_WORK, 'queue:webhooks'], timeoutSeconds: 120 },
    },
  },
  {
    // Bulk jobs: Prepare (check + extract the ZIP) → a Map of RenderFile (one Chromium Lambda per file, 10 at once) → Finish.
    name: 'bulk',
    definition: 'statemachines/bulk.asl.json',
    tasks: {
      Prepare: { ref: 'workers/bulk/tasks#prepare', profile: 'worker', permissions: [...JOB_WORK, 'queue:webhooks'], timeoutSeconds: 900 },
      RenderFile: { ref: 'workers/bulk/tasks#renderFile', profile: 'render', permissions: JOB_WORK, timeoutSeconds: 120 },
      Finish: { ref: 'workers/bulk/tasks#finish', profile: 'worker', permissions: [...JOB_WORK, 'queue:webhooks'], timeoutSeconds: 900 },
      RecordFailure: { ref: 'workers/bulk/tasks#recordFailure', profile: 'light', permissions: [...JOB_WORK, 'queue:webhooks'], timeoutSeconds: 120 },
    },
  },
];

/**
 * The Task state every workflow ends a failed job with: the target of its ASL's Catch, and of the ending of an
 * execution that never reached it (core/workflows/ended.ts).
 */
export const FAILURE_RECORDER = 'RecordFailure';

/** The environment variable carrying a workflow's state machine ARN to the functions that start it. */
export function workflowArnVariable(name: string): string {
  return `WORKFLOW_ARN_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}
