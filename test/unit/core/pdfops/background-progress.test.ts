/**
 * A background merge/split job's progress writes against its completion. Two things keep a progress write from
 * putting a completed job back to processing: the job waits for its own progress writes before its final write, and a
 * progress write is conditional on the job still processing (which is all that stops a write of another attempt of
 * the task, one Step Functions gave up on while it still runs). The interleavings are forced by holding writes.
 */
import { newUlid } from '../../../../functions/core/ids';
import type { Job } from '../../../../functions/core/jobs/job';
import { objectKey } from '../../../../functions/core/jobs/storage-layout';
import { type PdfJobDeps, markProcessing, processPdfJob, submitPdfJob } from '../../../../functions/core/pdfops/background';
import { parsePdfJobRequest } from '../../../../functions/core/pdfops/requests';
import { memoryWorld } from '../../../support/memory';
import { simplePdf } from '../../../support/pdf-fixtures';

type World = ReturnType<typeof memoryWorld>;

/** Far beyond what the test takes: the job's time budget reads the stepped Date.now below. */
const deps = (w: World): PdfJobDeps => ({ ...w, timeoutSeconds: 10 ** 9 });

/** A queued-then-processing job splitting out pages 1-3 of a three-page upload: one output, no ZIP. */
async function processingJob(w: World): Promise<string> {
  const key = objectKey('uploads', w.account.account_id, 'pdf', `${newUlid()}.pdf`);
  await w.blobs.put(key, await simplePdf(3), 'application/pdf');
  const request = parsePdfJobRequest({ operation: 'split', inputs: [{ s3_key: key, filename: 's.pdf' }], split: { mode: 'extract', pages: '1-3' } });
  const { job_id } = await submitPdfJob(deps(w), { account: w.account, plan: w.plan, request });
  await markProcessing(deps(w), { job_id });
  return job_id;
}

/** A progress write: the processing job as it goes (the job's claim is the other write of a processing job, over a queued one too). */
const isProgress = (job: Job, from: Job['status'][]) => job.status === 'processing' && !from.includes('queued');
/** The last one: written once every output exists. */
const isLastProgress = (job: Job, from: Job['status'][]) => isProgress(job, from) && job.output_count !== undefined && job.outputs_produced === job.output_count;
/** Resolves once `p` settled, either way. */
const settled = (p: Promise<unknown>) => p.then(() => undefined, () => undefined);

/** Progress is written at most every 2 s of Date.now: stepping it 2 s a read makes every report a write. */
function everyReportWritten() {
  let t = Date.now();
  jest.spyOn(Date, 'now').mockImplementation(() => (t += 2_000));
}
afterEach(() => jest.restoreAllMocks());

describe('background merge/split progress against completion', () => {
  it('makes no final write while a progress write of its own is unanswered', async () => {
    const w = memoryWorld();
    const job_id = await processingJob(w);
    everyReportWritten();
    const writes: string[] = [];
    let unanswered = 0;
    const putIf = w.jobs.putIf.bind(w.jobs);
    w.jobs.putIf = async (job, from, ...rest) => {
      if (!isProgress(job, from)) return putIf(job, from, ...rest);
      unanswered++;
      // The last one is answered only on the event loop's next turn. The job's work yields a turn after its last
      // file (before it returns), so by then the job is either waiting for this answer or has gone on to its final writes.
      if (isLastProgress(job, from)) await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        return await putIf(job, from, ...rest);
      } finally {
        unanswered--;
      }
    };
    const noting = <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) => (...args: A) => {
      if (unanswered > 0) writes.push(name);
      return fn(...args);
    };
    w.files.deleteAll = noting('rows', w.files.deleteAll.bind(w.files));
    w.chargeStore.commit = noting('charge and completion', w.chargeStore.commit.bind(w.chargeStore));

    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'completed' });
    expect(writes).toEqual([]);
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'completed', outputs_produced: 1, processed_count: 3 });
  });

  it("refuses a late progress write of an attempt the workflow gave up on, after the retry completed the job", async () => {
    const w = memoryWorld();
    const job_id = await processingJob(w);
    everyReportWritten();
    // The first attempt's last progress write is held until the retry has completed the job.
    let lastWriteArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (lastWriteArrived = resolve));
    let landLastWrite!: () => void;
    const mayLand = new Promise<void>((resolve) => (landLastWrite = resolve));
    let lastWrite: Promise<boolean> | null = null;
    const firstJobs = Object.create(w.jobs) as typeof w.jobs;
    firstJobs.putIf = (job, from, ...rest) => {
      if (!isLastProgress(job, from)) return w.jobs.putIf(job, from, ...rest);
      lastWrite = mayLand.then(() => w.jobs.putIf(job, from, ...rest));
      lastWriteArrived();
      return lastWrite;
    };
    const first = processPdfJob({ ...deps(w), jobs: firstJobs }, { job_id });
    await Promise.race([arrived, settled(first)]);
    expect(lastWrite).not.toBeNull();

    expect(await processPdfJob(deps(w), { job_id })).toEqual({ job_id, status: 'completed' });
    const completed = (await w.jobs.get(job_id))!;
    expect(completed.status).toBe('completed');
    landLastWrite();
    expect(await lastWrite).toBe(false);
    expect(await w.jobs.get(job_id)).toEqual(completed);

    // The first attempt then finds the job charged and completed, and leaves it so.
    expect(await first).toEqual({ job_id, status: 'completed' });
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'completed', completed_at: completed.completed_at, output: completed.output });
    expect(await w.blobs.head(completed.output!.key)).not.toBeNull();
    expect(w.chargeStore.ledger.size).toBe(1);
  });
});
