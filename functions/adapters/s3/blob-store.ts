import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { contentDisposition } from '../../core/jobs/content-disposition';
import type { BlobStore } from '../../core/jobs/ports';

export interface S3Config {
  bucket: string;
  region: string;
  /** Local stand-in endpoint (s3rver); unset in AWS. */
  endpoint?: string;
}

export function createS3Client(config: S3Config): S3Client {
  return new S3Client({
    region: config.region,
    // Checksums only when required: a presigned PUT must not demand a checksum header the uploader can't know.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(config.endpoint
      ? { endpoint: config.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } }
      : {}),
  });
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err instanceof NoSuchKey || err instanceof NotFound || e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/** Attempts at a streamed PUT (the SDK's own default for the requests it does retry). */
const STREAMED_PUT_ATTEMPTS = 3;

/** An S3 answer worth sending the request again for: a server-side error, throttling, a stalled upload, a dropped connection. */
function isTransient(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode ?? 0;
  return (
    status >= 500 ||
    status === 429 ||
    !!e?.$retryable ||
    ['SlowDown', 'RequestTimeout', 'InternalError', 'ServiceUnavailable', 'TimeoutError'].includes(e?.name ?? '') ||
    ['ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(e?.code ?? '')
  );
}

export class S3BlobStore implements BlobStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Uint8Array, contentType: string): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.byteLength }));
  }

  async putParts(key: string, parts: readonly Uint8Array[], contentType: string): Promise<void> {
    const length = parts.reduce((n, p) => n + p.byteLength, 0);
    // The SDK retries no request whose body is a stream (it cannot read it twice), where S3 asks for retries (500
    // InternalError, 503 SlowDown, RequestTimeout): each attempt here sends a fresh stream of the same parts.
    for (let attempt = 1; ; attempt++) {
      // A byte stream of the parts with its exact length: one PUT (up to 5 GB), no joined copy.
      const body = Readable.from(parts, { objectMode: false });
      try {
        await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, ContentLength: length }));
        return;
      } catch (err) {
        if (attempt >= STREAMED_PUT_ATTEMPTS || !isTransient(err)) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** attempt));
      }
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const res = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = await res.Body!.transformToByteArray();
      // A view of the bytes read, not a copy: inputs run to 150 MB (PDFs) and 300 MB (bulk ZIPs).
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async head(key: string) {
    try {
      const res = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size_bytes: res.ContentLength ?? 0, content_type: res.ContentType ?? null };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async signedGetUrl(key: string, opts: { expiresInSeconds: number; filename?: string }): Promise<string> {
    const kind = opts.filename?.toLowerCase().endsWith('.pdf') ? 'inline' : 'attachment';
    return getSignedUrl(
      this.s3,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ResponseContentDisposition: opts.filename ? contentDisposition(kind, opts.filename) : undefined,
      }),
      { expiresIn: opts.expiresInSeconds },
    );
  }

  /** The signature covers Content-Type and Content-Length, so S3 refuses any other size or type. */
  async signedPutUrl(key: string, opts: { expiresInSeconds: number; contentType: string; contentLength: number }): Promise<string> {
    return getSignedUrl(
      this.s3,
      new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: opts.contentType, ContentLength: opts.contentLength }),
      { expiresIn: opts.expiresInSeconds, signableHeaders: new Set(['content-type', 'content-length']) },
    );
  }
}
