/** The PDF tools limits (document 2, Limits). Instant requests and background jobs differ. */
export interface PdfToolLimits {
  kind: 'instant' | 'job';
  /** Merge inputs. */
  minMergeFiles: number;
  maxMergeFiles: number;
  /** Decoded input bytes: total for instant requests; per file and in total for jobs. */
  maxInputBytes: number;
  /** Pages processed (selected pages of a merge, document pages of a split). */
  maxPages: number;
  maxOutputs: number;
  maxOutputBytes: number;
  /**
   * PDF objects one output file may hold (not in the spec; a memory guard): each takes several hundred bytes while the
   * file is built (one page with 40,000 annotations selected 80 times filled 1.7 GB at 2 million). Real files stay far
   * below: 5,000 pages with a few dozen objects each.
   */
  maxObjectsPerOutput: number;
  /** Time budget of the whole operation. */
  timeoutSeconds: number;
}

const MB = 1024 * 1024;

export const INSTANT_LIMITS: PdfToolLimits = {
  kind: 'instant',
  minMergeFiles: 2,
  maxMergeFiles: 20,
  maxInputBytes: 4 * MB,
  maxPages: 500,
  maxOutputs: 100,
  maxOutputBytes: 300 * MB,
  maxObjectsPerOutput: 400_000,
  timeoutSeconds: 25,
};

export const JOB_LIMITS: PdfToolLimits = {
  kind: 'job',
  minMergeFiles: 2,
  maxMergeFiles: 100,
  maxInputBytes: 150 * MB,
  maxPages: 5000,
  maxOutputs: 500,
  maxOutputBytes: 1024 * MB,
  maxObjectsPerOutput: 1_500_000,
  // 15 minutes, less a margin so the job records its own timeout before the platform stops it.
  timeoutSeconds: 15 * 60 - 30,
};

/**
 * A PDF is returned in the response body when smaller than this: document 2's 4.4 MB, in its binary megabytes (its
 * 150 MB is 157286400 bytes), so 4,613,734.4 bytes; base64 of it (6,151,648 bytes) still fits a 6 MB Lambda response.
 */
export const MAX_INLINE_PDF_BYTES = 4.4 * MB;
/** Presigned upload size limit (bytes), as `max_bytes` reports it. */
export const MAX_UPLOAD_BYTES = 150 * MB;
