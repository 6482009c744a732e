import type { OutboxEvent } from '../events/events';
import type { Job, JobStatus, JobType } from './job';
import type { JobStart, StartRecord } from './starts';

export interface JobListQuery {
  accountId: string;
  limit: number;
  /** Position after which to continue (opaque to clients; the HTTP layer seals it). */
  after?: { created_at: string; job_id: string };
  status?: JobStatus;
  jobType?: JobType;
  truncated?: boolean;
  /** YYYY-MM, creation month in UTC. */
  month?: string;
}

export interface JobRepository {
  get(jobId: string): Promise<Job | null>;
  /**
   * Writes the whole job (create or replace), together with the events this change causes, atomically. With
   * `start`, a queued job's start is recorded in the same write, until `startSent` confirms it was sent: a writer
   * that dies in between leaves the record to the start sweeper (`starts.ts`), never a job queued for ever.
   */
  put(job: Job, events?: OutboxEvent[], start?: JobStart): Promise<void>;
  /**
   * The job's start was sent, or its watch is over: its record goes (nothing happens when there is none). With
   * `due`, only the record due then: one a later claim re-armed stays.
   */
  startSent(jobId: string, due?: string): Promise<void>;
  /**
   * The job's start record due at `from` is due again at `until`: a workflow-run job's watch, looked at again then.
   * False when there is none due at `from` (the job ended and its record went, or another writer re-armed it).
   */
  watchStart(jobId: string, from: string, until: string): Promise<boolean>;
  /**
   * Records due before `before`, oldest first: at most `limit` starts not confirmed yet (with long jobs' lease
   * watches), then at most `limit` watches on workflow-run jobs, so that running workflow jobs, however many, never
   * hold back a lost start.
   */
  dueStartRecords(before: string, limit: number): Promise<StartRecord[]>;
  /**
   * Writes `job` only if the stored job is still in one of `from` (or is processing with a lease that ran
   * out before `leaseExpiredBefore`); false when another writer got there first. Events go in the same write.
   * With `watch` (a worker's claim of a job under a lease), the job's start record is written in the same write,
   * due at the lease's end: the start sweeper then finds a job whose worker died without a word.
   */
  putIf(job: Job, from: JobStatus[], events?: OutboxEvent[], leaseExpiredBefore?: string, watch?: JobStart): Promise<boolean>;
  /**
   * Writes `job` only while the stored job is processing under the lease `leaseUntil` (the writer's own claim):
   * false when the lease ran out and another worker claimed the job, or the job already finished.
   */
  putIfLeaseHeld(job: Job, leaseUntil: string, events?: OutboxEvent[]): Promise<boolean>;
  /** Newest first. */
  list(query: JobListQuery): Promise<{ jobs: Job[]; last?: { created_at: string; job_id: string } }>;
}

export interface BlobStore {
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** One object written from `parts` in order, never joined in memory first (a large ZIP is not held twice). */
  putParts(key: string, parts: readonly Uint8Array[], contentType: string): Promise<void>;
  get(key: string): Promise<Buffer | null>;
  head(key: string): Promise<{ size_bytes: number; content_type: string | null } | null>;
  delete(key: string): Promise<void>;
  /** A GET link valid for `expiresInSeconds`; `filename` sets Content-Disposition on download. */
  signedGetUrl(key: string, opts: { expiresInSeconds: number; filename?: string }): Promise<string>;
  /** A PUT link for exactly `contentLength` bytes of `contentType`. */
  signedPutUrl(key: string, opts: { expiresInSeconds: number; contentType: string; contentLength: number }): Promise<string>;
}
