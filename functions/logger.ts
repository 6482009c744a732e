/** One-line JSON logs (CloudWatch-friendly); LOG_LEVEL=debug|info|warn|error|silent. */
export interface Logger {
  debug(message: string, extra?: unknown): void;
  info(message: string, extra?: unknown): void;
  warn(message: string, extra?: unknown): void;
  error(message: string, extra?: unknown): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type Level = keyof typeof LEVELS;

/**
 * Scalar fields of an error that say what failed without carrying what was sent: a Node or nodemailer `code`, the SMTP
 * reply code and command (MailSendError keeps them for this), an HTTP status, the AWS SDK's fault and request id. Whole
 * error objects are never written: SDK, Stripe and HTTP errors hold requests, headers and bodies.
 */
const ERROR_FIELDS = ['code', 'responseCode', 'command', 'statusCode', '$fault'] as const;
const MAX_CAUSES = 3;

function describeError(err: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: err.message };
  const fields = err as unknown as Record<string, unknown>;
  for (const key of ERROR_FIELDS) {
    const value = fields[key];
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
  }
  const meta = fields.$metadata as { httpStatusCode?: unknown; requestId?: unknown } | undefined;
  if (typeof meta?.httpStatusCode === 'number') out.http_status = meta.httpStatusCode;
  if (typeof meta?.requestId === 'string') out.aws_request_id = meta.requestId;
  if (depth === 0) out.stack = err.stack;
  // The cause is often the one that says why ("fetch failed" ← ECONNREFUSED); its stack adds nothing the first has.
  if (err.cause instanceof Error && depth < MAX_CAUSES) out.cause = describeError(err.cause, depth + 1);
  return out;
}

function describe(extra: unknown): unknown {
  if (extra instanceof Error) return describeError(extra, 0);
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
