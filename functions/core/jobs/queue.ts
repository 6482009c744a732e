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

/** A render message read from its body; null for a body that is not one (not JSON, no job_id). */
export function readRenderJobMessage(body: string): RenderJobMessage | null {
  try {
    const message = JSON.parse(body) as { job_id?: unknown; deferrals?: unknown } | null;
    const jobId = message?.job_id;
    if (typeof jobId !== 'string' || jobId === '') return null;
    const deferrals = Number(message?.deferrals);
    return { job_id: jobId, deferrals: Number.isSafeInteger(deferrals) && deferrals > 0 ? deferrals : 0 };
  } catch {
    return null;
  }
}
