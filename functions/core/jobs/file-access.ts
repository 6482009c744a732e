/**
 * The per-file routes: `GET /jobs/{job_id}/files` (bulk and merge/split jobs) and
 * `GET /jobs/{job_id}/files/{file_index}/download` (one output of a merge/split job, kept 7 days).
 */
import type { Clock } from '../clock';
import { ServiceError, invalidParameter } from '../errors';
import { failedJobRows } from '../pdfops/results';
import { signedLink } from './access';
import { type JobFileRepository, presentFileRow } from './files';
import { FINISHED_STATUSES, type Job } from './job';
import type { BlobStore } from './ports';
import { LINK_TTL_SECONDS } from './storage-layout';

export async function listJobFiles(deps: { files: JobFileRepository }, job: Job) {
  if (job.job_type !== 'bulk' && job.job_type !== 'pdfop') {
    throw invalidParameter('job_id', `Job ${job.job_id} is a ${job.job_type} job; only bulk and merge/split jobs have per-file results. Use GET /jobs/${job.job_id} for its status and GET /jobs/${job.job_id}/download for its output.`, { job_id: job.job_id, job_type: job.job_type });
  }
  // Rows are shown once the job has finished (spec: `files` is empty until then).
  let rows = FINISHED_STATUSES.has(job.status) ? await deps.files.list(job.job_id) : [];
  if (job.job_type === 'pdfop' && (job.status === 'failed' || job.status === 'timeout')) rows = failedJobRows(job, rows);
  return {
    job_id: job.job_id,
    status: job.status,
    bundle_type: job.bundle_type ?? null,
    count: rows.length,
    files: rows.map((r) => presentFileRow(r, job.job_type)),
  };
}

export async function jobFileDownloadLink(deps: { files: JobFileRepository; blobs: BlobStore; clock: Clock }, job: Job, fileIndex: string) {
  if (job.job_type !== 'pdfop') {
    throw invalidParameter('file_index', `Job ${job.job_id} is a ${job.job_type} job; single-file downloads exist for merge/split jobs. Use GET /jobs/${job.job_id}/download.`, {
      job_id: job.job_id,
      job_type: job.job_type,
    });
  }
  if (!/^\d{1,6}$/.test(fileIndex)) throw invalidParameter('file_index', 'file_index must be a whole number (the index of a row of GET /jobs/{job_id}/files, from 0).', { file_index: fileIndex });
  const index = Number(fileIndex);
  if (job.status === 'queued' || job.status === 'processing' || job.status === 'draft') {
    throw new ServiceError('JOB_NOT_READY', `Job ${job.job_id} is ${job.status}; its files can be downloaded once it has completed.`, { job_id: job.job_id, status: job.status });
  }
  const row = await deps.files.get(job.job_id, index);
  // Only a completed job has outputs to hand out (a failed one keeps none, whatever a row says).
  if (!row || row.status !== 'success' || job.status !== 'completed') {
    throw new ServiceError('FILE_NOT_FOUND', `Job ${job.job_id} has no successful output at index ${index}. GET /jobs/${job.job_id}/files lists them.`, { job_id: job.job_id, file_index: index });
  }
  if (!row.key) {
    throw new ServiceError('OUTPUT_NOT_AVAILABLE', `Output ${index} of job ${job.job_id} was returned in the response and not stored. Send "store": true to keep outputs for 7 days.`, {
      job_id: job.job_id,
      file_index: index,
    });
  }
  if (row.expires_at && row.expires_at <= deps.clock.now().toISOString()) {
    throw new ServiceError('OUTPUT_EXPIRED', `Output ${index} of job ${job.job_id} was deleted after its 7-day retention. Run the operation again.`, {
      job_id: job.job_id,
      file_index: index,
      expired_at: row.expires_at,
    });
  }
  const head = await deps.blobs.head(row.key);
  if (!head) {
    throw new ServiceError('OUTPUT_EXPIRED', `Output ${index} of job ${job.job_id} is no longer stored: it was removed before its retention period ended. Run the operation again.`, {
      job_id: job.job_id,
      file_index: index,
      expired_at: null,
      reason: 'removed',
    });
  }
  const link = await signedLink(deps, row.key, row.output ?? undefined);
  return {
    job_id: job.job_id,
    file_index: index,
    name: row.output,
    download_url: link.url,
    expires_at: link.expiresAt,
    expires_in_seconds: LINK_TTL_SECONDS,
    content_type: head.content_type ?? row.content_type ?? 'application/pdf',
    size_bytes: head.size_bytes,
  };
}
