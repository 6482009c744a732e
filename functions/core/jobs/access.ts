import type { Clock } from '../clock';
import { ServiceError } from '../errors';
import { DOWNLOADABLE_STATUSES, type Job } from './job';
import type { BlobStore, JobRepository } from './ports';
import { LINK_TTL_SECONDS } from './storage-layout';

export interface JobAccessDeps {
  jobs: JobRepository;
  blobs: BlobStore;
  clock: Clock;
}

/** A job of the caller's account; another account's job is indistinguishable from a missing one. */
export async function loadOwnJob(jobs: JobRepository, accountId: string, jobId: string): Promise<Job> {
  const job = jobId.length <= 64 ? await jobs.get(jobId) : null;
  if (!job || job.account_id !== accountId) {
    throw new ServiceError('JOB_NOT_FOUND', `No job ${jobId} exists for this account. Check the job_id the submission answered; GET /jobs (with a dashboard ID token) lists this account's jobs.`, { job_id: jobId });
  }
  return job;
}

/**
 * When a URL signed now for `ttlSeconds` stops working, to tell the caller. The signature is dated to the whole second
 * (X-Amz-Date), so the URL dies up to a second before now + TTL: the time given is counted from the start of the current
 * second, never after the URL has stopped working. Taken before signing (a signature made in a later second lives longer).
 */
export function signedUrlExpiry(clock: Clock, ttlSeconds: number): string {
  return new Date(Math.floor(clock.now().getTime() / 1000) * 1000 + ttlSeconds * 1000).toISOString();
}

/**
 * A fresh signed GET link (LINK_TTL_SECONDS) to a stored object, and when it stops working. `filename` is the name
 * the download is saved under.
 */
export async function signedLink(
  deps: { blobs: Pick<BlobStore, 'signedGetUrl'>; clock: Clock },
  key: string,
  filename: string | undefined,
): Promise<{ url: string; expiresAt: string }> {
  const expiresAt = signedUrlExpiry(deps.clock, LINK_TTL_SECONDS);
  const url = await deps.blobs.signedGetUrl(key, { expiresInSeconds: LINK_TTL_SECONDS, filename });
  return { url, expiresAt };
}

/** GET /jobs/{job_id}: the job as the spec shows it, with a fresh signed link while its output is stored. */
export async function presentJob(deps: JobAccessDeps, job: Job): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {
    job_id: job.job_id,
    status: job.status,
    job_type: job.job_type,
    mode: job.mode,
    pages: job.pages ?? 0, // a number, as the spec types it: the page count once known (a long job's from submission), else 0
    truncated: job.truncated,
    created_at: job.created_at,
    completed_at: job.completed_at,
    timeout_occurred: job.timeout_occurred,
    error_message: job.error_message,
    error_code: job.error_code,
  };
  const output = job.output;
  // The file is looked at, not only its retention date: one removed early (by hand, or a failed write) has no link.
  if (output && output.expires_at > deps.clock.now().toISOString() && (await deps.blobs.head(output.key))) {
    const link = await signedLink(deps, output.key, output.name);
    body.s3_url = link.url;
    body.s3_url_expires_at = link.expiresAt;
  }
  if (job.job_type === 'bulk') {
    Object.assign(body, {
      bundle_type: job.bundle_type ?? 'html',
      file_count: job.file_count ?? null,
      processed_count: job.processed_count ?? 0,
      success_count: job.success_count ?? 0,
      failure_count: job.failure_count ?? 0,
      pages_total: job.pages_total ?? 0,
      // The job's page count is its PDFs' pages (0 until Finish counts them, like pages_total).
      pages: job.pages_total ?? 0,
    });
    if (job.cancel_requested !== undefined) body.cancel_requested = job.cancel_requested;
  }
  if (job.job_type === 'pdfop') {
    Object.assign(body, {
      operation: job.operation,
      split_mode: job.split_mode ?? null,
      input_files: job.input_files ?? 0,
      input_pages: job.input_pages ?? 0,
      outputs_produced: job.outputs_produced ?? 0,
    });
    if (job.status === 'queued' || job.status === 'processing') {
      body.output_count = job.output_count ?? null;
      body.processed_count = job.processed_count ?? 0;
    }
  }
  return body;
}

/** Why a finished job has nothing to download, as the end of a sentence. */
function noOutputReason(job: Job): string {
  if (job.status === 'failed' || job.status === 'timeout') return ` (it ended ${job.status}${job.error_code ? ` with ${job.error_code}` : ''}; see error_message). Nothing was charged for it.`;
  if (job.status === 'cancelled') return ': it was cancelled before any PDF was made.';
  if (job.job_type === 'quick') return '. Quick jobs store their PDF only with "store": true.';
  if (job.job_type === 'pdfop') return '. Its result was returned in the response (instant merge/split stores it only with "store": true).';
  return '.';
}

/** GET /jobs/{job_id}/download: a fresh one-hour link to the job's stored output. */
export async function jobDownloadLink(deps: JobAccessDeps, job: Job) {
  const inFlight = job.status === 'draft' || job.status === 'queued' || job.status === 'processing';
  if (inFlight) {
    throw new ServiceError('JOB_NOT_READY', `Job ${job.job_id} is ${job.status}; its output can be downloaded once it has completed.`, {
      job_id: job.job_id,
      status: job.status,
    });
  }
  const output = job.output;
  if (!output || !(DOWNLOADABLE_STATUSES.has(job.status) || job.status === 'cancelled')) {
    throw new ServiceError('OUTPUT_NOT_AVAILABLE', `Job ${job.job_id} has no stored output${noOutputReason(job)}`, {
      job_id: job.job_id,
      status: job.status,
    });
  }
  if (output.expires_at <= deps.clock.now().toISOString()) {
    throw new ServiceError('OUTPUT_EXPIRED', `The output of job ${job.job_id} was deleted after its retention period (until ${output.expires_at}). Run the job again.`, {
      job_id: job.job_id,
      expired_at: output.expires_at,
    });
  }
  const head = await deps.blobs.head(output.key);
  if (!head) {
    throw new ServiceError('OUTPUT_EXPIRED', `The output of job ${job.job_id} is no longer stored: it was removed before its retention period ended. Run the job again.`, {
      job_id: job.job_id,
      expired_at: null,
      reason: 'removed',
    });
  }
  const link = await signedLink(deps, output.key, output.name);
  return {
    job_id: job.job_id,
    download_url: link.url,
    expires_at: link.expiresAt,
    expires_in_seconds: LINK_TTL_SECONDS,
    content_type: head.content_type ?? output.content_type,
    size_bytes: head.size_bytes,
  };
}
