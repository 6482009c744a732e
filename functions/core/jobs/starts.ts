import type { Clock } from '../clock';
import { mapBounded } from '../concurrency';
import { writtenAfterAll } from '../lost-replies';
import type { ExecutionStatus, WorkflowStarter } from '../workflows/ports';
import type { Job } from './job';
import type { JobRepository } from './ports';
import type { MessageQueue, RenderJobMessage } from './queue';

/**
 * How a queued job is set going once it is stored: a message on the render queue (long jobs), or an execution of
 * a workflow named after the job (bulk, background merge/split).
 */
export type JobStart = { via: 'render-queue' } | { via: 'workflow'; workflow: string };

/**
 * A start recorded with its job and not yet confirmed as sent (see `JobRepository.put`), or a watch on a job that
 * started: the one a worker's claim puts on a long job it renders (`JobRepository.putIf` with `watch`), due at the end
 * of the claim's lease; the one a workflow-run job keeps while its execution runs (`watchWorkflowJob`).
 */
export interface StartRecord {
  job_id: string;
  account_id: string;
  created_at: string;
  /** When the sweeper looks at it: the job's creation for a start, the claim's lease end or the next look for a watch (absent: created_at). */
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
  return writtenAfterAll(async () => (await jobs.get(jobId)) !== null);
}

export interface JobStartDeps {
  jobs: Pick<JobRepository, 'get' | 'startSent' | 'dueStartRecords' | 'watchStart'>;
  renderQueue: MessageQueue<RenderJobMessage>;
  workflows: WorkflowStarter;
  clock: Clock;
  /**
   * Ends a job still processing after its worker's lease ran out: the worker stopped without recording an outcome
   * (killed for memory, or at its time limit). True when this call ended it.
   */
  endAbandoned?: (job: Job) => Promise<boolean>;
  /**
   * Ends a workflow-run job whose execution ended (`status`; null: none found) without finishing it, as the workflow's
   * failure recorder does; it leaves a job that finished meanwhile as it is.
   */
  endStranded: (job: Job, workflow: string, status: ExecutionStatus | null) => Promise<void>;
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

/** How often the sweeper asks whether a workflow-run job's execution still runs. */
export const WORKFLOW_WATCH_SECONDS = 600;

/**
 * A workflow-run job's start record, once its execution started, stays as a watch: every ten minutes the sweeper asks
 * whether the execution still runs, and ends the job if it ended without finishing it. That happens when a task fails
 * while the table cannot be written (a long outage): its RecordFailure state fails too, and so does the report of the
 * execution's end, and the job would stay processing with its slot and credit commitment held for good. A failure
 * here is only logged: the record stays due at `from`, and the sweeper's look then re-arms it.
 */
export async function watchWorkflowJob(
  deps: { jobs: Pick<JobRepository, 'watchStart'>; clock: Clock; log?: (message: string, err?: unknown) => void },
  jobId: string,
  from: string,
): Promise<void> {
  await deps.jobs.watchStart(jobId, from, nextWorkflowLook(deps.clock)).catch((err) => deps.log?.(`could not watch the workflow of job ${jobId} (the start sweeper will)`, err));
}

function nextWorkflowLook(clock: Clock): string {
  return new Date(clock.now().getTime() + WORKFLOW_WATCH_SECONDS * 1000).toISOString();
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
 *
 * A workflow-run job's record stays while its execution runs (`watchWorkflowJob`); see `sweepWorkflowJob`.
 */
export async function sweepStartRecords(deps: JobStartDeps, opts: { graceSeconds?: number; limit?: number } = {}): Promise<SweepResult> {
  const now = deps.clock.now();
  const before = new Date(now.getTime() - (opts.graceSeconds ?? UNSENT_START_GRACE_SECONDS) * 1000).toISOString();
  const unsent = await deps.jobs.dueStartRecords(before, opts.limit ?? SWEEP_LIMIT);
  const result: SweepResult = { sent: 0, watched: 0, cleared: 0, ended: 0, failed: 0 };
  await mapBounded(unsent, SWEEP_IN_FLIGHT, async (entry) => {
    try {
      const job = await deps.jobs.get(entry.job_id);
      if (job && (job.status === 'queued' || job.status === 'processing') && entry.start.via === 'workflow') {
        const outcome = await sweepWorkflowJob(deps, job, entry, entry.start.workflow);
        result[outcome]++;
        if (outcome !== 'ended') return; // re-armed: the record stays
      } else if (job && (job.status === 'failed' || job.status === 'timeout') && entry.start.via === 'workflow') {
        // Failed, and its record still here: its failure path stopped before its end (a refund or a row write that
        // failed, a recorder stopped at its time limit). The recorder finishes it (each step is done once); until that
        // goes through, the record stays for the next run.
        await deps.endStranded(job, entry.start.workflow, null);
        result.cleared++;
      } else if (job?.status === 'queued') {
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

export interface SweepResult {
  /** Queued jobs whose start was sent again. */
  sent: number;
  /** Workflow-run jobs whose execution still runs: looked at again later. */
  watched: number;
  /** Records of jobs that went on or ended: dropped. */
  cleared: number;
  /** Jobs ended here: a long job whose worker died, a workflow-run job whose execution ended without finishing it. */
  ended: number;
  /** Records that could not be dealt with now: kept for the next run. */
  failed: number;
}

/**
 * A queued or processing workflow-run job whose record is due: its execution still runs (looked at again later), has
 * not started (a queued job whose start was never confirmed: started now, as every start is named after its job), or
 * ended without finishing the job, which is then ended as its failure recorder would.
 */
async function sweepWorkflowJob(deps: JobStartDeps, job: Job, entry: StartRecord, workflow: string): Promise<'sent' | 'watched' | 'ended'> {
  const due = entry.due_at ?? entry.created_at;
  const status = await deps.workflows.status(workflow, job.job_id);
  if (status === 'RUNNING' || status === 'PENDING_REDRIVE') {
    await deps.jobs.watchStart(job.job_id, due, nextWorkflowLook(deps.clock));
    return 'watched';
  }
  // A watch (not the start as written) means the start was sent: a missing execution then left no history (kept 90
  // days; locally only with a journal), and the job is ended rather than started a second time.
  if (status === null && job.status === 'queued' && due === entry.created_at) {
    await sendJobStart(deps, job, entry.start);
    deps.log?.(`job ${job.job_id} was stored but never started (${workflow} workflow); started it now`);
    await deps.jobs.watchStart(job.job_id, due, nextWorkflowLook(deps.clock));
    return 'sent';
  }
  await deps.endStranded(job, workflow, status);
  deps.log?.(`job ${job.job_id} was still ${job.status} after its ${workflow} execution ended (${status ?? 'not found'}); ended it`);
  return 'ended';
}
