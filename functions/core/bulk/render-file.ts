/**
 * Workflow step 2 (`RenderFile`, one Map iteration per file): renders one convertible file with the bundle as
 * the page's world, stores its PDF under the job's staging prefix and records its row exactly once (which also
 * moves `processed_count`). A cancel or the job's time budget makes it skip the file before starting it: checked
 * when the task starts and again once the renderer holds a printing slot (up to 10 files wait for slots at once;
 * a cancel meanwhile must not let them print). A file whose printing started may finish.
 * Nothing is charged here: the page budget depends on the files before this one, so `Finish` charges.
 */
import { decodeText } from '../conversion/url-input';
import { isServiceError } from '../errors';
import type { JobFileRow } from '../jobs/files';
import type { Job } from '../jobs/job';
import { markdownToHtml } from '../render/markdown';
import { pageCountFacts } from '../render/page-window';
import { RenderNotStartedError, RendererStoppedError, type RenderResult, RenderTimeoutError, TooManyPagesError } from '../render/ports';
import { TransientTaskError } from '../workflows/ports';
import type { BulkDeps } from './deps';
import { CANCELLED_SKIP } from './lifecycle';
import { BULK_IDLE_QUIET_MS, BULK_LIMITS } from './limits';
import { bulkKeys, bundleDocumentAt, bundleFileSize, bundleReader, loadIndex } from './storage';

export interface RenderFileInput {
  job_id: string;
  account_id?: string;
  index: number;
}

/** Storage trouble during the render (the bundle, the job): worth a retry, never the document's fault. */
class OurSideError extends Error {
  constructor(what: string, cause: unknown) {
    super(`${what} failed: ${(cause as Error)?.message ?? cause}`, { cause });
    this.name = 'OurSideError';
  }
}

type RowChanges = Partial<JobFileRow>;

/** Why a file of `job` must not start now (skipped row), or null when it may. */
function whyNotStart(deps: BulkDeps, job: Job): RowChanges | null {
  if (job.cancel_requested) return { ...CANCELLED_SKIP };
  const started = Date.parse(job.started_at ?? job.created_at);
  if (deps.clock.now().getTime() - started > deps.timing.jobTimeBudgetSeconds * 1000) {
    return {
      status: 'skipped',
      error_code: 'TIME_BUDGET_EXCEEDED',
      error_message: `Not converted: the job's ${Math.round(deps.timing.jobTimeBudgetSeconds / 60)}-minute time budget ran out before this file started. Submit the remaining files as a new job.`,
    };
  }
  return null;
}

export async function renderBulkFile(deps: BulkDeps, input: RenderFileInput): Promise<{ index: number; status: string }> {
  const { index } = input;
  const job = await deps.jobs.get(input.job_id);
  if (!job || job.job_type !== 'bulk' || job.status !== 'processing') return { index, status: 'not_processing' };
  const bundle = await loadIndex(deps.blobs, job.account_id, job.job_id);
  const file = bundle?.files[index];
  if (!bundle || !file || file.entry === null) throw new TransientTaskError(`bulk job ${job.job_id} has no prepared file ${index}`);
  // Already recorded (its PDF is stored before its row): the workflow runs again after a stop or a crash of the
  // local service, and a retried task may find its own row. Printing it again would only cost the time.
  const done = await deps.files.get(job.job_id, index);
  if (done) return { index, status: done.status };

  const row: JobFileRow = {
    index,
    input: file.path,
    output: null,
    status: 'failed',
    pages: 0,
    error_code: null,
    error_message: null,
    blocked_requests: 0,
    render_timeout: false,
    missing_assets: 0,
    key: null,
  };
  const record = async (changes: RowChanges) => {
    await deps.progress.recordFile(job.job_id, { ...row, ...changes });
    return { index, status: changes.status ?? row.status };
  };

  const skip = whyNotStart(deps, job);
  if (skip) return record(skip);

  const read = bundleReader(deps.blobs, bundle);
  let source: Buffer | null;
  try {
    source = await read(file.path);
  } catch (err) {
    throw new TransientTaskError(`reading ${file.path} of bulk job ${job.job_id} failed`, { cause: err });
  }
  if (!source) throw new TransientTaskError(`${file.path} of bulk job ${job.job_id} is missing from its bundle`);
  // Read as a browser opening the file would: a byte-order mark, else (HTML) a <meta charset>, else UTF-8. Read as
  // UTF-8 always, a windows-1252 or UTF-16 page printed U+FFFD for every accented letter.
  const text = decodeText({ kind: bundle.bundle_type, body: source, contentType: '', charset: null, finalUrl: '' });

  // Asked again once the renderer holds a printing slot (the wait for one can be long): the job as it is then decides.
  const calledOff: { skip?: RowChanges | 'not_processing' } = {};
  const shouldStart = async () => {
    let current: Job | null;
    try {
      current = await deps.jobs.get(job.job_id);
    } catch (err) {
      throw new OurSideError('reading the job before printing', err);
    }
    calledOff.skip = current?.status === 'processing' ? (whyNotStart(deps, current) ?? undefined) : 'not_processing';
    return calledOff.skip === undefined;
  };

  /** The row of a file refused for its page count (counted, or estimated far beyond the limit). */
  const pageLimitRow = (counted: Pick<RenderResult, 'pages' | 'morePages'>): RowChanges => {
    const count = pageCountFacts(counted, BULK_LIMITS.pagesPerFile);
    return {
      error_code: 'PAGE_LIMIT_EXCEEDED',
      error_message: `${file.path} has ${count.text}; a file of a bulk job may have at most ${BULK_LIMITS.pagesPerFile}. Split it, or use options.pageRanges.`,
    };
  };

  let result;
  try {
    // Inside the try: Markdown the parser refuses (nested too deeply, over its deadline) fails this file, not the job.
    const html = bundle.bundle_type === 'markdown' ? markdownToHtml(text) : text;
    result = await deps.renderer.render({
      html,
      options: bundle.options,
      timeoutMs: deps.timing.fileTimeoutSeconds * 1000,
      networkIdle: { quietMs: BULK_IDLE_QUIET_MS, maxMs: deps.timing.idleMaxSeconds * 1000 },
      maxPages: BULK_LIMITS.pagesPerFile,
      shouldStart,
      tenant: job.account_id,
      bundle: {
        documentPath: file.path,
        // The job's files may share a warm page one after another (storage cleared in between), never another job's.
        scope: job.job_id,
        read: (path) =>
          read(path).catch((err) => {
            throw new OurSideError('reading the bundle', err);
          }),
        size: (path) => bundleFileSize(bundle, path),
        isDocument: (path) => bundleDocumentAt(bundle, path) !== undefined,
      },
    });
  } catch (err) {
    if (err instanceof RenderNotStartedError) {
      // No longer processing (ended elsewhere): its row could not be written anyway.
      return calledOff.skip && calledOff.skip !== 'not_processing' ? record(calledOff.skip) : { index, status: 'not_processing' };
    }
    // The file's index, not its name: names are the customer's, and this message reaches logs and the workflow history.
    if (err instanceof OurSideError || err instanceof RendererStoppedError) throw new TransientTaskError(`rendering file ${index} of bulk job ${job.job_id}: ${err.message}`, { cause: err });
    if (err instanceof RenderTimeoutError) {
      return record({ error_code: 'RENDER_TIMEOUT', error_message: `${file.path} did not finish rendering within ${deps.timing.fileTimeoutSeconds} seconds (a script that never ends?).` });
    }
    if (err instanceof TooManyPagesError) return record(pageLimitRow(err));
    (isServiceError(err) ? deps.log : (deps.logUnexpected ?? deps.log))?.(`bulk job ${job.job_id}: file ${index} failed to render`, err);
    const why = isServiceError(err) ? err.message : 'the renderer could not print it (the page crashed or could not be opened).';
    return record({ error_code: 'RENDER_FAILED', error_message: `${file.path} could not be converted: ${why}` });
  }
  const facts = { blocked_requests: result.blockedRequests, render_timeout: result.renderTimeout, missing_assets: result.missingAssets ?? 0 };
  if (result.morePages || result.pages > BULK_LIMITS.pagesPerFile) return record({ ...facts, ...pageLimitRow(result) });
  const key = bulkKeys.pdf(job.account_id, job.job_id, index);
  try {
    await deps.blobs.put(key, result.pdf, 'application/pdf');
  } catch (err) {
    throw new TransientTaskError(`storing the PDF of ${file.path} (bulk job ${job.job_id}) failed`, { cause: err });
  }
  const links = result.documentLinks ? { document_links: result.documentLinks } : {};
  return record({ ...facts, ...links, status: 'success', pages: result.pages, key, size_bytes: result.pdf.byteLength });
}
