/**
 * Presigned uploads (bulk ZIPs, background PDF inputs): keys are `uploads/<account>/<kind>/<ulid>.<ext>`, so
 * the key itself says whose upload it is and when it was issued.
 */
import { decodeTime, isValid } from 'ulid';
import type { z } from 'zod';
import { ServiceError, invalidParameter } from '../errors';
import { newUlid } from '../ids';
import type { BlobStore, JobRepository } from './ports';
import { type JobSlots, acquireSlot } from './slots';
import { signedUrlExpiry } from './access';
import { jobWritten } from './starts';
import { STORAGE_AREAS, UPLOAD_URL_TTL_SECONDS, keyBelongsTo, objectKey } from './storage-layout';
import { isJsonObject, parseRequest } from '../validation';
import type { Clock } from '../clock';

/** The upload routes: each issues keys of its own kind, and only its kind is an input where that route's uploads go. */
export const UPLOAD_KINDS = {
  bulk: { route: '/bulkjob/upload-url', extension: 'zip' },
  pdf: { route: '/pdf/upload-url', extension: 'pdf' },
} as const;
export type UploadKind = keyof typeof UPLOAD_KINDS;

/** A new upload key of this kind for the account (the ULID says when it was issued). */
export function newUploadKey(accountId: string, kind: UploadKind): string {
  return objectKey('uploads', accountId, kind, `${newUlid()}.${UPLOAD_KINDS[kind].extension}`);
}

/**
 * An upload-url body's `content_length_bytes`: required, a whole number of at least 1, at most `maxBytes` (a larger
 * one is `tooLarge`: past 2^53 a size is no longer a whole number to JavaScript, but it is still too large rather
 * than malformed).
 */
export function parseUploadLength(
  schema: z.ZodType<{ content_length_bytes: number }>,
  body: unknown,
  subject: string,
  maxBytes: number,
  tooLarge: (size: number) => ServiceError,
): number {
  const size = parseRequest(schema, isJsonObject(body) ? body : {}, {
    refusals: {
      content_length_bytes: (value) => {
        if (value === undefined || value === null) return invalidParameter('content_length_bytes', `content_length_bytes is required: the exact size of the ${subject} in bytes.`);
        if (typeof value === 'number' && Number.isFinite(value) && value > maxBytes) return tooLarge(value);
        return invalidParameter('content_length_bytes', 'content_length_bytes must be a whole number of bytes, at least 1.');
      },
    },
  }).content_length_bytes;
  if (size > maxBytes) throw tooLarge(size);
  return size;
}

/** What an upload-url route answers: a presigned PUT of exactly `size` bytes of `contentType`, valid 15 minutes. */
export async function presignUpload(deps: { blobs: BlobStore; clock: Clock }, key: string, upload: { size: number; contentType: string; maxBytes: number }) {
  const expiresAt = signedUrlExpiry(deps.clock, UPLOAD_URL_TTL_SECONDS);
  const url = await deps.blobs.signedPutUrl(key, { expiresInSeconds: UPLOAD_URL_TTL_SECONDS, contentType: upload.contentType, contentLength: upload.size });
  return {
    upload_url: url,
    s3_key: key,
    expires_at: expiresAt,
    max_bytes: upload.maxBytes,
    required_headers: { 'Content-Type': upload.contentType },
  };
}

const DAY_MS = 86_400_000;
const LIFETIME_MS = (STORAGE_AREAS.uploads.retentionDays ?? 1) * DAY_MS;

/** When an upload key was issued (the ULID of its file name), or null when the key carries none. */
export function uploadIssuedAt(key: string): Date | null {
  const id = key.slice(key.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '');
  return isValid(id) ? new Date(decodeTime(id)) : null;
}

export interface UploadRefusal {
  /** Names the input in messages, e.g. `report.pdf` or `The ZIP`. */
  subject: string;
  /** The kind of upload expected: only keys its route issued are accepted, and messages name that route. */
  kind: UploadKind;
  /** Details every refusal carries (e.g. `filename`, `input_index`); `s3_key` is added. */
  details?: Record<string, unknown>;
}

/**
 * The account a key names when it has the shape of a key we issue (`uploads/<account>/<kind>/<ulid>.<ext>`), else
 * null. Only such a key can belong to anyone; storage is not asked, so another account's uploads are never probed.
 */
export function uploadOwner(key: string): string | null {
  const parts = key.split('/');
  if (parts.length !== 4 || `${parts[0]}/` !== STORAGE_AREAS.uploads.prefix) return null;
  const [, account, kind, name] = parts;
  if (!/^[A-Za-z0-9_-]+$/.test(account) || !/^[a-z][a-z0-9-]*$/.test(kind) || !/^[0-9A-Z]{26}\.[a-z0-9]+$/.test(name)) return null;
  return uploadIssuedAt(key) ? account : null;
}

/**
 * The caller's upload at `key`: its own (403 FORBIDDEN for a well-formed key of another account), issued by us for
 * this kind of input, present and within the uploads' one-day life (404 UPLOAD_NOT_FOUND for anything else: a key
 * that names no account's upload was never uploaded, and a PDF upload is no ZIP upload — taking it would fail the
 * job and delete the upload). Returns what storage says of it; size limits are the caller's.
 */
export async function ownUpload(deps: { blobs: BlobStore; clock: Clock }, accountId: string, key: string, refusal: UploadRefusal) {
  const details = { ...refusal.details, s3_key: key };
  const route = UPLOAD_KINDS[refusal.kind].route;
  // Only a key of exactly the shape we issue is looked up: one with anything more (a NUL after the name made S3
  // answer an error, a 500 here) was never issued, so it was never uploaded.
  const owner = uploadOwner(key);
  if (owner !== accountId || !keyBelongsTo(key, 'uploads', accountId)) {
    if (owner !== null && owner !== accountId) {
      throw new ServiceError('FORBIDDEN', `${refusal.subject}: this s3_key belongs to another account. Upload with your own POST ${route}.`, details);
    }
    throw new ServiceError('UPLOAD_NOT_FOUND', `${refusal.subject}: no upload exists at this s3_key. Use the s3_key returned by POST ${route}.`, details);
  }
  if (key.split('/')[2] !== refusal.kind) {
    throw new ServiceError('UPLOAD_NOT_FOUND', `${refusal.subject}: this s3_key was not issued by POST ${route}, so nothing was uploaded there for this input. Upload it with POST ${route} and send the s3_key it returns.`, details);
  }
  const issued = uploadIssuedAt(key);
  const head = issued ? await deps.blobs.head(key) : null;
  if (!head || deps.clock.now().getTime() - issued!.getTime() > LIFETIME_MS) {
    throw new ServiceError('UPLOAD_NOT_FOUND', `${refusal.subject}: nothing was uploaded to this s3_key, the upload expired (uploads are kept one day), or a job already used it (a job deletes its uploads when it ends). Upload it again.`, details);
  }
  return head;
}

/** The slot kind that stands for one upload: held by the one job that uses (and will delete) it. */
export function uploadClaimKind(key: string): string {
  return `upload:${key.slice(key.lastIndexOf('/') + 1)}`;
}

/**
 * Takes the caller's uploads for `jobId` (each at most once, however often the job lists it): a job deletes the
 * uploads it used when it ends, so a second job given one of them while the first is queued or running could only
 * fail, or fail the first. An upload held by another job is 404 UPLOAD_NOT_FOUND (`details.reason: in_use`,
 * `details.job_id`), as it is once that job has ended and deleted it. On a refusal or a failure nothing stays taken.
 */
export async function claimUploads(
  deps: { slots: JobSlots; jobs: Pick<JobRepository, 'get'>; clock: Clock },
  input: { accountId: string; jobId: string; leaseSeconds: number; uploads: { key: string; refusal: UploadRefusal }[] },
): Promise<void> {
  const now = deps.clock.now();
  const taken: string[] = [];
  for (const { key, refusal } of input.uploads) {
    const kind = uploadClaimKind(key);
    if (taken.includes(kind)) continue;
    let acquired: boolean;
    try {
      acquired = await acquireSlot(deps, { accountId: input.accountId, kind, jobId: input.jobId, max: 1, now, leaseSeconds: input.leaseSeconds });
    } catch (err) {
      // The submission fails: uploads already taken would otherwise refuse its retry as in_use (for a job that was
      // never written) until their claims ran out.
      await releaseUploadClaims(deps, input.accountId, input.jobId, input.uploads.map((u) => u.key));
      throw err;
    }
    if (acquired) {
      taken.push(kind);
      continue;
    }
    const [holder] = await deps.slots.holders({ accountId: input.accountId, kind, now }).catch(() => [] as string[]);
    await releaseUploadClaims(deps, input.accountId, input.jobId, input.uploads.map((u) => u.key));
    const route = UPLOAD_KINDS[refusal.kind].route;
    const by = holder ? `job ${holder} (GET /jobs/${holder})` : 'another job';
    throw new ServiceError(
      'UPLOAD_NOT_FOUND',
      `${refusal.subject}: this upload is already used by ${by}, which deletes it when it ends; each job needs its own upload. Upload the file again with POST ${route} and send the new s3_key.`,
      { ...refusal.details, s3_key: key, reason: 'in_use', ...(holder ? { job_id: holder } : {}) },
    );
  }
}

/** Gives back what `claimUploads` took for `jobId`. Never throws. */
/**
 * Runs a submission while holding the caller's uploads for its job (see `claimUploads`). When it fails and the job
 * was not written, the claims are given back: nothing else would (a job written after all keeps them until it ends).
 */
export async function withUploadsClaimed<T>(
  deps: { slots: JobSlots; jobs: Pick<JobRepository, 'get'>; clock: Clock },
  claim: Parameters<typeof claimUploads>[1],
  submit: () => Promise<T>,
): Promise<T> {
  if (claim.uploads.length) await claimUploads(deps, claim);
  try {
    return await submit();
  } catch (err) {
    if (claim.uploads.length && !(await jobWritten(deps.jobs, claim.jobId))) {
      await releaseUploadClaims(deps, claim.accountId, claim.jobId, claim.uploads.map((u) => u.key));
    }
    throw err;
  }
}

export async function releaseUploadClaims(deps: { slots: JobSlots }, accountId: string, jobId: string, keys: string[]): Promise<void> {
  const kinds = [...new Set(keys.map(uploadClaimKind))];
  await Promise.all(kinds.map((kind) => deps.slots.release({ accountId, kind, jobId }).catch(() => undefined)));
}
