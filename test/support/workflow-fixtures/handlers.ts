/** Task handlers for the local Step Functions tests: they record their calls and fail as told. */
import { TransientTaskError } from '../../../functions/core/workflows/ports';

export const calls: { task: string; input: any }[] = [];

export async function flaky(input: { id: string; failTimes: number; errorName?: string }) {
  const attempt = calls.filter((c) => c.task === 'flaky' && c.input.id === input.id).length + 1;
  calls.push({ task: 'flaky', input });
  if (attempt <= input.failTimes) {
    if (input.errorName) {
      const err = new Error(`attempt ${attempt} failed for good`);
      err.name = input.errorName;
      throw err;
    }
    throw new TransientTaskError(`attempt ${attempt} failed`);
  }
  return { attempt };
}

export async function recover(input: unknown) {
  calls.push({ task: 'recover', input });
  return { recovered: true };
}

/** Blocks until `gate.open` (a task interrupted mid-run when the runner stops). */
export const gate = { open: false };

export async function gated(input: { id: string }) {
  calls.push({ task: 'gated', input });
  while (!gate.open) await new Promise((r) => setTimeout(r, 5));
  return { passed: true };
}

/** Sleeps `sleepMs` (a task that outlasts its execution's time limit). */
export async function sleepy(input: { sleepMs: number }) {
  calls.push({ task: 'sleepy', input });
  await new Promise((r) => setTimeout(r, input.sleepMs));
  return { slept: true };
}

/** A failure recorder: records what it was given (a Catch's input, or an ended execution's event). */
export async function ended(input: unknown) {
  calls.push({ task: 'ended', input });
  return { recorded: true };
}

/** Records how long its Lambda context says it has left (the deadline the runner gave the task). */
export async function timed(input: { id: string }, context: { getRemainingTimeInMillis(): number }) {
  calls.push({ task: 'timed', input: { ...input, remainingMs: context.getRemainingTimeInMillis() } });
  return { timed: true };
}
