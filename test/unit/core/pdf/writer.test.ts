import { PDFDocument, PDFName, PDFString } from 'pdf-lib';
import { parseFilenamePattern } from '../../../../functions/core/pdf/filenames';
import { INSTANT_LIMITS } from '../../../../functions/core/pdf/limits';
import { openInput, planSplit, produce } from '../../../../functions/core/pdf/operations';
import { parsePageRange } from '../../../../functions/core/pdf/page-ranges';

/** One page whose only annotation holds a 1 MB string: tiny when the input stores it in a compressed object stream. */
async function pageWithLongAnnotation(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([200, 200]);
  const note = doc.context.obj({ Type: 'Annot', Subtype: 'Text', Rect: [0, 0, 10, 10], Contents: PDFString.of('A'.repeat(1024 * 1024)) });
  page.node.set(PDFName.of('Annots'), doc.context.obj([doc.context.register(note)]));
  return doc.save({ useObjectStreams: true });
}

describe('OutputDocument', () => {
  it('compresses few but large objects: a one-page split of a 4 KB file stays small', async () => {
    const bytes = await pageWithLongAnnotation();
    expect(bytes.length).toBeLessThan(16 * 1024);
    const input = { bytes, filename: 'note.pdf', index: 0 };
    const plan = planSplit({ input, split: { mode: 'extract', pages: parsePageRange('1') }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    const { files } = await produce(plan, { limits: INSTANT_LIMITS });
    expect(files[0].size_bytes).toBeLessThan(64 * 1024);
    // Still a readable PDF with the annotation and its full text.
    const out = await PDFDocument.load(files[0].bytes);
    const annots = out.getPage(0).node.Annots()!;
    const annot = out.context.lookup(annots.get(0)) as unknown as { get(k: PDFName): PDFString };
    expect(annot.get(PDFName.of('Contents')).asString().length).toBe(1024 * 1024);
  });
});
