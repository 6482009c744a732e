import type { SQSEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../../functions/composition';
import { handler } from '../../../../functions/workers/webhooks/dispatch';

afterEach(() => setServices(null));

const record = (messageId: string, body: string, count = 1) => ({ messageId, body, attributes: { ApproximateReceiveCount: String(count) } });

function services(outboxGet: (jobId: string, eventId: string) => Promise<unknown>) {
  const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
  const redelivery = { after: jest.fn(async () => undefined) };
  const markDispatched = jest.fn(async () => undefined);
  setServices({
    outbox: { get: outboxGet, markDispatched },
    webhooks: { listForAccount: async () => [] },
    clock: { now: () => new Date('2026-11-24T12:00:00Z') },
    config: {},
    log,
    redelivery,
  } as unknown as Services);
  return { log, redelivery, markDispatched };
}

describe('webhook dispatcher worker', () => {
  it('reports a message whose dispatch failed back for redelivery, after the queue backoff for its delivery count', async () => {
    const { log, redelivery } = services(async () => Promise.reject(new Error('table unavailable')));
    const event = { Records: [record('m1', JSON.stringify({ job_id: 'job_1', event_id: 'evt_1' }), 2)] } as unknown as SQSEvent;
    // Acknowledged, the event would wait for the sweeper (or be lost with its notice): the failure is handed back.
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(redelivery.after).toHaveBeenCalledWith(expect.objectContaining({ messageId: 'm1' }), 60);
    expect(log.error).toHaveBeenCalledWith('dispatcher failed on message m1', expect.any(Error));
  });

  it('finishes a dispatched message and drops (logging) a malformed one, failing back only the one that failed', async () => {
    const pending = { event: { event: 'job.completed', event_id: 'evt_ok', job_id: 'job_ok', account_id: 'acct1' }, pending: true };
    const { log, redelivery, markDispatched } = services(async (jobId) => (jobId === 'job_ok' ? pending : Promise.reject(new Error('throttled'))));
    const event = {
      Records: [record('m0', 'not json'), record('m1', JSON.stringify({ job_id: 'job_ok', event_id: 'evt_ok' })), record('m2', JSON.stringify({ job_id: 'job_bad', event_id: 'evt_bad' }))],
    } as unknown as SQSEvent;
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm2' }] });
    // No webhook subscribed: the event leaves the pending index.
    expect(markDispatched).toHaveBeenCalledWith('job_ok', 'evt_ok', '2026-11-24T12:00:00.000Z');
    expect(redelivery.after).toHaveBeenCalledTimes(1);
    expect(log.error.mock.calls.map(([m]) => m)).toEqual(['dispatcher: ignoring a malformed message m0', 'dispatcher failed on message m2']);
  });
});
