import { type Services, setServices } from '../../../../functions/composition';
import type { PendingEvent } from '../../../../functions/core/webhooks/ports';
import { handler } from '../../../../functions/workers/webhooks/sweep';

afterEach(() => setServices(null));

describe('the outbox sweeper', () => {
  it("goes by the services' clock", async () => {
    // Years behind the real clock: by that one, both events would be a day old and given up.
    const now = new Date('2020-03-01T12:00:00.000Z');
    const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();
    const events: PendingEvent[] = [
      { job_id: 'job_old', event_id: 'evt_old', created_at: ago(25 * 60) },
      { job_id: 'job_due', event_id: 'evt_due', created_at: ago(5) },
      { job_id: 'job_new', event_id: 'evt_new', created_at: ago(1) },
    ];
    const markDispatched = jest.fn(async () => undefined);
    const outbox = { shards: 1, markDispatched, listPending: async (_shard: number, before: string) => events.filter((e) => e.created_at < before) };
    const webhookQueue = { send: jest.fn(async () => undefined) };
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    setServices({ outbox, webhookQueue, clock: { now: () => now }, config: {}, log } as unknown as Services);

    expect(await handler()).toEqual({ sent: 1, abandoned: 1 });
    expect(webhookQueue.send.mock.calls).toEqual([[{ job_id: 'job_due', event_id: 'evt_due' }]]);
    expect(markDispatched.mock.calls).toEqual([['job_old', 'evt_old', now.toISOString()]]);
  });
});
