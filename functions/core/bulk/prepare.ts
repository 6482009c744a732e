/**
 * Workflow step 1 (`Prepare`): queued → processing; the archive checked as a whole before anything is
 * extracted; the convertible files counted (none → BULK_NO_CONVERTIBLE_FILES, more than the page budget →
 * BULK_FILE_COUNT_EXCEEDED); the whole job's cost checked (INSUFFICIENT_CREDITS, nothing charged); then the
 * checked archive kept under the job with an index of where each file's data is, and the list of files to
 * render handed to the Map state.
 */
import { requireCurrentPlan } from '../accounts/entitlements';
import { commitWholeJob, jobLiveness } from '../billing/commitments';
import { isServiceError } from '../errors';
import type { JobFileRow } from '../jobs/files';
import { FINISHED_STATUSES, type Job } from '../jobs/job';
import { TransientTaskError } from '../workflows/ports';
import { type EntryLocation, closeArchive, inspectArchive } from './archive';
import type { BulkDeps } from './deps';
import { failJob, loadStoredRequest, releaseJob } from './lifecycle';
import { BULK_LIMITS, isConvertible } from './limits';
import { type BundleFile, type BundleIndex, ZIP, bulkKeys, fileChargeUnit } from './storage';

export interface BulkTaskInput {
  job_id: string;
  account_id?: string;
  /** Set by the ASL's Catch: the error that ended a step. */
  error?: { Error?: string; Cause?: string };
}

export interface PreparedJob {
  job_id: string;
  account_id: string;
  /** `processing` when files are to be rendered; otherwise the status the job ended with. */
  status: string;
  /** Row indexes of the files to render (the Map state's items). */
  items: number[];
}

function tooLargeRow(file: BundleFile): JobFileRow {
  return {
    index: file.index,
    input: file.path,
    output: null,
    status: 'failed',
    pages: 0,
    error_code: 'FILE_TOO_LARGE',
    error_message: `${file.path} is ${file.size} bytes; convertible files may be at most ${BULK_LIMITS.convertibleBytes} bytes (10 MB).`,
    blocked_requests: 0,
    render_timeout: false,
    missing_assets: 0,
    key: null,
  };
}

/**
 * Prepare's refusals end the job before any file was converted or charged: a cancel answered meanwhile wins, and the
 * files counted by then are listed as skipped with CANCELLED.
 */
const refusal = (counted: { path: string }[] = []) => ({ honourCancel: true, cancelledInputs: counted.map((f) => f.path) });

export async function prepareBulkJob(deps: BulkDeps, input: BulkTaskInput): Promise<PreparedJob> {
  const ended = (job: Job | null, status?: string): PreparedJob => ({ job_id: input.job_id, account_id: job?.account_id ?? input.account_id ?? '', status: status ?? job?.status ?? 'missing', items: [] });
  let job = await deps.jobs.get(input.job_id);
  if (!job || job.job_type !== 'bulk') return ended(job);
  if (FINISHED_STATUSES.has(job.status)) {
    // Cancelled while queued: the cancel released it already; releasing again is harmless. Failed at its submission
    // (its start seemed to fail, but went through): the caller was told that the upload is kept for a retry.
    await releaseJob(deps, job, { keepUpload: true });
    return ended(job);
  }
  if (job.status === 'queued') {
    const claimed: Job = { ...job, status: 'processing', started_at: deps.clock.now().toISOString() };
    if (await deps.jobs.putIf(claimed, ['queued'])) job = claimed;
    else {
      job = await deps.jobs.get(input.job_id);
      if (!job || job.status !== 'processing') return ended(job);
    }
  }

  let archive: Awaited<ReturnType<typeof inspectArchive>> | null = null;
  try {
    const request = await loadStoredRequest(deps, job);
    if (!request) return ended(await failJob(deps, job, 'INTERNAL_SERVER_ERROR', 'The job request was lost; nothing was charged. Submit the job again.', {}, refusal()));
    // Refused (402) as the job's failure by the catch below.
    const { plan } = await requireCurrentPlan(deps.plans, await deps.accounts.get(job.account_id));

    // A run started over (a restart) reads the job's own copy that an earlier run made: the upload may have been
    // replaced since (its link is valid 15 minutes), and the rows and charges recorded so far belong to the copy.
    const ownCopy = bulkKeys.bundle(job.account_id, job.job_id);
    const zip = (request.zip_key !== ownCopy ? await deps.blobs.get(ownCopy) : null) ?? (await deps.blobs.get(request.zip_key));
    if (!zip) return ended(await failJob(deps, job, 'UPLOAD_NOT_FOUND', 'The uploaded ZIP is gone (uploads are kept one day); nothing was charged. Upload it again and submit a new job.', {}, refusal()));
    archive = await inspectArchive(zip);

    const convertible = archive.files.filter((f) => isConvertible(f.path, request.bundle_type));
    const extensions = request.bundle_type === 'html' ? '.html or .htm' : '.md or .markdown';
    if (convertible.length === 0) {
      return ended(await failJob(deps, job, 'BULK_NO_CONVERTIBLE_FILES', `The bundle has no ${extensions} file to convert (bundle_type "${request.bundle_type}"). Check bundle_type and the file extensions.`, { file_count: 0 }, refusal()));
    }
    const maxFiles = Math.min(BULK_LIMITS.convertibleFiles, plan.max_bulk_pages_per_job);
    if (convertible.length > maxFiles) {
      return ended(
        await failJob(deps, job, 'BULK_FILE_COUNT_EXCEEDED', `The bundle has ${convertible.length} ${extensions} files; a bulk job converts at most ${maxFiles}. Split it into several jobs.`, {
          file_count: convertible.length,
        }, refusal(convertible)),
      );
    }

    const files: BundleFile[] = convertible.map((f, index) => ({ index, path: f.path, size: f.size, entry: f.size > BULK_LIMITS.convertibleBytes ? null : f.location }));
    const renderable = files.filter((f) => f.entry !== null);
    // The whole job, on top of what the account's other running jobs will charge; recorded until this job ends. A run
    // started over after Finish charged some files (a stop or crash) counts only those not charged yet: the balance
    // has paid for the others already.
    const charged = await deps.progress.chargedUnits(job.account_id, job.job_id);
    const charges = renderable.filter((f) => !charged.has(fileChargeUnit(f.index))).length;
    try {
      await commitWholeJob(deps, { account_id: job.account_id, job_id: job.job_id, charges, amount_micros: plan.price_per_pdf_micros }, jobLiveness(deps.jobs));
    } catch (err) {
      if (!isServiceError(err) || err.code !== 'INSUFFICIENT_CREDITS') throw err;
      return ended(
        await failJob(deps, job, 'INSUFFICIENT_CREDITS', `The balance cannot pay for all ${renderable.length} files of the bundle; nothing was converted or charged. ${err.message}`, {
          file_count: files.length,
        }, refusal(files)),
      );
    }

    // Safe. The job reads its files from its own copy of the checked archive (an upload could be replaced).
    const zipKey = ownCopy;
    if (request.zip_key !== zipKey) await deps.blobs.put(zipKey, zip, ZIP);
    // No prototype: a file named `__proto__` assigned to a plain object set its prototype instead, and was left out.
    const entries: Record<string, EntryLocation> = Object.create(null);
    for (const f of archive.files) entries[f.path] = f.location;
    const index: BundleIndex = { bundle_type: request.bundle_type, options: request.options, zip_key: zipKey, files, entries };
    await deps.blobs.put(bulkKeys.index(job.account_id, job.job_id), Buffer.from(JSON.stringify(index)), 'application/json');

    const tooLarge = files.filter((f) => f.entry === null).map(tooLargeRow);
    if (tooLarge.length) await deps.files.putAll(job.job_id, tooLarge);
    // Counted from the rows: a workflow run again (after a stop or a crash) keeps the files it already recorded.
    const rows = await deps.files.list(job.job_id);
    const counts = { file_count: files.length, processed_count: rows.length, failure_count: rows.filter((r) => r.status !== 'success').length };
    if (!(await deps.progress.setCounts(job.job_id, counts))) return ended(await deps.jobs.get(job.job_id));
    return { job_id: job.job_id, account_id: job.account_id, status: 'processing', items: renderable.map((f) => f.index) };
  } catch (err) {
    if (isServiceError(err)) return ended(await failJob(deps, job, err.code, err.message, {}, refusal()));
    throw new TransientTaskError(`preparing bulk job ${job.job_id} failed: ${(err as Error)?.message ?? err}`, { cause: err });
  } finally {
    if (archive) closeArchive(archive);
  }
}
