import { Deadline, ReadBudgetExceeded } from './errors';
import type { ParseMeter } from './parser';

/** Decoded structure a request may always use, whatever its inputs weigh. */
export const MIN_DECODED_STRUCTURE_BYTES = 128 * 1024 * 1024;

/**
 * Values a request may always parse (numbers, names, strings, array elements, dictionary entries), whatever its inputs
 * weigh: each costs ~50–100 bytes of memory, so a few MB of decoded structure could otherwise take gigabytes (a 58 KB
 * file whose object stream held one array of 15 million numbers took 2.8 GB). Real documents stay far below: a
 * 5,000-page file with rich pages parses about a million.
 */
export const MIN_PARSED_VALUES = 3_000_000;
/** Above MIN_PARSED_VALUES, inputs may parse one value per this many bytes they weigh (a 150 MB job: ~9 million). */
const BYTES_PER_PARSED_VALUE = 16;
/** The longest single string a document may hold (signatures' /Contents are tens of KB; streams are not strings). */
export const MAX_TOKEN_BYTES = 8 * 1024 * 1024;
/** The longest name (the PDF reference's implementation limit is 127 bytes; generous for writers that exceed it). */
export const MAX_NAME_BYTES = 1024;
/**
 * Distinct names one request may parse. pdf-lib keeps every name it ever made in a process-wide pool that never
 * shrinks (dictionaries are keyed by the pooled instance), so each request may add only so many: ~100 MB at worst.
 * Real documents use a few thousand (keys, resource names).
 */
export const MAX_DISTINCT_NAMES = 100_000;

/** Lookups of objects not yet read between two looks at the clock. */
const LOOKUPS_PER_CLOCK_CHECK = 256;
/** Parsed values between two looks at the clock (a single huge object is read within the deadline too). */
const VALUES_PER_CLOCK_CHECK = 4096;

/**
 * What reading the inputs of one request may cost, shared by all of its documents. Decoded structure (xref and
 * object streams, repeats included): 128 MB, or as many bytes as the inputs weigh if that is more — per document
 * alone, twenty 120 KB files in one merge held 2.6 GB. Time: the request's deadline, looked at while objects are
 * read and streams decoded, so a file that is slow to read ends the request at its time limit rather than after it.
 */
export class ReadBudget implements ParseMeter {
  private decoded = 0;
  private lookups = 0;
  private parsed = 0;
  private readonly names = new Set<string>();

  constructor(
    readonly maxDecodedBytes: number,
    readonly deadline: Deadline = Deadline.none(),
    readonly maxParsedValues: number = MIN_PARSED_VALUES,
  ) {}

  /** The budget of one request whose inputs weigh `inputBytes` together. */
  static forInputs(inputBytes: number, deadline?: Deadline): ReadBudget {
    return new ReadBudget(Math.max(MIN_DECODED_STRUCTURE_BYTES, inputBytes), deadline, Math.max(MIN_PARSED_VALUES, Math.ceil(inputBytes / BYTES_PER_PARSED_VALUE)));
  }

  /** Called for every value parsed: PDF_TOO_COMPLEX past the budget, PdfDeadlineExceeded once the deadline has passed. */
  onValue(): void {
    if (++this.parsed > this.maxParsedValues) {
      throw new ReadBudgetExceeded('too_many_values', `The document holds more than ${this.maxParsedValues.toLocaleString('en-US')} values (numbers, names, array and dictionary entries) in its structure, more than can be processed.`);
    }
    if (this.parsed % VALUES_PER_CLOCK_CHECK === 0) this.deadline.check();
  }

  /** Called with the length of every string and name before it is built. */
  onToken(bytes: number, kind: 'string' | 'name'): void {
    const max = kind === 'name' ? MAX_NAME_BYTES : MAX_TOKEN_BYTES;
    if (bytes > max) {
      throw new ReadBudgetExceeded('token_too_long', `The document holds a ${kind} of ${bytes.toLocaleString('en-US')} bytes; at most ${max.toLocaleString('en-US')} can be processed.`);
    }
  }

  /** Called with every name before it is made. */
  onName(name: string): void {
    if (this.names.size < MAX_DISTINCT_NAMES || this.names.has(name)) {
      this.names.add(name);
      return;
    }
    throw new ReadBudgetExceeded('too_many_names', `The document uses more than ${MAX_DISTINCT_NAMES.toLocaleString('en-US')} distinct names, more than can be processed.`);
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
