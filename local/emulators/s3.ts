/** Local S3: s3rver with files under the data dir. It serves real presigned GET/PUT URLs (it does not check signatures). */
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';

// s3rver ships no usable types for its constructor options.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver');

export interface LocalS3 {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startLocalS3(opts: { directory: string; bucket: string; port?: number }): Promise<LocalS3> {
  mkdirSync(opts.directory, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port: opts.port ?? 0,
    silent: true,
    directory: opts.directory,
    configureBuckets: [{ name: opts.bucket }],
    allowMismatchedSignatures: true,
  });
  const address: AddressInfo = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: () => server.close(),
  };
}
