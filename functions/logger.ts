/** One-line JSON logs (CloudWatch-friendly); LOG_LEVEL=debug|info|warn|error|silent. */
export interface Logger {
  debug(message: string, extra?: unknown): void;
  info(message: string, extra?: unknown): void;
  warn(message: string, extra?: unknown): void;
  error(message: string, extra?: unknown): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type Level = keyof typeof LEVELS;

function describe(extra: unknown): unknown {
  if (extra instanceof Error) return { name: extra.name, message: extra.message, stack: extra.stack };
  return extra;
}

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  const threshold = LEVELS[(level in LEVELS ? level : 'info') as Level];
  const write = (lvl: Level) => (message: string, extra?: unknown) => {
    if (LEVELS[lvl] < threshold) return;
    const line = JSON.stringify({ level: lvl, time: new Date().toISOString(), message, ...(extra === undefined ? {} : { extra: describe(extra) }) });
    process.stderr.write(`${line}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
