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
