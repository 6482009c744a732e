import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { NotifyingBulkProgress, NotifyingChargeStore, NotifyingJobRepository, queueNotifier } from '../../../../functions/adapters/outbox/notify';
import { jobEvent } from '../../../../functions/core/events/events';
import { newJob } from '../../../../functions/core/jobs/job';
import type { OutboxNotice } from '../../../../functions/core/webhooks/ports';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
const mock = mockClient(doc);
afterEach(() => mock.reset());

const now = new Date('2026-02-01T00:00:00.000Z');
const job = newJob({ job_id: 'job_1', account_id: 'acc_1', job_type: 'long', status: 'queued', mode: 'html', now });

function setup(fail = false) {
  const order: string[] = [];
  const sent: OutboxNotice[] = [];
  const logged: string[] = [];
  const queue = {
    send: async (m: OutboxNotice) => {
      order.push('notice');
      if (fail) throw new Error('queue down');
      sent.push(m);
    },
  };
  mock.on(TransactWriteCommand).callsFake(() => {
    order.push('commit');
    return {};
  });
  mock.on(PutCommand).callsFake(() => {
    order.push('commit');
    return {};
  });
  const notify = queueNotifier(() => queue, (m) => logged.push(m));
  return {
    order,
    sent,
    logged,
    repo: new NotifyingJobRepository({ doc, table: 't' }, notify),
    charges: new NotifyingChargeStore({ doc, table: 't' }, notify),
    bulk: new NotifyingBulkProgress({ doc, table: 't' }, notify),
  };
}

describe('notify after commit', () => {
  it('announces each event of a job write to the dispatcher once the write has committed', async () => {
    const { order, sent, repo } = setup();
    const events = [jobEvent('job.queued', job, now), jobEvent('job.processing', job, now)];
    await repo.put(job, events);
    expect(order).toEqual(['commit', 'notice', 'notice']);
    expect(sent).toEqual(events.map((e) => ({ job_id: 'job_1', event_id: e.event_id })));
    await repo.put(job);
    expect(sent).toHaveLength(2);
  });

  it("passes a queued job's start record through to the write", async () => {
    const { repo } = setup();
    await repo.put(job, [jobEvent('job.queued', job, now)], { via: 'render-queue' });
    const items = mock.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!.map((t) => t.Put!.Item!);
    expect(items.map((i) => i.sk)).toEqual(['JOB', expect.stringMatching(/^EVENT#/), 'START']);
  });

  it('sends nothing when the write did not happen', async () => {
    const { sent, repo } = setup();
    mock.on(TransactWriteCommand).rejects(new TransactionCanceledException({ message: 'no', $metadata: {}, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }));
    expect(await repo.putIf(job, ['queued'], [jobEvent('job.processing', job, now)])).toBe(false);
    mock.on(TransactWriteCommand).rejects(new Error('throttled'));
    await expect(repo.put(job, [jobEvent('job.queued', job, now)])).rejects.toThrow('throttled');
    expect(sent).toEqual([]);
  });

  it('announces the events of a write under a held lease once committed, and none when the lease was lost', async () => {
    const { order, sent, repo } = setup();
    const failed = { ...job, status: 'failed' as const };
    const event = jobEvent('job.failed', failed, now);
    expect(await repo.putIfLeaseHeld(failed, '2026-02-01T00:15:00.000Z', [event])).toBe(true);
    expect(order).toEqual(['commit', 'notice']);
    expect(sent).toEqual([{ job_id: 'job_1', event_id: event.event_id }]);
    mock.on(TransactWriteCommand).rejects(new TransactionCanceledException({ message: 'no', $metadata: {}, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }));
    expect(await repo.putIfLeaseHeld(failed, '2026-02-01T00:15:00.000Z', [jobEvent('job.failed', failed, now)])).toBe(false);
    expect(sent).toHaveLength(1);
  });

  it("passes a conditional write's watch through to the write", async () => {
    const { repo } = setup();
    expect(await repo.putIf(job, ['queued'], [jobEvent('job.processing', job, now)], undefined, { via: 'render-queue' })).toBe(true);
    const items = mock.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!.map((t) => t.Put!.Item!);
    expect(items.map((i) => i.sk)).toEqual(['JOB', expect.stringMatching(/^EVENT#/), 'START']);
  });

  it('keeps the write when the notice cannot be sent (the sweeper covers it)', async () => {
    const { logged, repo } = setup(true);
    await expect(repo.put(job, [jobEvent('job.queued', job, now)])).resolves.toBeUndefined();
    expect(logged.join(' ')).toMatch(/sweeper/);
  });

  it('announces the events of a committed charge, and none for a repeated one', async () => {
    const { sent, charges } = setup();
    const charge = { account_id: 'acc_1', job_id: 'job_1', unit: 'pdf', operation: 'pdf' as const, amount_micros: 10_000, pdf_count: 1 };
    const event = jobEvent('job.completed', job, now);
    expect(await charges.commit(charge, 'credits', now, { job, events: [event] })).toBe('charged');
    expect(sent).toEqual([{ job_id: 'job_1', event_id: event.event_id }]);
    mock.on(TransactWriteCommand).rejects(new TransactionCanceledException({ message: 'dup', $metadata: {}, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }));
    expect(await charges.commit(charge, 'credits', now, { job, events: [jobEvent('job.completed', job, now)] })).toBe('already_charged');
    expect(sent).toHaveLength(1);
  });

  it("announces a bulk job's finishing events once written, and none when the finish did not happen", async () => {
    const { order, sent, bulk } = setup();
    const finished = { ...job, job_type: 'bulk' as const, status: 'completed' as const };
    const event = jobEvent('bulk.job.completed', finished, now);
    expect(await bulk.finishJob(finished, [event], false)).toBe(true);
    expect(order).toEqual(['commit', 'notice']);
    expect(sent).toEqual([{ job_id: 'job_1', event_id: event.event_id }]);
    mock.on(TransactWriteCommand).rejects(new TransactionCanceledException({ message: 'no', $metadata: {}, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }));
    expect(await bulk.finishJob(finished, [jobEvent('bulk.job.completed', finished, now)], true)).toBe(false);
    expect(sent).toHaveLength(1);
  });

  it('leaves events to the sweeper in functions without the dispatcher queue', async () => {
    const logged: string[] = [];
    await queueNotifier(() => null, (m) => logged.push(m))([jobEvent('job.queued', job, now)]);
    await queueNotifier(() => {
      throw new Error('WEBHOOK_QUEUE_URL is not set');
    }, (m) => logged.push(m))([jobEvent('job.queued', job, now)]);
    expect(logged).toHaveLength(1);
  });
});
