/**
 * Task handlers standing in for the service's own (workers/bulk/tasks, workers/pdfop/tasks) so that the real ASL
 * files can be run: each answers or throws as its job's script says, attempt by attempt, and records its calls.
 */
export type Step = Record<string, unknown> | { throws: string };

export const scripts = new Map<string, Record<string, Step[]>>();
export const taskCalls: { state: string; input: any }[] = [];
/** RenderFile calls running at once, and the most seen. */
export const rendering = { now: 0, most: 0, holdMs: 0 };

function act(state: string, input: any): Record<string, unknown> {
  taskCalls.push({ state, input });
  const steps = scripts.get(input?.job_id)?.[state] ?? [{}];
  const attempt = taskCalls.filter((c) => c.state === state && c.input?.job_id === input?.job_id && c.input?.index === input?.index).length - 1;
  const step = steps[Math.min(attempt, steps.length - 1)];
  if ('throws' in step) {
    const err = new Error(`${state} attempt ${attempt + 1} failed`);
    err.name = String(step.throws);
    throw err;
  }
  return step;
}

export const prepare = async (input: unknown) => act('Prepare', input);
export const finish = async (input: unknown) => act('Finish', input);
export const markProcessing = async (input: unknown) => act('MarkProcessing', input);
export const processJob = async (input: unknown) => act('Process', input);
export const recordFailure = async (input: unknown) => act('RecordFailure', input);
export async function renderFile(input: unknown) {
  rendering.now++;
  rendering.most = Math.max(rendering.most, rendering.now);
  try {
    if (rendering.holdMs) await new Promise((r) => setTimeout(r, rendering.holdMs));
    return act('RenderFile', input);
  } finally {
    rendering.now--;
  }
}
