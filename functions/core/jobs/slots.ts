/**
 * Running-job slots: "at most N jobs of a kind running per account" (2 merge/split jobs; 2 bulk jobs)
 * without a counter that could drift. A job takes a free slot when it is accepted and gives it back when it
 * finishes; a slot whose lease ran out (a job that died without finishing) can be taken again.
 */
export interface JobSlots {
  /** Takes one of `max` slots for `jobId`; false when all are held by unexpired leases. */
  acquire(input: { accountId: string; kind: string; jobId: string; max: number; now: Date; leaseSeconds: number }): Promise<boolean>;
  /** Gives back the slot held by `jobId` (no-op when it holds none). */
  release(input: { accountId: string; kind: string; jobId: string }): Promise<void>;
}
