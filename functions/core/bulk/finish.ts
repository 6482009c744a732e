/**
 * Workflow step 3 (`Finish`): decides every file's final row in index order (a file that would pass the
 * page budget and all later ones are skipped), charges each converted file once (ledger unit `file#<index>`;
 * units already in the ledger are never charged or decided again, so a retried finish is harmless), writes
 * the output ZIP (input paths with `.pdf`, plus `manifest.json`), the rows, and the final job with its
 * `bulk.job.*` event, then releases the slot and the staged inputs.
 */
import type { Account } from '../accounts/account';
import { requireCurrentPlan } from '../accounts/entitlements';
import { type Charge, insufficientCredits } from '../billing/charging';
import type { Plan } from '../billing/plans';
import { mapBounded } from '../concurrency';
import { isServiceError } from '../errors';
import { type EventType, jobEvent } from '../events/events';
import { type JobFileRow, presentFileRow } from '../jobs/files';
import { FINISHED_STATUSES, type Job, type JobStatus } from '../jobs/job';
import { retentionEnd } from '../jobs/storage-layout';
import { ZipBuilder } from '../pdfops/results';
import { isTimeoutError } from '../workflows/ended';
import { TransientTaskError } from '../workflows/ports';
import type { BulkDeps } from './deps';
import { linkDocumentPdfs } from './document-links';
import { failJob, refundFailedJob, releaseJob } from './lifecycle';
import { STORAGE_CONCURRENCY } from './limits';
import { outputPaths } from './paths';
import type { BulkTaskInput } from './prepare';
import { type BundleIndex, ZIP, bulkKeys, fileChargeUnit, loadIndex } from './storage';

const EVENT_OF: Partial<Record<JobStatus, EventType>> = {
  completed: 'bulk.job.completed',
  partial_failed: 'bulk.job.partial',
  failed: 'bulk.job.failed',
  cancelled: 'bulk.job.cancelled',
};

function abandoned(index: number, input: string): JobFileRow {
  return {
    index,
    input,
    output: null,
    status: 'failed',
    pages: 0,
    error_code: 'RENDER_FAILED',
    error_message: `${input} could not be converted: rendering it failed repeatedly on our side. Submit it again.`,
    blocked_requests: 0,
    render_timeout: false,
    missing_assets: 0,
    key: null,
  };
}

/** Final rows in index order: missing ones are failures, and the page budget skips a file and all after it. */
export function decideRows(bundle: BundleIndex, recordedRows: JobFileRow[], pageBudget: number): JobFileRow[] {
  const byIndex = new Map(recordedRows.map((r) => [r.index, r]));
  let pages = 0;
  let over = false;
  return bundle.files.map((file) => {
    const recorded = byIndex.get(file.index);
    const row = recorded ? { ...recorded } : abandoned(file.index, file.path);
    if (!over && row.status === 'success' && pages + row.pages > pageBudget) over = true;
    if (over && row.status !== 'skipped') {
      return {
        ...row,
        status: 'skipped',
        pages: 0,
        output: null,
        error_code: 'BULK_PAGE_BUDGET_EXCEEDED',
        error_message: `Not converted: with this file the job would pass its ${pageBudget}-page budget (${pages} pages were converted before it). Submit the remaining files as a new job.`,
      };
    }
    if (row.status === 'success') pages += row.pages;
    return row;
  });
}

export function presentManifest(job: Job, rows: JobFileRow[]) {
  return { job_id: job.job_id, status: job.status, bundle_type: job.bundle_type ?? null, count: rows.length, files: rows.map((r) => presentFileRow(r, 'bulk')) };
}

function finalStatus(job: Job, rows: JobFileRow[]): { status: JobStatus; code: string | null; message: string | null } {
  const success = rows.filter((r) => r.status === 'success').length;
  const others = rows.length - success;
  if (job.cancel_requested) {
    // Also when the cancel came after the last file had started (or during Finish): the 202 promised `cancelled`.
    const skipped = rows.filter((r) => r.error_code === 'CANCELLED').length;
    const rest = skipped > 0 ? `; ${skipped} not started were skipped` : '';
    return { status: 'cancelled', code: null, message: `Cancelled on request: ${success} of ${rows.length} files were converted before the job stopped${rest}. GET /jobs/${job.job_id}/files says what happened to each.` };
  }
  if (success === rows.length) return { status: 'completed', code: null, message: null };
  if (success > 0) return { status: 'partial_failed', code: null, message: `${others} of ${rows.length} files were not converted; GET /jobs/${job.job_id}/files says why for each.` };
  const credits = rows.every((r) => r.error_code === 'INSUFFICIENT_CREDITS');
  return credits
    ? { status: 'failed', code: 'INSUFFICIENT_CREDITS', message: 'The balance ran out before the files could be paid for; nothing was charged.' }
    : { status: 'failed', code: 'BULK_ALL_FILES_FAILED', message: `None of the ${rows.length} files could be converted; GET /jobs/${job.job_id}/files says why for each. Nothing was charged.` };
}

export async function finishBulkJob(deps: BulkDeps, input: BulkTaskInput): Promise<{ job_id: string; status: string }> {
  const job = await deps.jobs.get(input.job_id);
  if (!job || job.job_type !== 'bulk') return { job_id: input.job_id, status: 'missing' };
  if (FINISHED_STATUSES.has(job.status)) {
    await releaseJob(deps, job);
    return { job_id: job.job_id, status: job.status };
  }
  if (job.status !== 'processing') return { job_id: job.job_id, status: job.status };
  try {
    const bundle = await loadIndex(deps.blobs, job.account_id, job.job_id);
    const stored = await deps.accounts.get(job.account_id);
    if (!bundle) return { job_id: job.job_id, status: (await failJob(deps, job, 'INTERNAL_SERVER_ERROR', 'The prepared bundle was lost; nothing was charged. Submit the job again.')).status };
    let current: { account: Account; plan: Plan };
    try {
      current = await requireCurrentPlan(deps.plans, stored);
    } catch (refusal) {
      // The refusal ends the job; anything else is left to the catch below (a retry).
      if (!isServiceError(refusal)) throw refusal;
      return { job_id: job.job_id, status: (await failJob(deps, job, refusal.code, refusal.message)).status };
    }
    const { account, plan } = current;

    const rows = decideRows(bundle, await deps.files.list(job.job_id), plan.max_bulk_pages_per_job);

    // Charges, in index order, each once (in batches; units already in the ledger count as done).
    const charged = await deps.progress.chargedUnits(job.account_id, job.job_id);
    const toCharge = rows.filter((r) => r.status === 'success' && !charged.has(fileChargeUnit(r.index)));
    const paid = await deps.billing.chargeInOrder(
      toCharge.map((r): Charge => ({ account_id: job.account_id, job_id: job.job_id, unit: fileChargeUnit(r.index), operation: 'pdf', amount_micros: plan.price_per_pdf_micros, pdf_count: 1 })),
      account,
    );
    // The balance ran out (spent elsewhere since the job was checked): this file and later ones are not delivered.
    for (const row of toCharge.slice(paid)) {
      Object.assign(row, {
        status: 'failed',
        pages: 0,
        error_code: 'INSUFFICIENT_CREDITS',
        error_message: `Not delivered: the balance could not pay for this file. ${insufficientCredits(account, plan.price_per_pdf_micros, deps.clock.now()).message}`,
      });
    }

    // Output paths mirror the inputs; rows no longer point at staged files (there are no per-file downloads).
    const made = rows.filter((r) => r.status === 'success');
    const names = outputPaths(made.map((r) => r.input), bundle.bundle_type);
    made.forEach((r, i) => (r.output = names[i]));
    for (const r of rows) {
      r.key = null;
      delete r.size_bytes;
    }
    // Read in parallel (one GET per PDF). Staged keys follow from the index, so a retried finish (rows already
    // written without them) still finds its PDFs; rows keep `document_links`, so it points their links again.
    const pdfs: Uint8Array[] = await mapBounded(made, STORAGE_CONCURRENCY, async (r) => {
      const pdf = await deps.blobs.get(bulkKeys.pdf(job.account_id, job.job_id, r.index));
      if (!pdf) throw new Error(`the staged PDF of ${r.input} is missing`);
      return pdf;
    });
    linkDocumentPdfs(bundle, made, pdfs, (r, err) => deps.log?.(`bulk job ${job.job_id}: the links of file ${r.index} to other files were left as printed`, err));

    // Twice at most: a cancel that lands while this runs is not overwritten; the job then ends cancelled (every
    // file has been dealt with by now, so the rows stay as decided: made PDFs are kept and charged).
    let seen = job;
    for (;;) {
      const at = deps.clock.now();
      const cancelSeen = !!seen.cancel_requested;
      const verdict = finalStatus(seen, rows);
      let final: Job = {
        ...seen,
        status: verdict.status,
        completed_at: at.toISOString(),
        error_code: verdict.code,
        error_message: verdict.message,
        file_count: rows.length,
        processed_count: rows.length,
        success_count: made.length,
        failure_count: rows.length - made.length,
        pages_total: made.reduce((n, r) => n + r.pages, 0),
        output: null,
      };
      if (made.length > 0) {
        const zip = new ZipBuilder();
        made.forEach((r, i) => zip.add(r.output!, pdfs[i], at));
        zip.add('manifest.json', Buffer.from(JSON.stringify(presentManifest(final, rows), null, 2)), at);
        const { parts, size } = await zip.finish();
        const key = bulkKeys.output(job.account_id, job.job_id);
        await deps.blobs.putParts(key, parts, ZIP);
        final = { ...final, output: { key, name: `${job.job_id}.zip`, content_type: ZIP, size_bytes: size, expires_at: retentionEnd('jobOutputs', at)! } };
      }
      await deps.files.putAll(job.job_id, rows);
      const event = jobEvent(EVENT_OF[final.status]!, final, at, {
        processed_count: final.processed_count,
        error_message: final.error_message,
        files_url: `/jobs/${job.job_id}/files`,
      });
      if (await deps.progress.finishJob(final, [event], cancelSeen)) {
        await releaseJob(deps, final);
        return { job_id: job.job_id, status: final.status };
      }
      const current = await deps.jobs.get(job.job_id);
      // Failed meanwhile (the workflow gave up on this step while it still ran): what it charged goes back.
      if (current?.status === 'failed') await refundFailedJob(deps, current);
      if (current?.status !== 'processing') return { job_id: job.job_id, status: current?.status ?? 'missing' };
      // Still processing: either the cancel that arrived meanwhile (once), or a write that lost a race; then retry.
      if (!current.cancel_requested || cancelSeen) throw new Error('the final write of the job did not go through');
      seen = current;
    }
  } catch (err) {
    // The workflow may have failed the job while this step still ran (its staged files are then gone): nobody is left
    // to retry, so what this step charged goes back now.
    const now = await deps.jobs.get(job.job_id).catch(() => null);
    if (now?.status === 'failed') {
      await refundFailedJob(deps, now);
      return { job_id: job.job_id, status: now.status };
    }
    throw new TransientTaskError(`finishing bulk job ${job.job_id} failed: ${(err as Error)?.message ?? err}`, { cause: err });
  }
}

/** The ASL's Catch: a step failed for good (retries exhausted, or timed out). Nothing produced is kept. */
export async function recordBulkJobFailure(deps: BulkDeps, input: BulkTaskInput): Promise<{ job_id: string; status: string }> {
  const job = await deps.jobs.get(input.job_id);
  if (!job || job.job_type !== 'bulk') return { job_id: input.job_id, status: 'missing' };
  if (FINISHED_STATUSES.has(job.status)) {
    // A retry of this step (or the start sweeper's call) after the job was failed but its release or refund did not go
    // through: both again (each is done once), then the sweeper's watch goes. The upload stays: a job failed at its
    // submission promised to keep it, and uploads expire on their own.
    if (job.status === 'failed') {
      await releaseJob(deps, job, { keepUpload: true, keepWatch: true });
      await refundFailedJob(deps, job);
      await deps.jobs.startSent(job.job_id).catch((err) => deps.log?.(`ending the watch of bulk job ${job.job_id}`, err));
    }
    return { job_id: job.job_id, status: job.status };
  }
  const ranOutOfTime = isTimeoutError(input.error);
  const final = await failJob(
    deps,
    job,
    'INTERNAL_SERVER_ERROR',
    ranOutOfTime ? 'The job ran out of time on our side; nothing was charged. Submit it again.' : 'The job failed on our side; nothing was charged. Submit it again.',
    { file_count: job.file_count ?? null },
  );
  return { job_id: final.job_id, status: final.status };
}
