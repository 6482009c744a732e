/** Step Functions' statuses of an execution. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

/**
 * Workflows are Step Functions state machines defined by the ASL files in statemachines/ (see
 * functions/workflows.ts). Domain code starts one by name; in AWS that is StartExecution, locally the same
 * ASL runs in-process with the same task handlers.
 */
export interface WorkflowStarter {
  /**
   * Starts an execution of `workflow` with `input`. `name` makes the start idempotent (a second start with
   * the same name is not a second execution).
   */
  start(workflow: string, input: Record<string, unknown>, opts?: { name?: string }): Promise<{ executionId: string }>;
  /**
   * The status of `workflow`'s execution named `name` (DescribeExecution), null when there is none. The local runner
   * keeps ended executions for 90 days as Step Functions does (across restarts when it has a journal).
   */
  status(workflow: string, name: string): Promise<ExecutionStatus | null>;
}

/** Raised by task handlers for failures worth retrying (the ASL's Retry matches this error name). */
export class TransientTaskError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientTaskError';
  }
}
