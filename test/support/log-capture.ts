/**
 * What the service writes to stderr (where functions/logger.ts writes its JSON lines, and where Lambda's log group
 * reads from) while a test runs: kept and also passed through, so a failing test still shows it. Set LOG_LEVEL before
 * the logger is made (the test stack makes its own at start) to see debug lines too.
 */
export interface CapturedLogs {
  /** Everything written since the capture started (or since `clear`). */
  text(): string;
  /** The lines that are the logger's JSON. */
  entries(): { level: string; message: string; extra?: unknown }[];
  clear(): void;
  restore(): void;
}

export function captureLogs(opts: { echo?: boolean } = {}): CapturedLogs {
  let chunks: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = function (chunk: unknown, ...rest: unknown[]) {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    if (opts.echo) return (write as (...a: unknown[]) => boolean).call(process.stderr, chunk, ...rest);
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    if (done) process.nextTick(done);
    return true;
  } as typeof process.stderr.write;
  const text = () => chunks.join('');
  return {
    text,
    entries: () =>
      text()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [JSON.parse(line)];
          } catch {
            return [];
          }
        }),
    clear: () => void (chunks = []),
    restore: () => void (process.stderr.write = write),
  };
}
