import { ServiceError } from '../../../../functions/core/errors';
import { MIN_DECODED_STRUCTURE_BYTES, ReadBudget } from '../../../../functions/core/pdf/budget';
import { Deadline, PdfDeadlineExceeded } from '../../../../functions/core/pdf/errors';
import { openInputs } from '../../../../functions/core/pdf/operations';
import { PdfReader } from '../../../../functions/core/pdf/reader';
import { objectStreamBombPdf, simplePdf } from '../../../support/pdf-fixtures';

const MB = 1024 * 1024;
const files = (...all: Uint8Array[]) => all.map((bytes, index) => ({ bytes, filename: `f${index}.pdf`, index }));

/** A deadline that passes after `checks` looks at the clock, whatever the real time. */
function deadlineAfter(checks: number): { deadline: Deadline; looks: () => number } {
  let looks = 0;
  return { deadline: new Deadline(checks + 1, () => ++looks), looks: () => looks };
}

describe('ReadBudget', () => {
  it('is 128 MB of decoded structure per request, or what its inputs weigh if more', () => {
    expect(ReadBudget.forInputs(4 * MB).maxDecodedBytes).toBe(MIN_DECODED_STRUCTURE_BYTES);
    expect(ReadBudget.forInputs(150 * MB).maxDecodedBytes).toBe(150 * MB);
  });

  it('shares decoded bytes among the inputs of one request, refusing the file that crosses it by name', () => {
    const bomb = objectStreamBombPdf(70); // alone well within the budget
    expect(bomb.length).toBeLessThan(100 * 1024);
    expect(openInputs(files(bomb))[0].pages).toHaveLength(1);
    let err: unknown;
    try {
      openInputs(files(bomb, bomb, bomb));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'PDF_TOO_COMPLEX', details: { filename: 'f1.pdf', input_index: 1, reason: 'structure_too_large' } });
    expect((err as Error).message).toContain('128 MB');
  });

  it('ends reading at the deadline while objects are read, as PdfDeadlineExceeded rather than a refusal', async () => {
    const big = await simplePdf(1200);
    const clock = deadlineAfter(3);
    expect(() => openInputs(files(big), clock.deadline)).toThrow(PdfDeadlineExceeded);
    // Looked at the clock while reading: a few hundred lookups apart, not once per object.
    expect(clock.looks()).toBe(4);
    expect(openInputs(files(big), Deadline.none())[0].pages).toHaveLength(1200);
  });

  it('ends decoding at the deadline: each structure stream looks at the clock before it is decoded', async () => {
    const packed = await simplePdf(5, { objectStreams: true });
    expect(() => PdfReader.open(packed, new ReadBudget(MIN_DECODED_STRUCTURE_BYTES, deadlineAfter(0).deadline))).toThrow(PdfDeadlineExceeded);
  });
});
