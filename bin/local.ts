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
  const starting = startLocalStack({ port, dataDir, warm: process.env.WARM !== 'false' });
  // The gateway answers (and accepts requests, which wait for Chromium) before the start has finished warming it, so
  // the signal handlers are in place from the beginning: a signal then stops the service once it is up, gracefully.
  let stopping = false;
  const onSignal = stopOnSignals(
    {
      stop: async () => {
        stopping = true;
        await (await starting).stop();
      },
    },
    { limitMs: stopLimitMs, write: (line) => process.stderr.write(`${line}\n`), exit: (code) => process.exit(code) },
  );
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stack = await starting;
  if (!stopping) process.stdout.write(`PDF service listening on ${stack.baseUrl}\n`);
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err?.stack ?? err}\n`);
  process.exit(1);
});
