import type { Clock } from '../clock';
import { mapBounded } from '../concurrency';
import type { WorkflowStarter } from '../workflows/ports';
import type { Job } from './job';
import type { JobRepository } from './ports';
import type { MessageQueue, RenderJobMessage } from './queue';

/**
 * How a queued job is set going once it is stored: a message on the render queue (long jobs), or an execution of
 * a workflow named after the job (bulk, background merge/split).
 */
export type JobStart = { via: 'render-queue' } | { via: 'workflow'; workflow: string };

/**
 * A start recorded with its job and not yet confirmed as sent (see `JobRepository.put`), or the watch a worker's
 * claim puts on a job it renders (`JobRepository.putIf` with `watch`): due at the end of the claim's lease.
 */
export interface UnsentStart {
  job_id: string;
  account_id: string;
  created_at: string;
  /** When the sweeper looks at it: the job's creation for a start, the claim's lease end for a watch (absent: created_at). */
  due_at?: string;
  start: JobStart;
}

/**
 * Whether a job whose queued write (with its start) failed was written all the same (the reply was lost, not the
 * write): then the submission goes on and answers with the job. Unknown counts as not written: the caller deletes
 * what it stored for the job and frees what it held, so that a job written after all finds no input and fails
 * without a charge, instead of running for a client that was told 500.
 */
export async function jobWritten(jobs: Pick<JobRepository, 'get'>, jobId: string): Promise<boolean> {
  try {
    return (await jobs.get(jobId)) !== null;
  } catch {
    return false;
  }
}

export interface JobStartDeps {
  jobs: Pick<JobRepository, 'get' | 'startSent' | 'unsentStarts'>;
  renderQueue: MessageQueue<RenderJobMessage>;
  workflows: WorkflowStarter;
  clock: Clock;
  /**
   * Ends a job still processing after its worker's lease ran out: the worker stopped without recording an outcome
   * (killed for memory, or at its time limit). True when this call ended it.
   */
  endAbandoned?: (job: Job) => Promise<boolean>;
  log?: (message: string, err?: unknown) => void;
}

/** Sends a job's start. Both ways are safe to repeat: the worker claims a job once, an execution name runs once. */
export async function sendJobStart(deps: Pick<JobStartDeps, 'renderQueue' | 'workflows'>, job: { job_id: string; account_id: string }, start: JobStart): Promise<void> {
  if (start.via === 'render-queue') await deps.renderQueue.send({ job_id: job.job_id });
  else await deps.workflows.start(start.workflow, { job_id: job.job_id, account_id: job.account_id }, { name: job.job_id });
}

/**
 * Confirms that a job's start was sent, or (from the worker that ended the job) that its watch is over. A failure
 * here is only logged: the job did start, and the sweeper's later look finds it no longer queued and drops the record.
 * The submitter passes `due`, the job's creation: a worker that claimed the job meanwhile re-armed the record as its
 * watch, which must stay.
 */
export async function confirmStartSent(
  deps: { jobs: Pick<JobRepository, 'startSent'>; log?: (message: string, err?: unknown) => void },
  jobId: string,
  due?: string,
): Promise<void> {
  await deps.jobs.startSent(jobId, due).catch((err) => deps.log?.(`could not confirm the start of job ${jobId} (the start sweeper will)`, err));
}

/** A start unconfirmed for this long was lost (the writer died between storing the job and sending its start). */
export const UNSENT_START_GRACE_SECONDS = 120;
const SWEEP_LIMIT = 100;
const SWEEP_IN_FLIGHT = 4;

/**
 * The start sweeper (a schedule): a job is stored as queued together with a record of how it is to be started,
 * and that record is removed once the start was sent. A record older than two minutes means the writer died in
 * between — the job would stay queued for ever, holding its slot and its credit hold. If the job is still queued,
 * its start is sent again, and the record goes (unless a worker's claim has made it its watch meanwhile).
 *
 * A worker that claims a job records a watch the same way, due when its lease ends. Found two minutes after that with
 * the job still processing under the expired lease, the worker died without a word (the process was killed), and
 * `endAbandoned` ends the job — otherwise it would wait for the queue to deliver its message again, which in AWS
 * takes the visibility timeout (90 minutes). A job whose worker holds a live lease (a new claim) keeps its watch.
 */
export async function sendUnsentStarts(deps: JobStartDeps, opts: { graceSeconds?: number; limit?: number } = {}): Promise<{ sent: number; cleared: number; ended: number; failed: number }> {
  const now = deps.clock.now();
  const before = new Date(now.getTime() - (opts.graceSeconds ?? UNSENT_START_GRACE_SECONDS) * 1000).toISOString();
  const unsent = await deps.jobs.unsentStarts(before, opts.limit ?? SWEEP_LIMIT);
  const result = { sent: 0, cleared: 0, ended: 0, failed: 0 };
  await mapBounded(unsent, SWEEP_IN_FLIGHT, async (entry) => {
    try {
      const job = await deps.jobs.get(entry.job_id);
      if (job?.status === 'queued') {
        await sendJobStart(deps, job, entry.start);
        deps.log?.(`job ${entry.job_id} was stored but never started (${entry.start.via}); started it now`);
        result.sent++;
      } else if (job?.status === 'processing' && job.lease_until && job.lease_until >= now.toISOString()) {
        return; // a worker holds it: its claim re-armed the watch
      } else if (job?.status === 'processing' && deps.endAbandoned) {
        if (await deps.endAbandoned(job)) {
          deps.log?.(`job ${entry.job_id} was still processing after its worker's lease ran out (the worker stopped); ended it`);
          result.ended++;
        } else result.cleared++;
      } else result.cleared++;
      await deps.jobs.startSent(entry.job_id, entry.due_at ?? entry.created_at);
    } catch (err) {
      // Kept: the next run tries again.
      result.failed++;
      deps.log?.(`could not send the start of job ${entry.job_id}`, err);
    }
  });
  return result;
}
