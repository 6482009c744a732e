/** Polls `ready` until it holds; fails naming `what` after `ms`. */
export async function until(what: string, ready: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
