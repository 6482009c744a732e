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
}
