/** A durable queue feeding a worker (SQS in AWS, the in-process queue locally). Delivery is at-least-once. */
export interface MessageQueue<T> {
  send(message: T): Promise<void>;
}

/** The render queue's message: which long job to render. */
export interface RenderJobMessage {
  job_id: string;
}
