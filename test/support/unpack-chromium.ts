/**
 * Child process of the unpack test: unpacks the bundled Chromium into $TMPDIR as the service does, then prints the
 * binary's path and its size at the moment it was handed over (a half-written binary shows as a smaller size).
 */
import { statSync } from 'node:fs';
import chromium from '@sparticuz/chromium';
import { installedChromiumRelease, unpackedChromium } from '../../functions/adapters/chromium/unpack';

void unpackedChromium({ unpack: () => chromium.executablePath(), release: installedChromiumRelease() }).then((path) => {
  process.stdout.write(JSON.stringify({ path, size: statSync(path).size }));
});
