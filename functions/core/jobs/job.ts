export const JOB_TYPES = ['quick', 'long', 'bulk', 'pdfop', 'mailmerge'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const JOB_STATUSES = ['draft', 'queued', 'processing', 'completed', 'partial_failed', 'failed', 'timeout', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const FINISHED_STATUSES: ReadonlySet<JobStatus> = new Set(['completed', 'partial_failed', 'failed', 'timeout', 'cancelled']);
/** Statuses whose stored output may be downloaded. */
export const DOWNLOADABLE_STATUSES: ReadonlySet<JobStatus> = new Set(['completed', 'partial_failed']);

/** An object this job wrote to the blob store. */
export interface StoredOutput {
  key: string;
  name: string;
  content_type: string;
  size_bytes: number;
  /** When retention removes it (30 days for job outputs, 7 for merge/split files). */
  expires_at: string;
}

/**
 * Every run is a job. Common fields first; the optional groups belong to bulk, merge/split and mail merge jobs.
 * Times are ISO 8601 strings.
 */
export interface Job {
  job_id: string;
  account_id: string;
  job_type: JobType;
  status: JobStatus;
  mode: string | null;
  pages: number | null;
  truncated: boolean;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  timeout_occurred: boolean;
  error_code: string | null;
  error_message: string | null;
  output: StoredOutput | null;
  /** Bulk */
  bundle_type?: string;
  file_count?: number | null;
  processed_count?: number;
  success_count?: number;
  failure_count?: number;
  pages_total?: number;
  cancel_requested?: boolean;
  /** Merge/split */
  operation?: 'merge' | 'split';
  split_mode?: string | null;
  input_files?: number;
  input_pages?: number;
  outputs_produced?: number;
  output_count?: number;
  /** A failed merge/split job: the input its one failed files row names (recorded with the failure itself). */
  failed_input?: string;
  /** Long jobs: whether ready/failed emails go out for this job (false switches them off). */
  email_notification?: boolean;
  /** Where a queued job's document waits for the worker. */
  input_key?: string | null;
  /** While processing: until when the worker holding the job may finish it (a crashed worker's job is taken over after). */
  lease_until?: string | null;
}

export interface NewJob {
  job_id: string;
  account_id: string;
  job_type: JobType;
  status: JobStatus;
  mode?: string | null;
  now: Date;
}

export function newJob(input: NewJob): Job {
  return {
    job_id: input.job_id,
    account_id: input.account_id,
    job_type: input.job_type,
    status: input.status,
    mode: input.mode ?? null,
    pages: null,
    truncated: false,
    created_at: input.now.toISOString(),
    started_at: null,
    completed_at: null,
    timeout_occurred: false,
    error_code: null,
    error_message: null,
    output: null,
  };
}

export function completed(job: Job, at: Date, changes: Partial<Job> = {}): Job {
  return { ...job, ...changes, status: 'completed', completed_at: at.toISOString(), error_code: null, error_message: null };
}

export function failed(job: Job, at: Date, code: string, message: string, changes: Partial<Job> = {}): Job {
  return { ...job, ...changes, status: 'failed', completed_at: at.toISOString(), error_code: code, error_message: message };
}

export function timedOut(job: Job, at: Date, code: string, message: string, changes: Partial<Job> = {}): Job {
  return { ...job, ...changes, status: 'timeout', timeout_occurred: true, completed_at: at.toISOString(), error_code: code, error_message: message };
}
