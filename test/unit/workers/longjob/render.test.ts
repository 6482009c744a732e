import type { SQSEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../../functions/composition';
import { handler } from '../../../../functions/workers/longjob/render';
import { MemoryJobs } from '../../../support/memory';

afterEach(() => setServices(null));

describe('long-job render worker', () => {
  it('runs with the environment its Lambda gets: no render queue URL (it queues nothing)', async () => {
    const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const svc = { jobs: new MemoryJobs(), clock: { now: () => new Date() }, config: {}, log };
    // What composition does in AWS without RENDER_QUEUE_URL: the getter throws.
    Object.defineProperty(svc, 'renderQueue', { get: () => { throw new Error('RENDER_QUEUE_URL is not set'); } });
    for (const name of ['blobs', 'renderer', 'accounts', 'plans', 'billing', 'mailer']) Object.defineProperty(svc, name, { get: () => ({}) });
    setServices(svc as unknown as Services);
    const event = { Records: [{ messageId: 'm1', body: JSON.stringify({ job_id: 'job_gone' }), attributes: { ApproximateReceiveCount: '1' } }] } as unknown as SQSEvent;
    // A job that no longer exists is skipped: the message is done, not failed back for redelivery.
    expect(await handler(event)).toEqual({ batchItemFailures: [] });
    expect(log.error).not.toHaveBeenCalled();
  });
});
