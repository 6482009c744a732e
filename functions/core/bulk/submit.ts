/**
 * `POST /bulkjob/upload-url` and `POST /bulkjob`: the plan gate, the upload's ownership and size, a credit
 * check for one PDF, one of the account's two bulk slots, the staged input, a queued job and the workflow.
 * The archive itself is opened only by the workflow (its problems are job-level failure codes).
 */
import { ZipFile } from 'yazl';
import type { Account } from '../accounts/account';
import { assertCanCover } from '../billing/charging';
import type { Plan } from '../billing/plans';
import type { Clock } from '../clock';
import { ServiceError } from '../errors';
import { startJobWorkflow, storeQueuedJob } from '../workflows/start-job';
import { acquireSlot } from '../jobs/slots';
import { ownUpload, presignUpload, withUploadsClaimed } from '../jobs/uploads';
import { newId } from '../ids';
import { type Job, newJob } from '../jobs/job';
import type { BlobStore } from '../jobs/ports';
import { BULK_SLOT_KIND, BULK_WORKFLOW, type BulkDeps } from './deps';
import { failJob } from './lifecycle';
import { BULK_LIMITS, BULK_SLOT_LEASE_SECONDS } from './limits';
import { type BulkRequest, zipTooLarge } from './requests';
import { type StoredBulkRequest, ZIP, bulkKeys } from './storage';


/** 403 BULK_NOT_ENABLED unless the plan includes bulk jobs. */
export function requireBulk(plan: Plan): void {
  if (!plan.bulk_enabled) {
    throw new ServiceError('BULK_NOT_ENABLED', `Bulk jobs are not part of the ${plan.name} plan. Convert files one by one with /quickjob or /longjob, or change plan.`, {
      plan_id: plan.plan_id,
    });
  }
}

export function maxZipBytes(plan: Plan): number {
  return plan.max_bulk_zip_mb * 1024 * 1024;
}

/** POST /bulkjob/upload-url: a presigned PUT for exactly `size` bytes of application/zip, valid 15 minutes. */
export async function createBulkUploadUrl(deps: { blobs: BlobStore; clock: Clock }, account: Account, plan: Plan, size: number) {
  return presignUpload(deps, bulkKeys.upload(account.account_id), { size, contentType: ZIP, maxBytes: maxZipBytes(plan) });
}

/** An uploaded ZIP: the caller's, present and less than a day old (see ownUpload), within the plan's size. */
async function checkUpload(deps: { blobs: BlobStore; clock: Clock }, account: Account, plan: Plan, key: string): Promise<void> {
  const head = await ownUpload(deps, account.account_id, key, { subject: 'The ZIP', kind: 'bulk' });
  if (head.size_bytes > maxZipBytes(plan)) throw zipTooLarge(head.size_bytes, maxZipBytes(plan));
}

/** Inline files as a ZIP (stored entries), so the workflow reads every input the same way. */
function zipOf(files: { path: string; bytes: Buffer }[], mtime: Date): Promise<Buffer> {
  const zip = new ZipFile();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
  for (const f of files) zip.addBuffer(f.bytes, f.path, { compress: false, mtime });
  zip.end();
  return done;
}

/** POST /bulkjob: validates what can be known without opening the archive, then queues the job. */
export async function submitBulkJob(deps: BulkDeps, input: { account: Account; plan: Plan; request: BulkRequest }) {
  const { account, plan, request } = input;
  const now = deps.clock.now();
  // The input first (as on the PDF tools' routes), then the balance. The plan's size limit holds for every way of
  // sending the bundle: an inline one is measured by its ZIP, or by its files' contents.
  if (request.input.kind === 's3') await checkUpload(deps, account, plan, request.input.key);
  else {
    const size = request.input.kind === 'zip' ? request.input.bytes.length : request.input.files.reduce((n, f) => n + f.bytes.length, 0);
    if (size > maxZipBytes(plan)) throw zipTooLarge(size, maxZipBytes(plan));
  }
  const jobId = newId('job');
  // The upload serves this job only (it deletes it when it ends): one held by a queued or running job is refused now.
  const uploads = request.input.kind === 's3' ? [{ key: request.input.key, refusal: { subject: 'The ZIP', kind: 'bulk' as const } }] : [];
  return withUploadsClaimed(deps, { accountId: account.account_id, jobId, leaseSeconds: BULK_SLOT_LEASE_SECONDS, uploads }, () => queueBulkJob(deps, { account, plan, request, jobId, now }));
}

async function queueBulkJob(deps: BulkDeps, input: { account: Account; plan: Plan; request: BulkRequest; jobId: string; now: Date }) {
  const { account, plan, request, jobId, now } = input;
  assertCanCover(account, plan.price_per_pdf_micros, now);

  const zipKey = request.input.kind === 's3' ? request.input.key : bulkKeys.bundle(account.account_id, jobId);
  const job: Job = {
    ...newJob({ job_id: jobId, account_id: account.account_id, job_type: 'bulk', status: 'queued', now }),
    bundle_type: request.bundle_type,
    file_count: null,
    processed_count: 0,
    success_count: 0,
    failure_count: 0,
    pages_total: 0,
    input_key: zipKey,
  };
  const stored: StoredBulkRequest = { bundle_type: request.bundle_type, options: request.options, zip_key: zipKey };
  const files: { key: string; body: Uint8Array; contentType: string }[] = [{ key: bulkKeys.request(account.account_id, jobId), body: Buffer.from(JSON.stringify(stored)), contentType: 'application/json' }];
  // Built before the slot is taken: a failure here holds nothing.
  if (request.input.kind !== 's3') {
    files.unshift({ key: zipKey, body: request.input.kind === 'zip' ? request.input.bytes : await zipOf(request.input.files, now), contentType: ZIP });
  }
  const acquired = await acquireSlot(deps, { accountId: account.account_id, kind: BULK_SLOT_KIND, jobId, max: BULK_LIMITS.activeJobs, now, leaseSeconds: BULK_SLOT_LEASE_SECONDS });
  if (!acquired) {
    throw new ServiceError('BULK_JOB_ALREADY_ACTIVE', `${BULK_LIMITS.activeJobs} bulk jobs are already queued or running for this account. Wait for one to finish (GET /jobs/{job_id}) or cancel one, then retry.`, {
      max_active_jobs: BULK_LIMITS.activeJobs,
    });
  }
  await storeQueuedJob(deps, job, { workflow: BULK_WORKFLOW, slotKind: BULK_SLOT_KIND, files });
  await startJobWorkflow(deps, BULK_WORKFLOW, job, () => failJob(deps, job, 'SERVICE_UNAVAILABLE', 'The job could not be started; nothing was charged.', {}, { keepUpload: true }));
  return {
    job_id: jobId,
    status: 'queued' as const,
    job_type: 'bulk' as const,
    bundle_type: request.bundle_type,
    message: `The bulk job is queued. Follow it with GET /jobs/${jobId}; per-file results appear at GET /jobs/${jobId}/files and the ZIP of PDFs at GET /jobs/${jobId}/download once it has finished.`,
  };
}
