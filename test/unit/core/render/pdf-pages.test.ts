import { PDFDocument } from 'pdf-lib';
import { countPdfPages, largestPageSidePt } from '../../../../functions/core/render/pdf-pages';

describe('countPdfPages', () => {
  it('reads the root page-tree count of an uncompressed page tree', async () => {
    const chromiumLike = Buffer.from('%PDF-1.4\n1 0 obj\n<</Type /Pages\n/Count 8\n/Kids []>>\nendobj\n2 0 obj\n<</Type /Pages\n/Count 23\n/Kids [1 0 R]>>\nendobj\n', 'latin1');
    expect(await countPdfPages(chromiumLike)).toBe(23);
  });

  it('takes the largest count, wherever the root node stands among the page-tree nodes', async () => {
    const rootFirst = Buffer.from('%PDF-1.4\n2 0 obj\n<</Type /Pages\n/Count 23\n/Kids [1 0 R 3 0 R]>>\nendobj\n1 0 obj\n<</Type /Pages\n/Count 8\n/Kids []>>\nendobj\n3 0 obj\n<</Count 15 /Type /Pages /Kids []>>\nendobj\n', 'latin1');
    expect(await countPdfPages(rootFirst)).toBe(23);
  });

  it('falls back to a full parse when the tree is in object streams', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 3; i++) doc.addPage();
    const bytes = await doc.save({ useObjectStreams: true });
    expect(await countPdfPages(bytes)).toBe(3);
  });

  it('reads the count of the page-tree dictionary, not text elsewhere that looks like one', async () => {
    const hostileTitle = Buffer.from(`%PDF-1.4\n1 0 obj\n<</Title (${'/Count 1 '.repeat(50_000)})>>\nendobj\n2 0 obj\n<</Type /Pages /Kids [3 0 R] /Count 2>>\nendobj\n`, 'latin1');
    expect(await countPdfPages(hostileTitle)).toBe(2);
  });
});

describe('largestPageSidePt', () => {
  it('reads the longest side of any page', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([595.92, 841.92]);
    doc.addPage([360000 / 100, 1200]).setMediaBox(0, 0, 14_500, 1200);
    expect(await largestPageSidePt(await doc.save())).toBe(14_500);
  });

  it('is not fooled by text that spells a MediaBox (a document title)', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([595.92, 841.92]);
    doc.setTitle('/MediaBox [0 0 360000 1200]');
    expect(await largestPageSidePt(await doc.save({ useObjectStreams: false }))).toBeCloseTo(841.92, 2);
  });
});
