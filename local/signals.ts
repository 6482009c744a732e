/**
 * How `npm start` answers SIGINT and SIGTERM: the first stops the service gracefully, within a limit; a later one, or
 * the limit, ends the process at once. Either way is safe: the next start takes over what was in flight (as after
 * SIGKILL), so a stop never has to wait for a long render.
 */

export interface StoppableService {
  stop(): Promise<void>;
}

export interface SignalStopOptions {
  /** The longest a graceful stop may take before the process exits anyway. */
  limitMs: number;
  /**
   * Signals within this long of the first are the same stop: a terminal's Ctrl-C reaches both npm and the service,
   * and npm passes its own on, so one key press arrives twice within milliseconds.
   */
  sameSignalMs?: number;
  write(line: string): void;
  exit(code: number): void;
  now?: () => number;
}

export const STOP_LIMIT_MS = 60_000;
const SAME_SIGNAL_MS = 1_000;

/** Returns the signal handler (the caller registers it for SIGINT and SIGTERM). */
export function stopOnSignals(service: StoppableService, opts: SignalStopOptions): (signal: NodeJS.Signals) => void {
  const now = opts.now ?? Date.now;
  const sameSignalMs = opts.sameSignalMs ?? SAME_SIGNAL_MS;
  let firstAt: number | undefined;
  let exited = false;
  const exit = (code: number, line?: string) => {
    if (exited) return;
    exited = true;
    if (line) opts.write(line);
    opts.exit(code);
  };
  return (signal) => {
    if (firstAt !== undefined) {
      if (now() - firstAt >= sameSignalMs) exit(1, `${signal} again: exiting now; the next start takes over the work still in flight`);
      return;
    }
    firstAt = now();
    const seconds = Math.round(opts.limitMs / 1000);
    opts.write(`${signal}: stopping (requests and work in flight finish, for up to ${seconds} s; signal again to exit at once)`);
    const limit = setTimeout(
      () => exit(1, `still stopping after ${seconds} s: exiting now; the next start takes over the work still in flight`),
      opts.limitMs,
    );
    service.stop().then(
      () => {
        clearTimeout(limit);
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(limit);
        exit(1, `the stop failed: ${(err as Error)?.stack ?? err}`);
      },
    );
  };
}
