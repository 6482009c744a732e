import fs, { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { LocalQueue, type LocalQueueOptions, LocalRedelivery } from '../../../../local/emulators/queue';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function queue(dir: string, handler: (event: SQSEvent) => Promise<void>, opts: { timeoutMs?: number; inFlightMarginMs?: number; log?: LocalQueueOptions['log'] } = {}) {
  return new LocalQueue<{ n: number }>({
    name: 'work',
    handler,
    concurrency: 1,
    maxReceiveCount: 3,
    retryDelayMs: 10,
    timeoutMs: opts.timeoutMs ?? 100,
    inFlightMarginMs: opts.inFlightMarginMs ?? 100,
    persistDir: dir,
    log: opts.log,
  });
}

/**
 * Resolves once a fresh queue has delivered a message sent now. Pumps run on setImmediate, in order, so by then every
 * pump the queues under test had scheduled has run: a check that they delivered nothing is not merely early.
 */
async function anotherQueueDelivered(): Promise<void> {
  let delivered!: () => void;
  const done = new Promise<void>((resolve) => (delivered = resolve));
  const control = new LocalQueue<{ n: number }>({ name: 'control', handler: async () => delivered(), concurrency: 1, maxReceiveCount: 1, retryDelayMs: 10, timeoutMs: 100 });
  try {
    await control.send({ n: 0 });
    await done;
  } finally {
    await control.stop();
  }
}

/** Timers fire by a millisecond clock of their own: Date.now() may read one millisecond short of a time they waited for. */
const TIMER_SLACK_MS = 1;

describe('LocalQueue across a crash', () => {
  it('keeps a message whose delivery never finished, and gives it again once its handler would have timed out', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    // The first process takes the message and dies in the middle of its delivery: its handler does not return
    // (until the end of the test, where this queue, still alive inside the test process, is let go and stopped).
    let delivering!: () => void;
    const crashedDelivering = new Promise<void>((resolve) => (delivering = resolve));
    let releaseCrashed: (() => void) | undefined;
    const crashed = queue(dir, () => {
      delivering();
      return new Promise<void>((resolve) => (releaseCrashed = resolve));
    });
    let restarted: LocalQueue<{ n: number }> | undefined;
    try {
      await crashed.send({ n: 1 });
      await crashedDelivering;
      const stored = JSON.parse(readFileSync(path.join(dir, 'work.json'), 'utf8'));
      expect(stored).toEqual([expect.objectContaining({ body: '{"n":1}', receiveCount: 1, visibleAt: expect.any(Number) })]);

      // A new process on the same directory: nothing before the visibility deadline, then one delivery.
      const seen: { at: number; body: string; receives: string }[] = [];
      restarted = queue(dir, async (event) => {
        const [record] = event.Records;
        seen.push({ at: Date.now(), body: record.body, receives: record.attributes.ApproximateReceiveCount });
      });
      await anotherQueueDelivered();
      expect(seen).toEqual([]);
      await restarted.drained();
      expect(seen).toEqual([{ at: expect.any(Number), body: '{"n":1}', receives: '2' }]);
      expect(seen[0].at).toBeGreaterThanOrEqual(stored[0].visibleAt - TIMER_SLACK_MS);
      expect(JSON.parse(readFileSync(path.join(dir, 'work.json'), 'utf8'))).toEqual([]);
    } finally {
      await restarted?.stop();
      releaseCrashed?.();
      await crashed.stop();
    }
  });
});

describe('LocalQueue deliveries in flight', () => {
  it("keeps a message being delivered invisible past its handler's timeout by the margin (90 s unless set), as the state file records it", async () => {
    for (const margin of [undefined, 60_000]) {
      const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
      dirs.push(dir);
      let delivering!: () => void;
      const started = new Promise<void>((resolve) => (delivering = resolve));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const q = new LocalQueue<{ n: number }>({
        name: 'work',
        concurrency: 1,
        maxReceiveCount: 3,
        retryDelayMs: 10,
        timeoutMs: 1000,
        inFlightMarginMs: margin,
        persistDir: dir,
        handler: async () => {
          delivering();
          await held;
        },
      });
      try {
        const sentAt = Date.now();
        await q.send({ n: 1 });
        await started;
        const [stored] = JSON.parse(readFileSync(path.join(dir, 'work.json'), 'utf8'));
        expect(stored.visibleAt).toBeGreaterThanOrEqual(sentAt + 1000 + (margin ?? 90_000));
      } finally {
        release();
        await q.stop();
      }
    }
  });
});

describe('LocalQueue recovery of unfinished deliveries', () => {
  /** A state file as a process that died while delivering `{n: 1}` leaves it (visible again in `visibleInMs`). */
  function crashedState(dir: string, visibleInMs = 3_600_000): number {
    const visibleAt = Date.now() + visibleInMs;
    writeFileSync(path.join(dir, 'work.json'), JSON.stringify([{ id: 'm1', body: '{"n":1}', receiveCount: 1, sentAt: Date.now(), visibleAt }]));
    return visibleAt;
  }

  /** A queue over `dir` (a 100 ms handler timeout) that recovers unfinished deliveries with `recoverUnfinished`. */
  const recoveringQueue = (dir: string, opts: Pick<LocalQueueOptions, 'handler' | 'recoverUnfinished'> & Partial<LocalQueueOptions>) =>
    new LocalQueue<{ n: number }>({ name: 'work', concurrency: 1, maxReceiveCount: 3, retryDelayMs: 10, timeoutMs: 100, persistDir: dir, ...opts });

  it('releases what the dead delivery held, then delivers it again at start, not after its timeout', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    crashedState(dir);
    const order: string[] = [];
    const q = recoveringQueue(dir, {
      handler: async (event) => void order.push(`deliver ${event.Records[0].body} #${event.Records[0].attributes.ApproximateReceiveCount}`),
      recoverUnfinished: async (body) => void order.push(`recover ${JSON.stringify(body)}`),
      paused: true,
    });
    try {
      // Nothing happens before start(): the services the recovery uses are not set up yet.
      await anotherQueueDelivered();
      expect(order).toEqual([]);
      q.start();
      await q.drained();
      expect(order).toEqual(['recover {"n":1}', 'deliver {"n":1} #2']);
    } finally {
      await q.stop();
    }
  });

  const failingQueue = (dir: string, delivered: { at: number; body: string }[], log: string[]) =>
    recoveringQueue(dir, {
      handler: async (event) => void delivered.push({ at: Date.now(), body: event.Records[0].body }),
      recoverUnfinished: async () => {
        throw new Error('table unavailable');
      },
      log: (m) => void log.push(m),
    });

  it('waits for the timeout as before when the recovery fails', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    const visibleAt = crashedState(dir, 300);
    const log: string[] = [];
    const delivered: { at: number; body: string }[] = [];
    const q = failingQueue(dir, delivered, log);
    try {
      await anotherQueueDelivered();
      expect(log).toEqual([expect.stringMatching(/could not release what unfinished message m1 held/)]);
      expect(delivered).toEqual([]);
      await q.drained();
      expect(delivered).toEqual([{ at: expect.any(Number), body: '{"n":1}' }]);
      expect(delivered[0].at).toBeGreaterThanOrEqual(visibleAt - TIMER_SLACK_MS);
    } finally {
      await q.stop();
    }
  });

  it('keeps a message whose recovery failed across a stop', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    crashedState(dir);
    const log: string[] = [];
    const q = failingQueue(dir, [], log);
    await anotherQueueDelivered();
    // The recovery has failed before the stop.
    expect(log).toEqual([expect.stringMatching(/could not release what unfinished message m1 held/)]);
    await q.stop();
    expect(JSON.parse(readFileSync(path.join(dir, 'work.json'), 'utf8'))).toEqual([expect.objectContaining({ id: 'm1', body: '{"n":1}' })]);
  });

  it('delivers nothing, not even a message sent meanwhile, until every unfinished delivery is recovered', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    crashedState(dir);
    const order: string[] = [];
    let finishRecovery!: () => void;
    const q = recoveringQueue(dir, {
      handler: async (event) => void order.push(`deliver ${event.Records[0].body}`),
      recoverUnfinished: () => new Promise<void>((resolve) => (finishRecovery = () => (order.push('recovered'), resolve()))),
      concurrency: 2,
      paused: true,
    });
    try {
      q.start();
      await q.send({ n: 2 });
      await anotherQueueDelivered();
      expect(finishRecovery).toBeDefined(); // the recovery is under way
      expect(order).toEqual([]);
      finishRecovery();
      await q.drained();
      expect(order.slice(0, 1)).toEqual(['recovered']);
      expect(order.slice(1).sort()).toEqual(['deliver {"n":1}', 'deliver {"n":2}']);
    } finally {
      await q.stop();
    }
  });
});

describe('LocalQueue redelivery (ChangeMessageVisibility)', () => {
  it("brings a failed message back after the wait its handler asked for, capped at the queue's retry delay", async () => {
    const arrivals: number[] = [];
    const queues = new Map<string, LocalQueue<unknown>>();
    const redelivery = new LocalRedelivery(queues);
    const make = (retryDelayMs: number, askMs: number) =>
      new LocalQueue<{ n: number }>({
        name: 'work',
        concurrency: 1,
        maxReceiveCount: 2,
        retryDelayMs,
        timeoutMs: 1000,
        handler: async (event) => {
          const [record] = event.Records;
          arrivals.push(Date.now());
          if (record.attributes.ApproximateReceiveCount === '1') {
            await redelivery.after(record, askMs / 1000);
            // A stale receipt (an earlier delivery's) changes nothing, as SQS refuses it.
            await redelivery.after({ ...record, receiptHandle: `${record.messageId}#0` }, 0);
            return { batchItemFailures: [{ itemIdentifier: record.messageId }] };
          }
          return { batchItemFailures: [] };
        },
      });
    /** The wait between the two deliveries, and the delays of the timers the queue set meanwhile. */
    const gap = async (retryDelayMs: number, askMs: number) => {
      arrivals.length = 0;
      const q = make(retryDelayMs, askMs);
      queues.set('work', q as LocalQueue<unknown>);
      const timers = jest.spyOn(global, 'setTimeout');
      try {
        await q.send({ n: 1 });
        await q.drained();
        return { waited: arrivals[1] - arrivals[0], timers: timers.mock.calls.map(([, ms]) => ms) };
      } finally {
        timers.mockRestore();
        await q.stop();
      }
    };
    // Asked for 50 ms of a queue that would wait 2 s: 50 ms.
    const asked = await gap(2_000, 50);
    expect(asked.timers).toEqual([50]);
    expect(asked.waited).toBeGreaterThanOrEqual(50 - TIMER_SLACK_MS);
    // Asked for 5 s of a queue that waits 100 ms: 100 ms.
    const capped = await gap(100, 5_000);
    expect(capped.timers).toEqual([100]);
    expect(capped.waited).toBeGreaterThanOrEqual(100 - TIMER_SLACK_MS);
    await expect(redelivery.after({ eventSourceARN: 'arn:aws:sqs:local:000000000000:nowhere', receiptHandle: 'x#1' }, 1)).rejects.toThrow('no local queue');
  });
});

describe('LocalQueue delayed sends (SQS DelaySeconds)', () => {
  it('delivers a message sent with a delay no sooner than asked, as a first delivery, and keeps it across a stop', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    const seen: { at: number; receives: string }[] = [];
    const delayed = queue(dir, async (event) => void seen.push({ at: Date.now(), receives: event.Records[0].attributes.ApproximateReceiveCount }));
    try {
      await delayed.send({ n: 1 }, { delaySeconds: 0.2 });
      await anotherQueueDelivered();
      expect(seen).toEqual([]);
      const kept = JSON.parse(readFileSync(path.join(dir, 'work.json'), 'utf8'));
      expect(kept).toEqual([expect.objectContaining({ body: '{"n":1}', receiveCount: 0, sentAt: expect.any(Number) })]);
      await delayed.drained();
      expect(seen).toEqual([{ at: expect.any(Number), receives: '1' }]);
      expect(seen[0].at).toBeGreaterThanOrEqual(kept[0].sentAt + 200 - TIMER_SLACK_MS);
    } finally {
      await delayed.stop();
    }
  });
});

describe('LocalQueue state file', () => {
  it('goes on in memory when its state file cannot be written (a full disk), and tells a sender its message may not last', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    const logged: string[] = [];
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const q = queue(
      dir,
      async (event) => {
        seen.push(event.Records[0].body);
        await held;
      },
      { timeoutMs: 1000, log: (m) => logged.push(m) },
    );
    try {
      await q.send({ n: 1 });
      // The directory goes (as writes fail on a full disk) while the message is delivered: the delivery's bookkeeping
      // was thrown from a timer, uncaught, and ended the process.
      rmSync(dir, { recursive: true, force: true });
      release();
      await q.drained();
      expect(seen).toEqual(['{"n":1}']);
      expect(logged).toEqual(expect.arrayContaining([expect.stringMatching(/could not write its state file/)]));
      await expect(q.send({ n: 2 })).rejects.toThrow();
      await q.drained();
    } finally {
      await q.stop().catch(() => undefined);
    }
  });

  it('starts from a torn state file (moved aside and reported) instead of refusing to start', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'work.json'), '[{"id":"x","bo');
    const logged: string[] = [];
    const seen: string[] = [];
    const q = queue(dir, async (event) => void seen.push(event.Records[0].body), { log: (m) => logged.push(m) });
    try {
      expect(logged).toEqual([expect.stringMatching(/work\.json could not be read .*moved to .*work\.json\.corrupt-\d+/)]);
      expect(readdirSync(dir).filter((f) => f.startsWith('work.json.corrupt-'))).toHaveLength(1);
      await q.send({ n: 2 });
      await q.drained();
      expect(seen).toEqual(['{"n":2}']);
    } finally {
      await q.stop();
    }
  });

  it('replaces the state file in one step (a kill mid-write leaves the old file or the new, never a torn one)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    const q = queue(dir, async () => undefined);
    const renames = jest.spyOn(fs, 'renameSync');
    try {
      await q.send({ n: 1 });
      expect(renames).toHaveBeenCalledWith(expect.stringMatching(/work\.json\.\d+\.tmp$/), path.join(dir, 'work.json'));
      await q.drained();
    } finally {
      renames.mockRestore();
      await q.stop();
    }
  });

  it('holds kept messages while paused, until start()', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'queue-'));
    dirs.push(dir);
    const first = new LocalQueue<{ n: number }>({ name: 'work', handler: async () => undefined, concurrency: 1, maxReceiveCount: 3, retryDelayMs: 10, timeoutMs: 100, persistDir: dir, paused: true });
    await first.send({ n: 1 });
    await first.stop();
    const seen: string[] = [];
    const second = new LocalQueue<{ n: number }>({ name: 'work', handler: async (e) => void seen.push(e.Records[0].body), concurrency: 1, maxReceiveCount: 3, retryDelayMs: 10, timeoutMs: 100, persistDir: dir, paused: true });
    try {
      await anotherQueueDelivered();
      expect(seen).toEqual([]);
      second.start();
      await second.drained();
      expect(seen).toEqual(['{"n":1}']);
    } finally {
      await second.stop();
    }
  });
});

describe('LocalQueue dead letters', () => {
  it('gives a message that used up its deliveries to the dead-letter worker, once', async () => {
    const deadLetters: { body: string; receives: string }[] = [];
    const q = new LocalQueue<{ n: number }>({
      name: 'work',
      handler: async () => {
        throw new Error('the worker fails every time');
      },
      deadLetterHandler: async (event) => void deadLetters.push({ body: event.Records[0].body, receives: event.Records[0].attributes.ApproximateReceiveCount }),
      concurrency: 1,
      maxReceiveCount: 3,
      retryDelayMs: 5,
      timeoutMs: 100,
    });
    try {
      await q.send({ n: 7 });
      await q.drained();
      expect(deadLetters).toEqual([{ body: '{"n":7}', receives: '3' }]);
      expect(q.deadLetters).toHaveLength(1);
    } finally {
      await q.stop();
    }
  });
});

describe('LocalQueue concurrency and delay limits', () => {
  it('gives its handler no more messages at once than its concurrency (the Lambda reserved concurrency)', async () => {
    let running = 0;
    let most = 0;
    const q = new LocalQueue<{ n: number }>({
      name: 'limited',
      concurrency: 2,
      maxReceiveCount: 1,
      retryDelayMs: 10,
      timeoutMs: 1000,
      handler: async () => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
      },
    });
    try {
      for (let n = 0; n < 6; n++) await q.send({ n });
      await q.drained();
      expect(most).toBe(2);
    } finally {
      await q.stop();
    }
  });

  it('holds a message sent with a delay over 15 minutes for 15 minutes, the most SQS allows (as the SQS adapter sends it)', async () => {
    const q = new LocalQueue<{ n: number }>({ name: 'delays', concurrency: 1, maxReceiveCount: 1, retryDelayMs: 10, timeoutMs: 1000, handler: async () => undefined });
    const timers = jest.spyOn(global, 'setTimeout');
    try {
      await q.send({ n: 1 }, { delaySeconds: 3600 });
      expect(timers.mock.calls.map(([, ms]) => ms)).toEqual([900_000]);
    } finally {
      timers.mockRestore();
      await q.stop();
    }
  });
});
