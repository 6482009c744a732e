/**
 * Where things live in the bucket and how long they stay. The CDK bucket's lifecycle rules are built
 * from this table, and the download routes use the same numbers to answer 410 OUTPUT_EXPIRED.
 */
export const STORAGE_AREAS = {
  /** Quick (store: true), long and bulk outputs; mail-merge reports. */
  jobOutputs: { prefix: 'outputs/', retentionDays: 30 },
  /** Merge/split outputs and their ZIPs. */
  pdfOutputs: { prefix: 'pdfop/', retentionDays: 7 },
  /** Editor saves. */
  editorOutputs: { prefix: 'edits/', retentionDays: 7 },
  /** Customer uploads through presigned PUTs (bulk ZIPs, background PDF inputs, mail-merge lists). */
  uploads: { prefix: 'uploads/', retentionDays: 1 },
  /** Documents of queued long jobs, waiting for the worker (removed when the job ends). */
  jobInputs: { prefix: 'inputs/', retentionDays: 2 },
  /** Template assets live as long as the template; no expiry. */
  templateAssets: { prefix: 'templates/', retentionDays: null },
} as const;

export type StorageArea = keyof typeof STORAGE_AREAS;

/** Signed links last one hour. */
export const LINK_TTL_SECONDS = 3600;
/** Presigned upload URLs last 15 minutes. */
export const UPLOAD_URL_TTL_SECONDS = 900;

const DAY_MS = 86_400_000;

export function retentionEnd(area: StorageArea, from: Date): string | null {
  const days = STORAGE_AREAS[area].retentionDays;
  return days === null ? null : new Date(from.getTime() + days * DAY_MS).toISOString();
}

/** Keys are scoped by account so ownership is visible in the key itself. */
export function objectKey(area: StorageArea, accountId: string, ...parts: string[]): string {
  for (const p of parts) if (!p || p.includes('..')) throw new Error(`unsafe key part: ${p}`);
  return `${STORAGE_AREAS[area].prefix}${accountId}/${parts.join('/')}`;
}

export function keyBelongsTo(key: string, area: StorageArea, accountId: string): boolean {
  return key.startsWith(`${STORAGE_AREAS[area].prefix}${accountId}/`) && !key.includes('..');
}
