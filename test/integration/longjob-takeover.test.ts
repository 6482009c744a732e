import { LONGJOB_RENDER_SLOT_KIND } from '../../functions/core/conversion/longjob';
import { newJob } from '../../functions/core/jobs/job';
import { objectKey } from '../../functions/core/jobs/storage-layout';
import { parsePdfOptions } from '../../functions/core/render/options';
import { type TestStack, jobEventNames, mailsTo, startTestStack } from '../support/stack';
import { type TableCommand, type TableFaults, interceptTable, putItems } from '../support/table-faults';
import { until } from '../support/wait';

/**
 * A render worker alive past its lease (A) and the worker that took the job over (B), over the real table and
 * Chromium: the completing writes are held at the table so that either reaches it first.
 */
let stack: TestStack;
let faults: TableFaults;

beforeAll(async () => {
  stack = await startTestStack({ LONGJOB_TIMEOUT_SECONDS: '3', LONGJOB_RENDERS_PER_ACCOUNT: '2', LONGJOB_DEFER_SECONDS: '1', LOCAL_QUEUE_RETRY_MS: '100' });
  faults = interceptTable(stack);
});
afterAll(async () => {
  faults && (faults.hook = null);
  await stack?.stop();
});

const queue = () => stack.queues.get('render')!;

describe('a long job taken over while its first worker is still alive', () => {
  it.each(['A first', 'B first'] as const)('%s: completed, charged, announced and emailed once; one output, the one the job names; slots back', async (order) => {
    const email = `race-${order.charAt(0).toLowerCase()}@example.com`;
    const owner = await stack.account({ credits_usd: 1, email });
    const job = newJob({ job_id: `job_race_${order.charAt(0)}${Date.now()}`, account_id: owner.account_id, job_type: 'long', status: 'queued', mode: 'html', now: new Date() });
    const jobId = job.job_id;
    const input_key = objectKey('jobInputs', owner.account_id, jobId, 'document.json');
    await stack.services.blobs.put(input_key, Buffer.from(JSON.stringify({ html: '<p>raced</p>', options: parsePdfOptions({}) })), 'application/json');
    await stack.services.jobs.put({ ...job, input_key });

    // Each worker's completing transaction (the job written completed) waits at the table until the test lets it go.
    // `landed` settles once that write has reached the table (committed or refused).
    const held: { cmd: TableCommand; go: () => void; landed: Promise<unknown> }[] = [];
    const completes = (cmd: TableCommand) => cmd.constructor.name === 'TransactWriteCommand' && putItems(cmd).some((item) => item.job_id === jobId && item.status === 'completed');
    faults.hook = (cmd, send) => {
      if (!completes(cmd)) return undefined;
      let go!: () => void;
      const landed = new Promise<void>((resolve) => (go = resolve)).then(() => send(cmd));
      held.push({ cmd, go, landed: landed.catch(() => undefined) });
      return landed;
    };
    try {
      await queue().send({ job_id: jobId });
      await until("A's completion", () => held.length === 1);
      // A's lease runs out (it is still alive, its write on its way); B's message takes the job over.
      const claimedByA = (await stack.services.jobs.get(jobId))!;
      await stack.services.jobs.put({ ...claimedByA, lease_until: new Date(Date.now() - 1).toISOString() });
      await queue().send({ job_id: jobId });
      await until("B's completion", () => held.length === 2);
      const [a, b] = held;
      const [first, second] = order === 'A first' ? [a, b] : [b, a];
      first.go();
      await first.landed;
      second.go();
      await queue().drained();
      const outputOf = (h: { cmd: TableCommand }) => putItems(h.cmd).find((item) => item.status === 'completed')!.output.key as string;
      const stored = (await stack.services.jobs.get(jobId))!;
      expect(stored).toMatchObject({ status: 'completed', lease_until: null, output: { key: outputOf(b) } });
      // One ready email (before, the late worker's charge found the ledger entry, took it for its own and emailed too).
      expect(mailsTo(stack, email).filter((m) => m.includes('is ready'))).toHaveLength(1);
      expect(outputOf(a)).not.toBe(outputOf(b));
      // B's output is stored as the job records it; A's is gone.
      expect(await stack.services.blobs.head(outputOf(b))).toMatchObject({ size_bytes: stored.output!.size_bytes });
      expect(await stack.services.blobs.head(outputOf(a))).toBeNull();
      expect(await jobEventNames(stack, jobId)).toEqual(['job.processing', 'job.completed']);
      const account = (await stack.services.accounts.get(owner.account_id))!;
      expect(account).toMatchObject({ total_pdf_count: 1 });
      expect(account.credits_micros).toBeLessThan(1_000_000);
      expect(await stack.services.jobSlots.holders({ accountId: owner.account_id, kind: LONGJOB_RENDER_SLOT_KIND, now: new Date() })).toEqual([]);
      expect(await stack.services.blobs.head(input_key)).toBeNull();
    } finally {
      faults.hook = null;
      held.forEach((h) => h.go());
    }
  }, 90_000);
});
