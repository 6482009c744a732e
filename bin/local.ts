/** `npm start`: the whole API on http://127.0.0.1:$PORT (default 3000), state under $DATA_DIR (default .data/). */
import { STOP_LIMIT_MS, stopOnSignals } from '../local/signals';
import { startLocalStack } from '../local/stack';

async function main() {
  // Empty values mean unset, as in a shell's `PORT= npm start`.
  const port = Number(process.env.PORT || 3000);
  const dataDir = process.env.DATA_DIR || '.data';
  process.env.LOG_LEVEL ??= 'warn';
  // Lambda runs Node 22; locally Node 20 is supported and the SDK's upgrade notice is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const stopLimitMs = Number(process.env.LOCAL_STOP_TIMEOUT_MS || STOP_LIMIT_MS);
  if (!Number.isFinite(stopLimitMs) || stopLimitMs <= 0) throw new Error(`LOCAL_STOP_TIMEOUT_MS must be a number of milliseconds above 0, not "${process.env.LOCAL_STOP_TIMEOUT_MS}"`);
  const stack = await startLocalStack({ port, dataDir, warm: process.env.WARM !== 'false' });
  process.stdout.write(`PDF service listening on ${stack.baseUrl}\n`);
  const onSignal = stopOnSignals(stack, {
    limitMs: stopLimitMs,
    write: (line) => process.stderr.write(`${line}\n`),
    exit: (code) => process.exit(code),
  });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err?.stack ?? err}\n`);
  process.exit(1);
});
