import { S3BlobStore, createS3Client } from '../../../../functions/adapters/s3/blob-store';
import { contentDisposition } from '../../../../functions/core/jobs/content-disposition';

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
