/**
 * How a workflow-run job (bulk, merge/split) lets go of what it held once it has ended: its running slot, its credit
 * commitment, the start sweeper's watch, its staged files and the uploads it used, then its claims on those uploads.
 */
import { mapBounded } from '../concurrency';
import type { Job } from '../jobs/job';
import { keyBelongsTo } from '../jobs/storage-layout';
import { releaseUploadClaims } from '../jobs/uploads';
import type { WorkflowJobDeps } from './job-deps';

/** Deletes kept in flight at once (a bulk job stages up to 200 PDFs). */
const DELETES_IN_FLIGHT = 16;

export interface HeldByJob {
  /** The kind of running slot the job took at submission. */
  slotKind: string;
  /** Files the job staged for itself (its stored request, bundle, PDFs made so far): always deleted. */
  staged: string[];
  /** Storage keys of the job's inputs; the account's uploads among them are deleted unless `keepUploads`. */
  inputs: string[];
  /** A job that never started keeps its uploads: the caller retries with the same s3_key(s). */
  keepUploads?: boolean;
  /** The start sweeper's watch stays (a failure path drops it itself once its refund went through). */
  keepWatch?: boolean;
}

/**
 * Never throws: each failure is logged, and what is left behind goes later (a slot at its lease, a commitment at
 * another job's check, a watch at the sweeper's next look, files by the bucket's lifecycle rules).
 */
export async function releaseWorkflowJob(deps: Pick<WorkflowJobDeps, 'slots' | 'commitments' | 'jobs' | 'blobs' | 'log'>, job: Job, held: HeldByJob): Promise<void> {
  const { account_id: accountId, job_id: jobId } = job;
  const log = (what: string) => (err: unknown) => deps.log?.(`${what} of ${job.job_type} job ${jobId}`, err);
  await deps.slots.release({ accountId, kind: held.slotKind, jobId }).catch(log('releasing the slot'));
  await deps.commitments.release(accountId, jobId).catch(log('releasing the commitment'));
  if (!held.keepWatch) await deps.jobs.startSent(jobId).catch(log('ending the watch'));
  const uploads = held.inputs.filter((key) => keyBelongsTo(key, 'uploads', accountId));
  const keys = new Set([...held.staged, ...(held.keepUploads ? [] : uploads)]);
  await mapBounded([...keys], DELETES_IN_FLIGHT, (key) => deps.blobs.delete(key).catch(log(`deleting ${key}`)));
  // After the deletes: a job given one of these uploads meanwhile is refused at submission rather than losing it later.
  await releaseUploadClaims(deps, accountId, jobId, uploads);
}
