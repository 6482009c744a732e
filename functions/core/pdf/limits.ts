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
  // 15 minutes, less a margin so the job records its own timeout before the platform stops it.
  timeoutSeconds: 15 * 60 - 30,
};

/** A PDF returned in the response body must stay under this (base64 of it fits a 6 MB Lambda response). */
export const MAX_INLINE_PDF_BYTES = 4_400_000;
/** Presigned upload size limit (bytes), as `max_bytes` reports it. */
export const MAX_UPLOAD_BYTES = 150 * MB;
