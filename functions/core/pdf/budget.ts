import { Deadline } from './errors';

/** Decoded structure a request may always use, whatever its inputs weigh. */
export const MIN_DECODED_STRUCTURE_BYTES = 128 * 1024 * 1024;

/** Lookups of objects not yet read between two looks at the clock. */
const LOOKUPS_PER_CLOCK_CHECK = 256;

/**
 * What reading the inputs of one request may cost, shared by all of its documents. Decoded structure (xref and
 * object streams, repeats included): 128 MB, or as many bytes as the inputs weigh if that is more — per document
 * alone, twenty 120 KB files in one merge held 2.6 GB. Time: the request's deadline, looked at while objects are
 * read and streams decoded, so a file that is slow to read ends the request at its time limit rather than after it.
 */
export class ReadBudget {
  private decoded = 0;
  private lookups = 0;

  constructor(
    readonly maxDecodedBytes: number,
    readonly deadline: Deadline = Deadline.none(),
  ) {}

  /** The budget of one request whose inputs weigh `inputBytes` together. */
  static forInputs(inputBytes: number, deadline?: Deadline): ReadBudget {
    return new ReadBudget(Math.max(MIN_DECODED_STRUCTURE_BYTES, inputBytes), deadline);
  }

  /** Decoded bytes still allowed. */
  decodable(): number {
    return this.maxDecodedBytes - this.decoded;
  }

  spendDecoded(bytes: number): void {
    this.decoded += bytes;
  }

  /** Called on every object read from the file: throws PdfDeadlineExceeded once the deadline has passed. */
  onLookup(): void {
    if (++this.lookups % LOOKUPS_PER_CLOCK_CHECK === 0) this.deadline.check();
  }
}
