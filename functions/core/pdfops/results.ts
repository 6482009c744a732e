/**
 * What merge/split leave behind: stored files (7 days), the ZIP of a multi-file split, file rows, and the
 * stored-result JSON with one-hour links.
 */
import { ZipFile } from 'yazl';
import type { Clock } from '../clock';
import { type OutboxEvent, jobEvent } from '../events/events';
import { signedUrlExpiry } from '../jobs/access';
import type { JobFileRow } from '../jobs/files';
import type { Job, StoredOutput } from '../jobs/job';
import type { BlobStore } from '../jobs/ports';
import { LINK_TTL_SECONDS, objectKey, retentionEnd } from '../jobs/storage-layout';
import type { PdfWarning } from '../pdf/features';
import type { ProducedFile } from '../pdf/operations';

export const PDF = 'application/pdf';
export const ZIP = 'application/zip';

/** Storage keys of a merge/split job: files by index (names are only shown, never used as keys). */
export const pdfopKeys = {
  file: (accountId: string, jobId: string, index: number) => objectKey('pdfOutputs', accountId, jobId, `${String(index).padStart(3, '0')}.pdf`),
  zip: (accountId: string, jobId: string) => objectKey('pdfOutputs', accountId, jobId, 'outputs.zip'),
  request: (accountId: string, jobId: string) => objectKey('pdfOutputs', accountId, jobId, 'request.json'),
};

/** The ZIP name for a split: `<basename>-split.zip`. */
export function zipName(basename: string): string {
  return `${basename}-split.zip`;
}

/** Builds a ZIP incrementally (files are stored, not recompressed: PDFs are compressed already). */
export class ZipBuilder {
  private readonly zip = new ZipFile();
  private readonly chunks: Buffer[] = [];
  private readonly done: Promise<ZipParts>;

  constructor() {
    this.done = new Promise((resolve, reject) => {
      let size = 0;
      this.zip.outputStream.on('data', (c: Buffer) => (this.chunks.push(c), (size += c.length)));
      // The pieces as written, not joined: a ZIP of up to 1 GB of outputs is not held a second time to store it.
      this.zip.outputStream.on('end', () => resolve({ parts: this.chunks, size }));
      this.zip.outputStream.on('error', reject);
    });
  }

  add(name: string, data: Uint8Array, mtime: Date): void {
    this.zip.addBuffer(Buffer.from(data.buffer, data.byteOffset, data.byteLength), name, { compress: false, mtime });
  }

  /** The archive's bytes in order (store them with `BlobStore.putParts`) and their total size. */
  finish(): Promise<ZipParts> {
    this.zip.end();
    return this.done;
  }
}

export interface ZipParts {
  parts: Buffer[];
  size: number;
}

export interface FileRowInput {
  input: string;
  file: ProducedFile;
  key: string | null;
  expiresAt: string | null;
}

export function successRow({ input, file, key, expiresAt }: FileRowInput): JobFileRow {
  return {
    index: file.index,
    input,
    output: file.name,
    status: 'success',
    pages: file.pages,
    error_code: null,
    error_message: null,
    blocked_requests: 0,
    render_timeout: false,
    missing_assets: 0,
    page_range: file.page_range,
    size_bytes: file.size_bytes,
    warnings: file.warnings,
    key,
    content_type: PDF,
    expires_at: expiresAt,
  };
}

export function failedRow(input: string, code: string, message: string): JobFileRow {
  return {
    index: 0,
    input,
    output: null,
    status: 'failed',
    pages: 0,
    error_code: code,
    error_message: message,
    blocked_requests: 0,
    render_timeout: false,
    missing_assets: 0,
    page_range: null,
    size_bytes: 0,
    warnings: [],
    key: null,
    expires_at: null,
  };
}

/**
 * The files rows of a failed or timed-out merge/split job: its one failed row. The failure is recorded (and its
 * job.failed event sent) before the files it had made are removed and the row is written, so until then the row is
 * made from the job; success rows of files being removed are never shown.
 */
export function failedJobRows(job: Job, rows: JobFileRow[]): JobFileRow[] {
  const failedRows = rows.filter((r) => r.status === 'failed');
  if (failedRows.length > 0) return failedRows;
  return [failedRow(job.failed_input ?? 'unknown', job.error_code ?? 'INTERNAL_SERVER_ERROR', job.error_message ?? 'The job failed.')];
}

export function storedOutput(key: string, name: string, contentType: string, size: number, from: Date): StoredOutput {
  return { key, name, content_type: contentType, size_bytes: size, expires_at: retentionEnd('pdfOutputs', from)! };
}

/** The stored-result JSON (document 2) with fresh one-hour links. */
export async function storedResult(
  deps: { blobs: BlobStore; clock: Clock },
  job: Job,
  rows: JobFileRow[],
  warnings: PdfWarning[],
): Promise<Record<string, unknown>> {
  const expires = signedUrlExpiry(deps.clock, LINK_TTL_SECONDS);
  const link = (key: string, filename: string) => deps.blobs.signedGetUrl(key, { expiresInSeconds: LINK_TTL_SECONDS, filename });
  const outputs = await Promise.all(
    rows.map(async (row) => ({
      index: row.index,
      name: row.output,
      pages: row.pages,
      page_range: row.page_range,
      size_bytes: row.size_bytes,
      warnings: row.warnings ?? [],
      download_url: row.key ? await link(row.key, row.output!) : null,
    })),
  );
  const zip = job.output && job.output.content_type === ZIP ? await link(job.output.key, job.output.name) : null;
  return {
    job_id: job.job_id,
    operation: job.operation === 'merge' ? 'pdf_merge' : 'pdf_split',
    status: 'completed',
    input_pages: job.input_pages ?? 0,
    output_count: rows.length,
    outputs,
    zip_url: zip,
    download_url_expires_at: expires,
    warnings,
  };
}

/** `job.completed` of a merge/split job (instant or background): the spec's merge/split fields and where its files are listed. */
export function pdfopCompletedEvent(done: Job, warnings: readonly PdfWarning[], at: Date): OutboxEvent {
  return jobEvent('job.completed', done, at, {
    operation: done.operation,
    input_pages: done.input_pages,
    output_count: done.outputs_produced,
    warnings: [...warnings],
    files_url: `/jobs/${done.job_id}/files`,
  });
}

/** `job.failed` of a merge/split job (instant or background, timeouts included). */
export function pdfopFailedEvent(final: Job, at: Date): OutboxEvent {
  return jobEvent('job.failed', final, at, { operation: final.operation });
}
