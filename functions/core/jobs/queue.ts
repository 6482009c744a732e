/** A durable queue feeding a worker (SQS in AWS, the in-process queue locally). Delivery is at-least-once. */
export interface MessageQueue<T> {
  /** Sends a message; with `delaySeconds` (at most 900, as in SQS) it is delivered no sooner than that. */
  send(message: T, options?: { delaySeconds?: number }): Promise<void>;
}

/** The render queue's message: which long job to render. */
export interface RenderJobMessage {
  job_id: string;
  /** How often the job was sent back already because its account had its share of jobs rendering (absent: never). */
  deferrals?: number;
}

/**
 * How often a message was sent back already because its account had its share of workers (a long job's render, a
 * webhook dispatch): its `deferrals` when that is a positive count, else 0.
 */
export function deferralsOf(message: { deferrals?: unknown } | null | undefined): number {
  const deferrals = Number(message?.deferrals);
  return Number.isSafeInteger(deferrals) && deferrals > 0 ? deferrals : 0;
}

/**
 * The wait before a message sent back for the `deferrals`-th time is tried again: 2, 4, 8, 16 s, … up to `maxSeconds`
 * (and at least 1 s), so a share freed soon is used soon and a long wait costs few tries.
 */
export function deferralDelaySeconds(deferrals: number, maxSeconds: number): number {
  return Math.max(1, Math.min(maxSeconds, 2 ** Math.min(Math.max(1, deferrals), 10)));
}

/** A render message read from its body; null for a body that is not one (not JSON, no job_id). */
export function readRenderJobMessage(body: string): RenderJobMessage | null {
  try {
    const message = JSON.parse(body) as { job_id?: unknown; deferrals?: unknown } | null;
    const jobId = message?.job_id;
    if (typeof jobId !== 'string' || jobId === '') return null;
    return { job_id: jobId, deferrals: deferralsOf(message) };
  } catch {
    return null;
  }
}
