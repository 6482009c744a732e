/**
 * An execution can end without reaching its RecordFailure state: the whole execution timed out (the ASL's top-level
 * TimeoutSeconds has no Catch), someone stopped it, or a state failed outside any Catch. Its job would then stay
 * `processing` for good. Step Functions reports every ending as an "Execution Status Change" event; the workflow's
 * own failure recorder takes those (an EventBridge rule in AWS, the local runner when an execution rejects) and ends
 * the job as it would from the ASL's Catch. Recorders leave a finished job as it is, so the ending of an execution
 * that already recorded its failure changes nothing.
 */

/** Step Functions' "Execution Status Change" event, as far as a failure recorder reads it. */
export interface ExecutionEndedEvent {
  detail: {
    status: string;
    /** The execution's input, as JSON text. */
    input?: string | null;
    error?: string | null;
    cause?: string | null;
  };
}

/** Endings that can leave a job unfinished. */
export const UNFINISHED_ENDINGS = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;

export interface FailureTaskInput {
  job_id: string;
  account_id?: string;
  /** As the ASL's Catch sets it. */
  error?: { Error?: string; Cause?: string };
}

/**
 * Whether a failed step ran out of time: its state's TimeoutSeconds (`States.Timeout`), or its function's own timeout,
 * which Step Functions reports as the function's error (`Sandbox.Timedout`; older runtimes an unhandled error whose
 * cause says "Task timed out"). A Task and its Lambda given the same limit race for which one reports it.
 */
export function isTimeoutError(error: FailureTaskInput['error']): boolean {
  if (!error) return false;
  return error.Error === 'States.Timeout' || error.Error === 'Sandbox.Timedout' || /Task timed out after/.test(error.Cause ?? '');
}

function isExecutionEndedEvent(input: unknown): input is ExecutionEndedEvent {
  return typeof input === 'object' && input !== null && typeof (input as ExecutionEndedEvent).detail?.status === 'string';
}

/**
 * The failure recorder's input: as the ASL's Catch passes it, or made from an ended execution's event (its input,
 * with a timeout named `States.Timeout` as a timed-out task is). Null for an event that names no job.
 */
export function failureTaskInput(input: FailureTaskInput | ExecutionEndedEvent): FailureTaskInput | null {
  if (!isExecutionEndedEvent(input)) return input;
  const { status, error, cause } = input.detail;
  let original: unknown;
  try {
    original = JSON.parse(input.detail.input ?? 'null');
  } catch {
    return null;
  }
  const jobId = (original as { job_id?: unknown } | null)?.job_id;
  if (typeof jobId !== 'string' || jobId === '') return null;
  const accountId = (original as { account_id?: unknown }).account_id;
  const name = status === 'TIMED_OUT' ? 'States.Timeout' : (error ?? `States.${status}`);
  return { job_id: jobId, ...(typeof accountId === 'string' ? { account_id: accountId } : {}), error: { Error: name, ...(cause ? { Cause: cause } : {}) } };
}

/**
 * The failure recorder's input for a job that its execution left unfinished when it ended with `status` (null: no
 * execution found), as the start sweeper's watch finds it (core/jobs/starts.ts).
 */
export function strandedJobFailure(job: { job_id: string; account_id: string }, status: string | null): FailureTaskInput {
  const input = JSON.stringify({ job_id: job.job_id, account_id: job.account_id });
  return failureTaskInput({ detail: { status: status ?? 'FAILED', input, cause: 'The workflow execution ended without recording the outcome of its job.' } })!;
}
