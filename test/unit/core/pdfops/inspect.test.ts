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
});
