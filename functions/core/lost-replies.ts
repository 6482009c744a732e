/**
 * A write that failed may have gone through all the same: its reply was lost, not the write (a timeout, a dropped
 * connection). `read` looks for what the write made; the answer is whether it is there. Unknown (the read fails too)
 * counts as not written: callers then undo what they can and answer with the error, as for any failed write.
 */
export async function writtenAfterAll(read: () => Promise<boolean>): Promise<boolean> {
  try {
    return await read();
  } catch {
    return false;
  }
}
