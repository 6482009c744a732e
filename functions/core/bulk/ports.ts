import type { JobFileRow } from '../jobs/files';

/**
 * What bulk jobs need beyond the job and file-row repositories: writes that many concurrent file renders
 * make to one job without overwriting each other, and a look at the job's ledger.
 */
export interface BulkProgress {
  /**
   * Records a file's outcome exactly once: the row is written only if the file has none yet, and the job's
   * `processed_count` rises by one in the same atomic write, only while the job is processing. False (and
   * nothing written) when the file already has a row or the job is no longer processing.
   */
  recordFile(jobId: string, row: JobFileRow): Promise<boolean>;
  /** Sets counters of a processing job (nothing else changes); false when it is not processing. */
  setCounts(jobId: string, counts: { file_count?: number; processed_count?: number }): Promise<boolean>;
  /** Sets `cancel_requested` on a processing job (nothing else changes); false when it is not processing. */
  requestCancel(jobId: string): Promise<boolean>;
  /** Ledger units already charged for the job (e.g. `file#3`), so a retried finish never re-decides them. */
  chargedUnits(accountId: string, jobId: string): Promise<Set<string>>;
}
