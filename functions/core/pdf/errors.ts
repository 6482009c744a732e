import { ServiceError } from '../errors';

export type PdfProblemCode = 'INVALID_PDF' | 'PDF_ENCRYPTED' | 'PDF_NO_PAGES' | 'PDF_TOO_COMPLEX';

/**
 * Something wrong with one input document, found by the engine. The operations layer turns it into a
 * ServiceError naming the culprit (`details.filename`, `details.input_index`).
 */
export class PdfProblem extends Error {
  constructor(
    readonly code: PdfProblemCode,
    /** Short machine-readable cause, e.g. `truncated`, `xref_not_found`, `not_a_pdf`. */
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'PdfProblem';
  }
}

/** The engine ran out of its time budget (instant: 25 s; jobs: just under 15 minutes). */
export class PdfDeadlineExceeded extends Error {
  constructor() {
    super('The PDF operation ran out of time.');
    this.name = 'PdfDeadlineExceeded';
  }
}

/** Reading the inputs passed what one request may parse (ReadBudget): PDF_TOO_COMPLEX, never taken for damage. */
export class ReadBudgetExceeded extends PdfProblem {
  constructor(reason: string, message: string) {
    super('PDF_TOO_COMPLEX', reason, message);
  }
}

/**
 * For catch blocks that treat a damaged object as missing: the deadline and the read budget are not damage, and
 * swallowing them would let the reading go on (a recovery scan of the whole file) past the time or memory limit.
 */
export function passDeadline(err: unknown): void {
  if (err instanceof PdfDeadlineExceeded || err instanceof ReadBudgetExceeded) throw err;
}

/** The file being built passed the bytes left for the operation's outputs (OUTPUT_TOO_LARGE, said by the operations layer). */
export class OutputBudgetExceeded extends Error {
  constructor(readonly kind: 'bytes' | 'objects' = 'bytes') {
    super(kind === 'bytes' ? 'The output would exceed its size budget.' : 'The output would hold more objects than one file may.');
    this.name = 'OutputBudgetExceeded';
  }
}

/** Which input a problem belongs to. `index` is the 0-based position in the request. */
export interface InputRef {
  filename: string;
  index: number;
}

const ADVICE: Record<PdfProblemCode, string> = {
  INVALID_PDF: 'Check that the file is a complete PDF (re-export or re-download it) and retry.',
  PDF_ENCRYPTED: 'Remove the password or encryption (for example by printing it to a new PDF) and retry.',
  PDF_NO_PAGES: 'Send a PDF with at least one page.',
  PDF_TOO_COMPLEX: 'Simplify or re-save the document, or split it into smaller files first.',
};

export function inputProblem(problem: PdfProblem, input: InputRef): ServiceError {
  return new ServiceError(problem.code, `${input.filename}: ${problem.message} ${ADVICE[problem.code]}`, {
    filename: input.filename,
    input_index: input.index,
    reason: problem.reason,
  });
}

/** Any details that name an input (added to range and limit errors). */
export function culprit(input: InputRef): { filename: string; input_index: number } {
  return { filename: input.filename, input_index: input.index };
}

export class Deadline {
  constructor(private readonly at: number, private readonly now: () => number = Date.now) {}
  static in(ms: number): Deadline {
    return new Deadline(Date.now() + ms);
  }
  static none(): Deadline {
    return new Deadline(Number.POSITIVE_INFINITY);
  }
  check(): void {
    if (this.now() >= this.at) throw new PdfDeadlineExceeded();
  }
  remainingMs(): number {
    return this.at - this.now();
  }
}
