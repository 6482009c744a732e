/**
 * Per-file results of a job (rows of `GET /jobs/{job_id}/files`): one row per output of a merge/split job
 * (bulk jobs will write one per input file). Rows live beside the job, keyed by their index.
 */

export type FileRowStatus = 'success' | 'failed' | 'skipped';

export interface JobFileRow {
  /** 0-based position. */
  index: number;
  /** Input path or file name (merge: the input names in merge order). */
  input: string;
  /** Output path (file name; for a multi-file split, its name inside the ZIP); null when nothing was produced. */
  output: string | null;
  status: FileRowStatus;
  pages: number;
  error_code: string | null;
  error_message: string | null;
  blocked_requests: number;
  render_timeout: boolean;
  missing_assets: number;
  /** Merge/split rows. */
  page_range?: string | null;
  size_bytes?: number;
  warnings?: string[];
  /** Where the output is stored (never shown); absent when the file was returned directly and not stored. */
  key?: string | null;
  content_type?: string;
  /** When retention removes the stored file. */
  expires_at?: string | null;
  /** Bulk rows (never shown): how many other files of the bundle its PDF links to, for Finish to point at their PDFs (kept for a retried Finish). */
  document_links?: number;
}

export interface JobFileRepository {
  /** Writes the rows of a job (replacing rows with the same index). */
  putAll(jobId: string, rows: JobFileRow[]): Promise<void>;
  /** All rows in index order. */
  list(jobId: string): Promise<JobFileRow[]>;
  get(jobId: string, index: number): Promise<JobFileRow | null>;
  /** Removes every row of a job (a failed job replaces its rows with one failed row). */
  deleteAll(jobId: string): Promise<void>;
}

/** A row as the files route shows it: the spec's fields, never storage internals. */
export function presentFileRow(row: JobFileRow, jobType: string): Record<string, unknown> {
  const shown: Record<string, unknown> = {
    index: row.index,
    input: row.input,
    output: row.output,
    status: row.status,
    pages: row.pages,
    error_code: row.error_code,
    error_message: row.error_message,
    blocked_requests: row.blocked_requests,
    render_timeout: row.render_timeout,
    missing_assets: row.missing_assets,
  };
  if (jobType === 'pdfop') Object.assign(shown, { page_range: row.page_range ?? null, size_bytes: row.size_bytes ?? 0, warnings: row.warnings ?? [] });
  return shown;
}
