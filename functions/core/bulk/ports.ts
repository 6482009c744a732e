import type { OutboxEvent } from '../events/events';
import type { JobFileRow } from '../jobs/files';
import type { Job } from '../jobs/job';

/** A bulk job's counts as Prepare reads them from its file rows. */
export interface PreparedCounts {
  file_count: number;
  processed_count: number;
  failure_count: number;
}

/**
 * What bulk jobs need beyond the job and file-row repositories: writes that many concurrent file renders
 * make to one job without overwriting each other (or a cancel request), and a look at the job's ledger.
 */
export interface BulkProgress {
  /**
   * Records a file's outcome exactly once: the row is written only if the file has none yet, and the job's
   * `processed_count` and its `success_count` (a success) or `failure_count` (anything else) rise by one in the same
   * atomic write, only while the job is processing, so a poll sees the counts add up. False (and
   * nothing written) when the file already has a row or the job is no longer processing; except that a success
   * replaces a CANCELLED skip (moving one count from failures to successes): a retry of the same task may have skipped
   * the file after a cancel while this invocation, which had started printing, still ran.
   */
  recordFile(jobId: string, row: JobFileRow): Promise<boolean>;
  /**
   * Sets the counts Prepare took from the job's rows, only forward: when the job already has this `file_count` and
   * at least this `processed_count` (an earlier attempt of Prepare, still running after its retry had started the
   * renders, counted fewer rows), nothing changes. False when the job is not processing.
   */
  setCounts(jobId: string, counts: PreparedCounts): Promise<boolean>;
  /** Sets `cancel_requested` on a processing job (nothing else changes); false when it is not processing. */
  requestCancel(jobId: string): Promise<boolean>;
  /**
   * Writes the finished job (whole item) with its events, only while the stored job is processing and, when
   * `cancelSeen` is false, no cancel has been requested since Finish read it (a cancel landing meanwhile must not be
   * overwritten). False, and nothing written, otherwise.
   */
  finishJob(job: Job, events: OutboxEvent[], cancelSeen: boolean): Promise<boolean>;
  /** Ledger units already charged for the job (e.g. `file#3`), so a retried finish never re-decides them. */
  chargedUnits(accountId: string, jobId: string): Promise<Set<string>>;
}
