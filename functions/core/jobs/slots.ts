import { FINISHED_STATUSES } from './job';
import type { JobRepository } from './ports';

/**
 * Running-job slots: "at most N jobs of a kind running per account" (2 merge/split jobs; 2 bulk jobs)
 * without a counter that could drift. A job takes a free slot when it is accepted and gives it back when it
 * finishes; a slot whose lease ran out (a job that died without finishing) can be taken again.
 */
export interface JobSlots {
  /**
   * Takes one of `max` slots for `jobId`; false when all are held by unexpired leases. `holder` names this one
   * attempt when the same job may take a slot again after its lease ran out (a redelivered render); default `jobId`.
   */
  acquire(input: { accountId: string; kind: string; jobId: string; holder?: string; max: number; now: Date; leaseSeconds: number }): Promise<boolean>;
  /**
   * Gives back the slots `jobId` holds (no-op when it holds none); with `holder`, only those that attempt took, so a
   * late release by an attempt whose lease ran out leaves the slot of the attempt that took over alone.
   */
  release(input: { accountId: string; kind: string; jobId: string; holder?: string }): Promise<void>;
  /** The jobs holding a slot of `kind` under a lease not over at `now`; with `takenBefore`, only slots taken before it. */
  holders(input: { accountId: string; kind: string; now: Date; takenBefore?: Date }): Promise<string[]>;
}

type AcquireInput = Parameters<JobSlots['acquire']>[0];

/**
 * A slot taken this long ago for a job that still has no record was left by a submission that stopped between taking
 * it and writing its job (a Lambda killed at its time limit, a failed write whose slot release failed too): no
 * submission runs this long (API Gateway gives up after 29 s), and no job will ever give that slot back.
 */
export const UNRECORDED_SLOT_GRACE_MS = 10 * 60_000;

/**
 * Takes a slot as `JobSlots.acquire` does; when every slot is held, first gives back those of jobs that have finished
 * and tries once more. A finished job's release can fail (storage trouble: it is not retried once the job has ended),
 * and its slot then stayed held until its lease ran out, hours for a bulk job, refusing the account's submissions.
 * A holder whose job is not written yet (a submission in progress) keeps its slot, unless it took it longer ago than any
 * submission runs (UNRECORDED_SLOT_GRACE_MS): that submission stopped, and its slot would stay held until its lease
 * ran out (2 hours 10 minutes for a bulk job), refusing the account's submissions meanwhile.
 */
export async function acquireSlot(deps: { slots: JobSlots; jobs: Pick<JobRepository, 'get'> }, input: AcquireInput): Promise<boolean> {
  if (await deps.slots.acquire(input)) return true;
  let freed = false;
  const held = { accountId: input.accountId, kind: input.kind, now: input.now };
  const abandonedIfUnrecorded = new Set(await deps.slots.holders({ ...held, takenBefore: new Date(input.now.getTime() - UNRECORDED_SLOT_GRACE_MS) }));
  for (const jobId of await deps.slots.holders(held)) {
    const job = await deps.jobs.get(jobId);
    if (job ? !FINISHED_STATUSES.has(job.status) : !abandonedIfUnrecorded.has(jobId)) continue;
    await deps.slots.release({ accountId: input.accountId, kind: input.kind, jobId });
    freed = true;
  }
  return freed && deps.slots.acquire(input);
}
