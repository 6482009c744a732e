/**
 * The local stand-in for an SQS queue feeding a Lambda: messages are delivered to the same worker handler
 * with SQS-shaped events (one record each), at least once. A failed delivery (the handler throws or lists
 * the record in batchItemFailures) becomes visible again after `retryDelayMs`; after `maxReceiveCount`
 * deliveries the message is dead-lettered. Pending messages are kept in a file so queued work survives a restart,
 * and so are messages being delivered: like SQS, one whose delivery never finished (the process died) becomes
 * visible again once its handler would have timed out, plus a margin (past a long job's lease, so the job is taken over),
 * unless the queue knows how to release what the dead delivery held (`recoverUnfinished`): then it is delivered again
 * as soon as the queue starts.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Redelivery } from '../../functions/adapters/sqs/redelivery';
import type { MessageQueue } from '../../functions/core/jobs/queue';
import { writeFileAtomic, readJsonFile } from '../files';
import { lambdaContext } from '../handlers';

interface Stored {
  id: string;
  body: string;
  receiveCount: number;
  sentAt: number;
  /** While being delivered: when the message becomes visible again if the delivery never finishes. */
  visibleAt?: number;
}

/** Beyond the handler's timeout before an unfinished delivery is given again (a long job's lease is timeout + 60 s). */
const IN_FLIGHT_MARGIN_MS = 90_000;

export interface LocalQueueOptions {
  name: string;
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;
  concurrency: number;
  maxReceiveCount: number;
  retryDelayMs: number;
  /** Lambda timeout given to the handler (getRemainingTimeInMillis). */
  timeoutMs: number;
  persistDir?: string;
  /** Beyond `timeoutMs` before an unfinished delivery is given again (default 90 s: past a long job's lease). */
  inFlightMarginMs?: number;
  /** Hold messages until start() (default: deliver from construction). */
  paused?: boolean;
  /**
   * Given the body of each delivery the last process did not finish, when the queue starts: it releases what that
   * delivery held (the process, and with it the worker, is gone), and the message is delivered again at once. If it
   * throws, the message waits as SQS would make it wait.
   */
  recoverUnfinished?: (body: unknown) => Promise<void>;
  /** The dead-letter queue's worker (QueueDef.deadLetterHandler), given each message as it is dead-lettered. */
  deadLetterHandler?: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;
  log?: (message: string, err?: unknown) => void;
}

/**
 * ChangeMessageVisibility for the local queues, by the queue name in the record's ARN. A failed message comes back
 * after the wait its worker asked for, but never later than the queue's `retryDelayMs` (tests keep retries quick).
 */
export class LocalRedelivery implements Redelivery {
  constructor(private readonly queues: ReadonlyMap<string, LocalQueue<unknown>>) {}

  async after(record: { eventSourceARN: string; receiptHandle: string }, seconds: number): Promise<void> {
    const queue = this.queues.get(record.eventSourceARN.split(':').pop() ?? '');
    if (!queue) throw new Error(`no local queue for ${record.eventSourceARN}`);
    queue.changeVisibility(record.receiptHandle, seconds * 1000);
  }
}

export class LocalQueue<T> implements MessageQueue<T> {
  private waiting: Stored[] = [];
  private inFlight = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private started = false;
  private idle: (() => void)[] = [];
  readonly deadLetters: Stored[] = [];
  private readonly file?: string;
  private readonly parked = new Map<string, Stored>();
  private readonly delivering = new Map<string, Stored>();
  /** Deliveries the last process did not finish, held until start() has recovered them (recoverUnfinished). */
  private readonly unfinished = new Map<string, Stored>();
  /** Nothing is delivered while unfinished deliveries are recovered: one recovered later must not undo a new claim. */
  private recovering = false;
  /** Waits asked for by the handler for messages being delivered (ChangeMessageVisibility), by receipt handle. */
  private readonly requestedDelays = new Map<string, number>();

  constructor(private readonly opts: LocalQueueOptions) {
    if (opts.persistDir) {
      mkdirSync(opts.persistDir, { recursive: true });
      this.file = path.join(opts.persistDir, `${opts.name}.json`);
      const now = Date.now();
      for (const message of readJsonFile<Stored[]>(this.file, [], opts.log)) {
        // A delivery the last process did not finish: invisible until its handler would have timed out, unless what it
        // held can be released (start()).
        if (message.visibleAt && message.visibleAt > now && opts.recoverUnfinished) this.unfinished.set(message.id, message);
        else if (message.visibleAt && message.visibleAt > now) this.parkUntil(message, message.visibleAt - now);
        else this.waiting.push({ ...message, visibleAt: undefined });
      }
    }
    if (!opts.paused) this.start();
  }

  /** Starts delivering (a queue made `paused` holds its messages until the service it feeds is ready). */
  start(): void {
    this.started = true;
    if (this.unfinished.size === 0) {
      setImmediate(() => this.pump());
      return;
    }
    this.recovering = true;
    Promise.all([...this.unfinished.values()].map((message) => this.recover(message)))
      .catch((err) => this.opts.log?.(`queue ${this.opts.name}: recovering unfinished deliveries failed`, err))
      .finally(() => {
        this.recovering = false;
        this.pump();
      });
  }

  private async recover(message: Stored): Promise<void> {
    let released = false;
    try {
      await this.opts.recoverUnfinished!(JSON.parse(message.body));
      released = true;
    } catch (err) {
      this.opts.log?.(`queue ${this.opts.name}: could not release what unfinished message ${message.id} held; it is delivered again after its timeout`, err);
    }
    // Stopped meanwhile: it stays unfinished in the file for the next start.
    if (this.stopped || !this.unfinished.delete(message.id)) return;
    if (released) this.waiting.push({ ...message, visibleAt: undefined });
    else this.parkUntil(message, Math.max(0, (message.visibleAt ?? 0) - Date.now()));
    this.persist();
  }

  async send(message: T, options: { delaySeconds?: number } = {}): Promise<void> {
    if (this.stopped) throw new Error(`queue ${this.opts.name} is stopped`);
    const stored: Stored = { id: randomUUID(), body: JSON.stringify(message), receiveCount: 0, sentAt: Date.now() };
    const delayMs = Math.min(900, Math.max(0, options.delaySeconds ?? 0)) * 1000;
    if (delayMs > 0) this.parkUntil(stored, delayMs);
    else this.waiting.push(stored);
    this.persist(true);
    setImmediate(() => this.pump());
  }

  /** The handler's ChangeMessageVisibility on a message it is being given (other receipts are stale: ignored, as SQS refuses them). */
  changeVisibility(receiptHandle: string, delayMs: number): void {
    const id = receiptHandle.split('#')[0];
    const message = this.delivering.get(id);
    if (message && receiptHandle === `${message.id}#${message.receiveCount}`) this.requestedDelays.set(receiptHandle, delayMs);
  }

  /** Resolves when nothing is waiting, in flight or scheduled for retry (tests). */
  drained(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    // Messages waiting for a retry go back to the file, so a restart delivers them again.
    this.waiting.push(...this.parked.values());
    this.parked.clear();
    this.persist();
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 20));
  }

  private isIdle() {
    return this.waiting.length === 0 && this.inFlight === 0 && this.parked.size === 0 && this.unfinished.size === 0;
  }

  /**
   * Writes the queue's state file. When that fails (a full or read-only DATA_DIR) a send fails with it (`sendFails`: its
   * sender learns the message may not survive a restart); anywhere else it is logged and the queue goes on in memory —
   * thrown from a delivery's bookkeeping it ended the whole process, and a restart at worst delivers a message again.
   */
  private persist(sendFails = false) {
    if (!this.file) return;
    try {
      writeFileAtomic(this.file, JSON.stringify([...this.waiting, ...this.parked.values(), ...this.delivering.values(), ...this.unfinished.values()]));
    } catch (err) {
      if (sendFails) throw err;
      this.opts.log?.(`queue ${this.opts.name}: could not write its state file (is DATA_DIR full or read-only?); going on in memory`, err);
    }
  }

  /** Holds a message back for `delayMs`, then makes it visible again. */
  private parkUntil(message: Stored, delayMs: number) {
    this.parked.set(message.id, message);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.parked.delete(message.id);
      this.waiting.push({ ...message, visibleAt: undefined });
      this.pump();
    }, delayMs);
    this.timers.add(timer);
  }

  private pump() {
    while (this.started && !this.recovering && !this.stopped && this.inFlight < this.opts.concurrency && this.waiting.length > 0) {
      const message = this.waiting.shift()!;
      this.inFlight++;
      message.receiveCount++;
      message.visibleAt = Date.now() + this.opts.timeoutMs + (this.opts.inFlightMarginMs ?? IN_FLIGHT_MARGIN_MS);
      this.delivering.set(message.id, message);
      this.persist();
      this.deliver(message).finally(() => {
        this.inFlight--;
        this.delivering.delete(message.id);
        message.visibleAt = undefined;
        this.persist();
        if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
        this.pump();
      });
    }
  }

  private async deliver(message: Stored) {
    const receiptHandle = `${message.id}#${message.receiveCount}`;
    const record: SQSRecord = {
      messageId: message.id,
      receiptHandle,
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:${this.opts.name}`,
      awsRegion: 'local',
    };
    const context = lambdaContext(this.opts.name, this.opts.timeoutMs);
    let ok = false;
    try {
      const result = await this.opts.handler({ Records: [record] }, context);
      ok = !(result?.batchItemFailures ?? []).some((f) => f.itemIdentifier === message.id);
    } catch (err) {
      this.opts.log?.(`queue ${this.opts.name}: delivery failed`, err);
    }
    const requested = this.requestedDelays.get(receiptHandle);
    this.requestedDelays.delete(receiptHandle);
    if (ok) return;
    if (message.receiveCount >= this.opts.maxReceiveCount) {
      this.deadLetters.push(message);
      this.opts.log?.(`queue ${this.opts.name}: message ${message.id} dead-lettered after ${message.receiveCount} deliveries`);
      if (this.opts.deadLetterHandler) {
        const deadLetter = { ...record, eventSourceARN: `${record.eventSourceARN}-dead-letters`, receiptHandle: `${message.id}#dead` };
        await this.opts.deadLetterHandler({ Records: [deadLetter] }, lambdaContext(`${this.opts.name}-dead-letters`, 30_000)).catch((err) =>
          this.opts.log?.(`queue ${this.opts.name}: the dead-letter worker failed on message ${message.id}`, err),
        );
      }
      return;
    }
    message.visibleAt = undefined;
    this.parkUntil(message, Math.min(requested ?? this.opts.retryDelayMs, this.opts.retryDelayMs));
  }
}
