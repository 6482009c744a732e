import { newUlid } from '../../../../functions/core/ids';
import { objectKey } from '../../../../functions/core/jobs/storage-layout';
import { runInspect } from '../../../../functions/core/pdfops/inspect';
import { simplePdf } from '../../../support/pdf-fixtures';
import { rejection } from '../../../support/errors';
import { memoryWorld } from '../../../support/memory';

describe('runInspect', () => {
  it('reads within an instant request\'s time: past it, 408 PDFOP_TIMEOUT naming the file', async () => {
    const w = memoryWorld();
    // Enough objects that reading looks at the clock (every 256 lookups); a time of 0 has passed before it starts.
    const many = await simplePdf(600);
    const source = { kind: 'inline' as const, bytes: many, filename: 'many.pdf' };
    const err = await rejection(runInspect({ blobs: w.blobs, clock: w.clock, timeoutSeconds: 0 }, w.account, source, false));
    expect(err).toMatchObject({ code: 'PDFOP_TIMEOUT', details: { filename: 'many.pdf', input_index: 0, timeout_seconds: 0 } });
    // The default time (25 s) reads it.
    expect((await runInspect({ blobs: w.blobs, clock: w.clock }, w.account, source, false)).page_count).toBe(600);
  });

  it('reports the limit of the route the file came by: 500 pages inline, 5000 for an upload (a background job\'s)', async () => {
    const w = memoryWorld();
    const bytes = await simplePdf(2);
    const key = objectKey('uploads', w.account.account_id, 'pdf', `${newUlid()}.pdf`);
    await w.blobs.put(key, bytes, 'application/pdf');
    const uploaded = await runInspect({ blobs: w.blobs, clock: w.clock }, w.account, { kind: 'upload', s3_key: key, filename: 'up.pdf' }, false);
    expect(uploaded).toMatchObject({ page_count: 2, max_pages: 5000 });
    const inline = await runInspect({ blobs: w.blobs, clock: w.clock }, w.account, { kind: 'inline', bytes, filename: 'in.pdf' }, false);
    expect(inline).toMatchObject({ page_count: 2, max_pages: 500 });
  });
});
