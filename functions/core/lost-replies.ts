/**
 * A write that failed may have gone through all the same: its reply was lost, not the write (a timeout, a dropped
 * connection). What it made is then looked up. A read-back that fails too is tried again twice, briefly (a throttled
 * or dropped request rarely fails three times in a third of a second); after that the outcome is unknown.
 */
const READ_BACK_DELAYS_MS = [0, 50, 250];

/** What `read` gives, read again after a failure as above; undefined when every try failed. */
export function readBack<T>(read: () => Promise<T>): Promise<T | undefined> {
  return triedBriefly(read);
}

/** An idempotent call (a read, a delete) tried as a read-back is: up to three times in a third of a second; undefined when every try failed. */
export async function triedBriefly<T>(call: () => Promise<T>): Promise<T | undefined> {
  for (const delay of READ_BACK_DELAYS_MS) {
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    try {
      return await call();
    } catch {
      // tried again below
    }
  }
  return undefined;
}

/**
 * Whether a failed write went through all the same: `read` looks for what it made. Unknown counts as not written:
 * callers then undo what they can and answer with the error, as for any failed write.
 */
export async function writtenAfterAll(read: () => Promise<boolean>): Promise<boolean> {
  return (await readBack(read)) ?? false;
}
