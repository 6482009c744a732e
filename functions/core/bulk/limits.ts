/** The bulk limits of document 1 (Limits table and bulk rules), in one place. */
const MiB = 1024 * 1024;

export const BULK_LIMITS = {
  /** Inline input (zip_base64, files, multipart): 4 MB of decoded data. */
  inlineBytes: 4 * MiB,
  /** Expanded archive: 300 MB of real inflated bytes. */
  expandedBytes: 300 * MiB,
  /** Entries in the archive (every central-directory entry: files, folders, ignored ones). */
  entries: 1000,
  /** An entry bigger than this (inflated) that expands more than `suspiciousRatio` times is refused. */
  suspiciousBytes: 1 * MiB,
  suspiciousRatio: 100,
  /** A convertible file over this size fails with FILE_TOO_LARGE. */
  convertibleBytes: 10 * MiB,
  /** Convertible files per job (also the default page budget; the plan's max_bulk_pages_per_job decides). */
  convertibleFiles: 200,
  /** Pages per file. */
  pagesPerFile: 100,
  /** Active (queued or processing) bulk jobs per account. */
  activeJobs: 2,
} as const;

/** Storage requests a job step keeps in flight at once (reading staged PDFs, deleting staged inputs). */
export const STORAGE_CONCURRENCY = 16;

/** Rendering of one file: the page is printed as it stands when the network has not gone idle after 20 s. */
export const BULK_IDLE_MAX_SECONDS = 20;
/** How long the network must be quiet to count as idle. */
export const BULK_IDLE_QUIET_MS = 100;
/** A file that has not printed after this long fails with RENDER_TIMEOUT. */
export const BULK_FILE_TIMEOUT_SECONDS = 60;
/** Files not started within this time after the job started are skipped with TIME_BUDGET_EXCEEDED. */
export const BULK_JOB_TIME_BUDGET_SECONDS = 15 * 60;
/**
 * A slot of a job that died without finishing is free again after this long: longer than the bulk workflow may run
 * (its TimeoutSeconds, 2 hours, with Prepare and Finish retries), so a slow job never loses its slot.
 */
export const BULK_SLOT_LEASE_SECONDS = 2 * 3600 + 10 * 60;

export type BundleType = 'html' | 'markdown';
export const BUNDLE_TYPES: readonly BundleType[] = ['html', 'markdown'];

/** Extensions (lower case) of the files a bundle type converts; everything else is an asset. */
export const CONVERTIBLE_EXTENSIONS: Record<BundleType, readonly string[]> = {
  html: ['.html', '.htm'],
  markdown: ['.md', '.markdown'],
};

export function isConvertible(path: string, bundleType: BundleType): boolean {
  const lower = path.toLowerCase();
  return CONVERTIBLE_EXTENSIONS[bundleType].some((ext) => lower.endsWith(ext) && lower.length > ext.length && !lower.endsWith(`/${ext}`));
}

/** Tuning of a job's timing (tests shorten them; production uses the constants above). */
export interface BulkTiming {
  idleMaxSeconds: number;
  fileTimeoutSeconds: number;
  jobTimeBudgetSeconds: number;
}

export const DEFAULT_BULK_TIMING: BulkTiming = {
  idleMaxSeconds: BULK_IDLE_MAX_SECONDS,
  fileTimeoutSeconds: BULK_FILE_TIMEOUT_SECONDS,
  jobTimeBudgetSeconds: BULK_JOB_TIME_BUDGET_SECONDS,
};
