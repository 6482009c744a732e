/**
 * The SQS queues and the worker each one feeds, as plain data: the CDK app builds queue, dead-letter queue,
 * alarm and event-source mapping from it; the local stack builds an in-process queue invoking the same handler.
 */
import type { FunctionProfile, Permission } from './routes';

export interface QueueDef {
  name: 'render' | 'webhooks';
  /** Environment variable carrying the queue URL to functions that send to it. */
  urlVariable: string;
  /** Worker handler, "<file under functions/>#<export>". */
  handler: string;
  profile: FunctionProfile;
  /** Worker Lambda timeout; the queue's visibility timeout is longer, so a message is never redelivered mid-run. */
  timeoutSeconds: number;
  visibilityTimeoutSeconds: number;
  /** Deliveries before a message goes to the dead-letter queue. */
  maxReceiveCount: number;
  /** Wait before a failed message comes back, by how often it was received (the last value for later ones). */
  retryDelaysSeconds: readonly number[];
  permissions: Permission[];
  /** The worker sends service email (a long job's "PDF ready"): only then does it get the SMTP secret. */
  sendsMail: boolean;
  /**
   * In AWS, the most worker invocations the queue runs at once (the event source's maximum concurrency): a backlog
   * — for instance many long jobs that spin until their limit, which are not charged — waits in the queue instead of
   * taking the account's whole Lambda concurrency, which the API's handlers need. Unlike reserved concurrency, messages
   * beyond it are not received, so they use up no deliveries.
   */
  maxConcurrency: number;
  /**
   * Worker of the dead-letter queue, "<file under functions/>#<export>": it ends what the messages there were
   * about (a long job whose workers all died without a word) rather than leave it waiting for ever.
   */
  deadLetterHandler?: string;
}

/** What a dead-letter worker may do: end the job and announce it (its event goes to the webhook dispatcher). */
export const DEAD_LETTER_PERMISSIONS: Permission[] = ['table:read', 'table:write', 'queue:webhooks'];

export const QUEUES: readonly QueueDef[] = [
  {
    name: 'render',
    urlVariable: 'RENDER_QUEUE_URL',
    handler: 'workers/longjob/render#handler',
    profile: 'render',
    timeoutSeconds: 900,
    // AWS's guidance for Lambda event sources: at least 6× the function timeout, so receives spent while the
    // function is throttled do not use up maxReceiveCount before it ever ran.
    visibilityTimeoutSeconds: 5400,
    maxReceiveCount: 3,
    retryDelaysSeconds: [60, 300],
    // queue:render: a job over its account's share of rendering workers goes back to the queue with a delay.
    permissions: ['table:read', 'table:write', 'bucket:read', 'bucket:write', 'bucket:delete', 'queue:render', 'queue:webhooks'],
    sendsMail: true,
    maxConcurrency: 50,
    deadLetterHandler: 'workers/longjob/dead-letter#handler',
  },
  {
    // The webhook dispatcher: one message per outbox event. A series to one webhook takes at most ~47 s
    // (4 attempts of 10 s, waits of 1+2+4 s); a webhook's deliveries run in parallel with the others'. An account has
    // 10 of the 50 dispatchers at most (core/webhooks/dispatch.ts): events over that go back to this queue, delayed.
    name: 'webhooks',
    urlVariable: 'WEBHOOK_QUEUE_URL',
    handler: 'workers/webhooks/dispatch#handler',
    profile: 'standard',
    timeoutSeconds: 120,
    visibilityTimeoutSeconds: 720,
    maxReceiveCount: 5,
    retryDelaysSeconds: [10, 60, 300, 600],
    // bucket:read:outputs: an event's link is to a stored result, never to an upload or an input.
    permissions: ['table:read', 'table:write', 'bucket:read:outputs', 'webhook:secrets', 'queue:webhooks'],
    sendsMail: false,
    maxConcurrency: 50,
  },
];

/** The queue definition of a queue name. */
export function queueDef(name: QueueDef['name']): QueueDef {
  return QUEUES.find((q) => q.name === name)!;
}

/** How long a message failed on its `receiveCount`-th delivery waits before it comes back. */
export function retryDelaySeconds(def: QueueDef, receiveCount: number): number {
  const delays = def.retryDelaysSeconds;
  return delays[Math.min(Math.max(1, receiveCount), delays.length) - 1];
}
