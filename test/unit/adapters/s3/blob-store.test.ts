import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { S3BlobStore, createS3Client } from '../../../../functions/adapters/s3/blob-store';
import { contentDisposition } from '../../../../functions/core/jobs/content-disposition';
import { type LocalS3, startLocalS3 } from '../../../../local/emulators/s3';

describe('S3BlobStore.signedGetUrl', () => {
  // Presigning is local computation: no request is made to the endpoint.
  const store = new S3BlobStore(createS3Client({ bucket: 'b', region: 'us-east-1', endpoint: 'http://127.0.0.1:1' }), 'b');
  const dispositionOf = async (filename?: string) =>
    new URL(await store.signedGetUrl('outputs/acc/j/x', { expiresInSeconds: 60, filename })).searchParams.get('response-content-disposition');

  it("asks S3 for the same header as direct responses, valid for names with ' ( ) *", async () => {
    const name = "O'Brien (1) *.zip";
    expect(await dispositionOf(name)).toBe(contentDisposition('attachment', name));
    expect(await dispositionOf(name)).toContain("filename*=UTF-8''O%27Brien%20%281%29%20%2A.zip");
  });

  it('opens PDFs inline and sets no header without a name', async () => {
    expect(await dispositionOf('Report.PDF')).toBe(contentDisposition('inline', 'Report.PDF'));
    expect(await dispositionOf(undefined)).toBeNull();
  });
});

describe('S3BlobStore presigned URLs', () => {
  // Presigning is local computation: no request is made to the endpoint.
  const store = new S3BlobStore(createS3Client({ bucket: 'b', region: 'us-east-1', endpoint: 'http://127.0.0.1:1' }), 'b');
  const putUrl = async (contentType: string, contentLength: number) =>
    new URL(await store.signedPutUrl('uploads/acc/u1', { expiresInSeconds: 600, contentType, contentLength })).searchParams;

  it('lasts as long as asked', async () => {
    expect((await putUrl('application/pdf', 10)).get('X-Amz-Expires')).toBe('600');
    expect(new URL(await store.signedGetUrl('outputs/acc/j/x', { expiresInSeconds: 3600 })).searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(new URL(await store.signedGetUrl('outputs/acc/j/x', { expiresInSeconds: 60 })).searchParams.get('X-Amz-Expires')).toBe('60');
  });

  it("signs an upload's Content-Type and Content-Length: the URL is good for that type and size only", async () => {
    const url = await putUrl('application/pdf', 10);
    expect(url.get('X-Amz-SignedHeaders')!.split(';')).toEqual(expect.arrayContaining(['content-length', 'content-type']));
    // Other headers, other signature: an uploader cannot reuse the URL for another size or type.
    const signature = url.get('X-Amz-Signature');
    expect((await putUrl('application/pdf', 11)).get('X-Amz-Signature')).not.toBe(signature);
    expect((await putUrl('application/zip', 10)).get('X-Amz-Signature')).not.toBe(signature);
  });
});

describe('S3BlobStore.putParts (against s3rver)', () => {
  let local: LocalS3;
  let store: S3BlobStore;
  const dir = mkdtempSync(path.join(os.tmpdir(), 's3-parts-'));
  beforeAll(async () => {
    local = await startLocalS3({ directory: dir, bucket: 'parts' });
    store = new S3BlobStore(createS3Client({ bucket: 'parts', region: 'us-east-1', endpoint: local.endpoint }), 'parts');
  });
  afterAll(async () => {
    await local.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers null for an object that is not there', async () => {
    expect(await store.get('outputs/acc/job/missing.zip')).toBeNull();
    expect(await store.head('outputs/acc/job/missing.zip')).toBeNull();
  });

  it('stores the parts in order as one object of their total length', async () => {
    const parts = [Buffer.from('PK\u0003\u0004'), Buffer.alloc(300 * 1024, 0x61), Buffer.from(''), new Uint8Array([1, 2, 3])];
    await store.putParts('outputs/acc/job/out.zip', parts, 'application/zip');
    expect(await store.head('outputs/acc/job/out.zip')).toEqual({ size_bytes: 4 + 300 * 1024 + 3, content_type: 'application/zip' });
    expect(await store.get('outputs/acc/job/out.zip')).toEqual(Buffer.concat(parts));
  });
});

describe('S3BlobStore.putParts when S3 asks for a retry', () => {
  // S3 answers 503 SlowDown (or 500 InternalError) now and then; s3rver never does. The SDK retries no request whose
  // body is a stream, so putParts must send its parts again itself.
  let server: http.Server;
  let endpoint: string;
  const bodies: Buffer[] = [];
  let failFirst = 0;
  let failWith: [number, string] = [503, 'SlowDown'];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks));
        if (failFirst > 0) {
          failFirst--;
          res.writeHead(failWith[0], { 'content-type': 'application/xml' });
          res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${failWith[1]}</Code><Message>refused</Message></Error>`);
          return;
        }
        res.writeHead(200, { etag: '"x"' });
        res.end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the whole object again after a 503 SlowDown', async () => {
    bodies.length = 0;
    failFirst = 1;
    const store = new S3BlobStore(createS3Client({ bucket: 'b', region: 'us-east-1', endpoint }), 'b');
    const parts = [Buffer.from('PK\x03\x04'), Buffer.alloc(64 * 1024, 7), Buffer.from('end')];
    await store.putParts('outputs/acc/job/out.zip', parts, 'application/zip');
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toEqual(Buffer.concat(parts));
  });

  it('gives up after three attempts, and at once on a refusal that is not transient', async () => {
    const store = new S3BlobStore(createS3Client({ bucket: 'b', region: 'us-east-1', endpoint }), 'b');
    bodies.length = 0;
    failFirst = 5;
    await expect(store.putParts('outputs/acc/job/out.zip', [Buffer.from('x')], 'application/zip')).rejects.toMatchObject({ name: 'SlowDown' });
    expect(bodies).toHaveLength(3);
    bodies.length = 0;
    failFirst = 5;
    failWith = [403, 'AccessDenied'];
    await expect(store.putParts('outputs/acc/job/out.zip', [Buffer.from('x')], 'application/zip')).rejects.toMatchObject({ name: 'AccessDenied' });
    expect(bodies).toHaveLength(1);
    failFirst = 0;
    failWith = [503, 'SlowDown'];
  });
});
