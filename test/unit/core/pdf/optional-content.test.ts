import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRef, PDFString } from 'pdf-lib';
import { parseFilenamePattern } from '../../../../functions/core/pdf/filenames';
import { INSTANT_LIMITS } from '../../../../functions/core/pdf/limits';
import { openInput, planMerge, planSplit, produce } from '../../../../functions/core/pdf/operations';
import { parsePageRange } from '../../../../functions/core/pdf/page-ranges';

/** Two pages; page 1 draws a layer ("Answers") that the default configuration hides, and one ("Notes") it shows. */
async function layered(baseStateOff = false): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const ctx = doc.context;
  const answers = ctx.register(ctx.obj({ Type: 'OCG', Name: PDFString.of('Answers') }));
  const notes = ctx.register(ctx.obj({ Type: 'OCG', Name: PDFString.of('Notes') }));
  const page = doc.addPage([200, 200]);
  doc.addPage([200, 200]);
  page.node.set(PDFName.of('Resources'), ctx.obj({ Properties: { L1: answers, L2: notes } }));
  const content = ctx.stream('/OC /L1 BDC 0 0 100 100 re f EMC /OC /L2 BDC 100 100 50 50 re f EMC');
  page.node.set(PDFName.of('Contents'), ctx.register(content));
  const d = baseStateOff ? { BaseState: 'OFF', ON: [notes] } : { OFF: [answers] };
  doc.catalog.set(PDFName.of('OCProperties'), ctx.obj({ OCGs: [answers, notes], D: d }));
  return doc.save();
}

async function layersOf(bytes: Uint8Array) {
  const doc = await PDFDocument.load(bytes);
  const props = doc.catalog.lookupMaybe(PDFName.of('OCProperties'), PDFDict);
  const name = (ref: unknown) => (doc.context.lookup(ref as PDFRef, PDFDict).get(PDFName.of('Name')) as PDFString).decodeText();
  const list = (dict: PDFDict | undefined, key: string) => (dict?.lookupMaybe(PDFName.of(key), PDFArray)?.asArray() ?? []).map(name);
  const d = props?.lookupMaybe(PDFName.of('D'), PDFDict);
  return { groups: list(props, 'OCGs'), off: list(d, 'OFF') };
}

describe('optional content (layers)', () => {
  it('a layer hidden by default stays hidden in a split (it showed: the catalog /OCProperties was dropped)', async () => {
    for (const baseStateOff of [false, true]) {
      const input = { bytes: await layered(baseStateOff), filename: 'quiz.pdf', index: 0 };
      const plan = planSplit({ input, split: { mode: 'extract', pages: parsePageRange('1') }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
      const { files } = await produce(plan, { limits: INSTANT_LIMITS });
      expect(await layersOf(files[0].bytes)).toEqual({ groups: ['Answers', 'Notes'], off: ['Answers'] });
    }
  });

  it('merges the layers of every input; pages without layers add none', async () => {
    const inputs = [
      { bytes: await layered(), filename: 'a.pdf', index: 0, pages: parsePageRange('1,2') },
      { bytes: await layered(true), filename: 'b.pdf', index: 1, pages: parsePageRange('1') },
    ];
    const plan = planMerge({ inputs }, inputs.map((i) => openInput(i)), INSTANT_LIMITS);
    const { files } = await produce(plan, { limits: INSTANT_LIMITS });
    expect(await layersOf(files[0].bytes)).toEqual({ groups: ['Answers', 'Notes', 'Answers', 'Notes'], off: ['Answers', 'Answers'] });

    const input = { bytes: await layered(), filename: 'c.pdf', index: 0 };
    const plain = planSplit({ input, split: { mode: 'extract', pages: parsePageRange('2') }, pattern: parseFilenamePattern(undefined) }, openInput(input), INSTANT_LIMITS);
    const { files: plainFiles } = await produce(plain, { limits: INSTANT_LIMITS });
    expect(await layersOf(plainFiles[0].bytes)).toEqual({ groups: [], off: [] });
  });
});
