/** `npm start`: the whole API on http://127.0.0.1:$PORT (default 3000), state under $DATA_DIR (default .data/). */
import { startLocalStack } from '../local/stack';

async function main() {
  // Empty values mean unset, as in a shell's `PORT= npm start`.
  const port = Number(process.env.PORT || 3000);
  const dataDir = process.env.DATA_DIR || '.data';
  process.env.LOG_LEVEL ??= 'warn';
  // Lambda runs Node 22; locally Node 20 is supported and the SDK's upgrade notice is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const stack = await startLocalStack({ port, dataDir, warm: process.env.WARM !== 'false' });
  process.stdout.write(`PDF service listening on ${stack.baseUrl}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await stack.stop().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err?.stack ?? err}\n`);
  process.exit(1);
});
