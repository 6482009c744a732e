/**
 * Merge and split at the document level: open inputs (errors name the culprit), plan the outputs and
 * check the limits before any page is copied, then produce the files.
 */
import type { PDFRef } from 'pdf-lib';
import { ServiceError } from '../errors';
import { assemble } from './assemble';
import { ReadBudget } from './budget';
import { SourceDocument } from './copier';
import { Deadline, type InputRef, OutputBudgetExceeded, PdfDeadlineExceeded, PdfProblem, culprit, inputProblem } from './errors';
import { type PdfWarning, orderWarnings } from './features';
import { type FilenamePattern, DEFAULT_MERGE_NAME, basenameOf, dedupeFilenames, renderFilename, sanitizeFilename, windowsSafeName, withPdfExtension } from './filenames';
import type { PdfToolLimits } from './limits';
import { type ParsedRange, assertWithinDocument, countSelected, formatPages, resolvePageRange } from './page-ranges';
import { PdfReader, asProblem } from './reader';

export interface PdfInputFile extends InputRef {
  bytes: Uint8Array;
}

export type SplitMode =
  | { mode: 'extract'; pages: ParsedRange }
  | { mode: 'ranges'; ranges: ParsedRange[] }
  | { mode: 'every_n'; every_n: number }
  | { mode: 'each_page' };

export interface MergeSpec {
  /** `pagesParameter`: where the request sent `pages` (default `inputs[i].pages`; a merge form sends `page_ranges[i]`). */
  inputs: (PdfInputFile & { pages: ParsedRange | null; pagesParameter?: string })[];
  /** `output_filename` as sent (without .pdf); default "merged". */
  outputFilename?: string | null;
  title?: string | null;
}

export interface SplitSpec {
  input: PdfInputFile;
  split: SplitMode;
  pattern: FilenamePattern;
}

/** One file to produce: 1-based pages of each source, in order. */
interface OutputPlan {
  name: string;
  page_range: string;
  selections: { source: SourceDocument; page: number }[];
}

export interface OperationPlan {
  operation: 'merge' | 'split';
  /** Document pages of all inputs. */
  inputPages: number;
  /** What is billed: selected pages for a merge, document pages for a split. */
  pagesProcessed: number;
  outputs: OutputPlan[];
  title: string | null;
}

export interface ProducedFile {
  /** 0-based position among the outputs. */
  index: number;
  name: string;
  pages: number;
  page_range: string;
  size_bytes: number;
  warnings: PdfWarning[];
  bytes: Uint8Array;
}

export interface OperationResult {
  plan: OperationPlan;
  files: ProducedFile[];
  warnings: PdfWarning[];
}

/**
 * Opens the inputs of one request, which share one ReadBudget (decoded structure and `deadline`); errors name the
 * culprit. PdfDeadlineExceeded when the deadline passes while they are read.
 */
export function openInputs(inputs: readonly PdfInputFile[], deadline?: Deadline): SourceDocument[] {
  const budget = ReadBudget.forInputs(
    inputs.reduce((n, i) => n + i.bytes.length, 0),
    deadline,
  );
  return inputs.map((input) => openInput(input, budget));
}

/** See `produce`: what the memory guard on a file being built allows beyond twice the output bytes left (at most). */
const OUTPUT_GUARD_SLACK_BYTES = 64 * 1024 * 1024;

/** Opens one input: INVALID_PDF, PDF_ENCRYPTED (also owner-password-only files), PDF_NO_PAGES, PDF_TOO_COMPLEX. */
export function openInput(input: PdfInputFile, budget: ReadBudget = ReadBudget.forInputs(input.bytes.length)): SourceDocument {
  try {
    const reader = PdfReader.open(input.bytes, budget);
    if (reader.encrypted) throw new PdfProblem('PDF_ENCRYPTED', 'encrypted', 'The PDF is encrypted or password-protected.');
    const source = new SourceDocument(reader, { filename: input.filename, index: input.index });
    if (source.pages.length === 0) throw new PdfProblem('PDF_NO_PAGES', 'no_pages', 'The PDF has no pages.');
    return source;
  } catch (err) {
    throw inputProblem(asProblem(err), input);
  }
}

function outputTooLarge(limits: PdfToolLimits, outputCount: number, input: InputRef): ServiceError {
  return new ServiceError(
    'OUTPUT_TOO_LARGE',
    `The output files would total more than ${Math.round(limits.maxOutputBytes / 1048576)} MB. Select fewer pages or split into fewer, larger files (every_n).`,
    { ...culprit(input), max_bytes: limits.maxOutputBytes, output_count: outputCount },
  );
}

function outputTooComplex(limits: PdfToolLimits, outputCount: number, input: InputRef): ServiceError {
  const max = limits.maxObjectsPerOutput;
  return new ServiceError(
    'OUTPUT_TOO_LARGE',
    `An output file would hold more than ${max.toLocaleString('en-US')} PDF objects (pages selected many times over, each with its own copy of its annotations and links). Select fewer pages per file, or split into more, smaller files.`,
    { ...culprit(input), max_objects: max, output_count: outputCount },
  );
}

/**
 * The least the outputs will weigh: each file carries, once, the content streams of the pages it holds and every
 * stream their resources reach (see SourceDocument.pageStreams). The real size is known only once the files are made.
 */
export function outputsAtLeast(outputs: readonly Pick<OutputPlan, 'selections'>[], stopAbove = Infinity, maxVisits = FLOOR_MAX_VISITS): number {
  let total = 0;
  let visits = 0;
  for (const output of outputs) {
    const seen = new Map<SourceDocument, Set<PDFRef>>();
    // Resources shared by many pages are counted once per file, not once per page.
    const seenShared = new Set<readonly unknown[]>();
    for (const { source, page } of output.selections) {
      let refs = seen.get(source);
      if (!refs) seen.set(source, (refs = new Set()));
      const { own, shared } = source.pageStreams(page);
      const lists = seenShared.has(shared) ? [own] : [own, shared];
      seenShared.add(shared);
      for (const list of lists) {
        for (const [ref, size] of list) {
          // What is summed so far is already a floor: a document built to make counting slow only ends it early.
          if (++visits > maxVisits) return total;
          if (refs.has(ref)) continue;
          refs.add(ref);
          total += size;
        }
      }
    }
    if (total > stopAbove) break;
  }
  return total;
}

/** Streams looked at, at most, to find the outputs' floor (a few tens of milliseconds). */
const FLOOR_MAX_VISITS = 1_000_000;

/** OUTPUT_TOO_LARGE before any page is copied when the outputs certainly pass the limit (rather than minutes into a job). */
function assertOutputsCanFit(outputs: OutputPlan[], limits: PdfToolLimits, input: InputRef) {
  if (outputsAtLeast(outputs, limits.maxOutputBytes) > limits.maxOutputBytes) throw outputTooLarge(limits, outputs.length, input);
}

function pageLimit(limits: PdfToolLimits, pages: number, input?: InputRef): ServiceError {
  const where = limits.kind === 'instant' ? 'an instant request' : 'a background job';
  const hint = limits.kind === 'instant' ? ' Upload the files (POST /pdf/upload-url) and use POST /pdf/jobs (up to 5000 pages).' : ' Split the work into several jobs.';
  return new ServiceError('PDF_PAGE_LIMIT_EXCEEDED', `This processes ${pages} pages; ${where} may process at most ${limits.maxPages}.${hint}`, {
    ...(input ? culprit(input) : {}),
    pages,
    max_pages: limits.maxPages,
  });
}

export function planMerge(spec: MergeSpec, sources: SourceDocument[], limits: PdfToolLimits): OperationPlan {
  const selections: OutputPlan['selections'] = [];
  const context = (i: number) => ({ ...culprit(spec.inputs[i]), parameter: spec.inputs[i].pagesParameter ?? `inputs[${i}].pages` });
  // Counted (without expanding any range) before a page is listed. A page past the end is the caller's real mistake:
  // said before the limit. Over the limit, the refusal gives the whole count and names the input that passed it.
  const counts = spec.inputs.map((input, i) => {
    const total = sources[i].pages.length;
    if (input.pages) assertWithinDocument(input.pages, total, context(i));
    return input.pages ? countSelected(input.pages, total) : total;
  });
  const selected = counts.reduce((sum, n) => sum + n, 0);
  if (selected > limits.maxPages) {
    let running = 0;
    throw pageLimit(limits, selected, spec.inputs[counts.findIndex((n) => (running += n) > limits.maxPages)]);
  }
  let inputPages = 0;
  spec.inputs.forEach((input, i) => {
    const source = sources[i];
    inputPages += source.pages.length;
    const pages = input.pages ? resolvePageRange(input.pages, source.pages.length, context(i)) : source.pages.map((_, p) => p + 1);
    for (const p of pages) selections.push({ source, page: p - 1 });
  });
  const requested = spec.outputFilename ? spec.outputFilename.replace(/\.pdf$/i, '') : DEFAULT_MERGE_NAME;
  const name = windowsSafeName(withPdfExtension(sanitizeFilename(requested, DEFAULT_MERGE_NAME)));
  assertOutputsCanFit([{ name, page_range: '', selections }], limits, spec.inputs[0]);
  return {
    operation: 'merge',
    inputPages,
    pagesProcessed: selections.length,
    outputs: [{ name, page_range: `1-${selections.length}`, selections }],
    title: spec.title ?? null,
  };
}

export function planSplit(spec: SplitSpec, source: SourceDocument, limits: PdfToolLimits): OperationPlan {
  const total = source.pages.length;
  const input = spec.input;
  if (total > limits.maxPages) throw pageLimit(limits, total, input);
  const groups: number[][] = [];
  const split = spec.split;
  const tooMany = (count: number) =>
    new ServiceError('OUTPUT_COUNT_EXCEEDED', `This split would produce ${count} files; at most ${limits.maxOutputs} are allowed${limits.kind === 'instant' ? ' per request (use POST /pdf/jobs for up to 500)' : ' per job'}.`, {
      ...culprit(input),
      output_count: count,
      max_outputs: limits.maxOutputs,
    });
  // The page limit counts the document's pages (what a split processes, as billed). A selection may still name a page
  // many times ("1-end,1-end,…"): each file may hold at most that many pages, counted before any selection is expanded.
  const assertFilesFit = (ranges: { range: ParsedRange; parameter: string }[]) => {
    ranges.forEach(({ range, parameter }, index) => {
      assertWithinDocument(range, total, { ...culprit(input), parameter });
      const pages = countSelected(range, total);
      if (pages > limits.maxPages) {
        throw new ServiceError('OUTPUT_TOO_LARGE', `${parameter} selects ${pages} pages (repeats included); one file of a split may hold at most ${limits.maxPages}. Name each page fewer times.`, {
          ...culprit(input),
          parameter,
          output_index: index,
          pages,
          max_pages_per_file: limits.maxPages,
        });
      }
    });
  };
  switch (split.mode) {
    case 'extract':
      assertFilesFit([{ range: split.pages, parameter: 'split.pages' }]);
      groups.push(resolvePageRange(split.pages, total, { ...culprit(input), parameter: 'split.pages' }));
      break;
    case 'ranges':
      if (split.ranges.length > limits.maxOutputs) throw tooMany(split.ranges.length);
      assertFilesFit(split.ranges.map((range, i) => ({ range, parameter: `split.ranges[${i}]` })));
      split.ranges.forEach((range, i) => groups.push(resolvePageRange(range, total, { ...culprit(input), parameter: `split.ranges[${i}]` })));
      break;
    case 'every_n': {
      const count = Math.ceil(total / split.every_n);
      if (count > limits.maxOutputs) throw tooMany(count);
      for (let start = 1; start <= total; start += split.every_n) {
        const pages: number[] = [];
        for (let p = start; p < start + split.every_n && p <= total; p++) pages.push(p);
        groups.push(pages);
      }
      break;
    }
    case 'each_page':
      if (total > limits.maxOutputs) throw tooMany(total);
      for (let p = 1; p <= total; p++) groups.push([p]);
      break;
  }
  const basename = basenameOf(input.filename);
  const names = dedupeFilenames(groups.map((pages, i) => renderFilename(spec.pattern, { basename, index: i + 1, pages: formatPages(pages) }, `${basename}-${i + 1}`)));
  const outputs = groups.map((pages, i) => ({ name: names[i], page_range: formatPages(pages), selections: pages.map((p) => ({ source, page: p - 1 })) }));
  assertOutputsCanFit(outputs, limits, input);
  return {
    operation: 'split',
    inputPages: total,
    pagesProcessed: total,
    outputs,
    title: null,
  };
}

export interface ProduceOptions {
  limits: PdfToolLimits;
  deadline?: Deadline;
  /** Progress: pages copied so far (across outputs) and files finished. */
  onProgress?: (pagesDone: number, filesDone: number) => void;
  /** Receives each file as soon as it exists (e.g. to upload it) instead of keeping them all. */
  onFile?: (file: ProducedFile) => Promise<void>;
}

/**
 * Produces the planned files in order. OUTPUT_TOO_LARGE as soon as the total passes the limit;
 * PdfDeadlineExceeded when the time budget runs out (the caller maps it to its timeout).
 */
export async function produce(plan: OperationPlan, opts: ProduceOptions): Promise<OperationResult> {
  const deadline = opts.deadline ?? Deadline.none();
  const files: ProducedFile[] = [];
  const warnings = new Set<PdfWarning>();
  let total = 0;
  let pagesDone = 0;
  for (let i = 0; i < plan.outputs.length; i++) {
    const output = plan.outputs[i];
    let assembled: Awaited<ReturnType<typeof assemble>>;
    try {
      assembled = await assemble(output.selections, {
        title: plan.title ?? undefined,
        deadline,
        // A guard on memory, not the limit itself (checked exactly on each file made): the running size counts small
        // objects before they are compressed, so it stops only at twice the bytes left and some more (a small file of
        // highly compressible objects near the end of the budget is not refused).
        maxBytes: 2 * (opts.limits.maxOutputBytes - total) + Math.min(OUTPUT_GUARD_SLACK_BYTES, opts.limits.maxOutputBytes / 4),
        maxObjects: opts.limits.maxObjectsPerOutput,
        onPage: () => {
          pagesDone++;
          opts.onProgress?.(pagesDone, files.length);
        },
      });
    } catch (err) {
      if (err instanceof PdfDeadlineExceeded || err instanceof ServiceError) throw err;
      if (err instanceof OutputBudgetExceeded) {
        const input = output.selections[0].source.input;
        throw err.kind === 'objects' ? outputTooComplex(opts.limits, plan.outputs.length, input) : outputTooLarge(opts.limits, plan.outputs.length, input);
      }
      // A problem found while copying belongs to the source of the pages.
      const problem = asProblem(err);
      throw inputProblem(problem, output.selections[0]?.source.input ?? { filename: 'input.pdf', index: 0 });
    }
    total += assembled.bytes.length;
    if (total > opts.limits.maxOutputBytes) throw outputTooLarge(opts.limits, plan.outputs.length, output.selections[0].source.input);
    for (const w of assembled.warnings) warnings.add(w);
    const file: ProducedFile = {
      index: i,
      name: output.name,
      pages: assembled.pages,
      page_range: output.page_range,
      size_bytes: assembled.bytes.length,
      warnings: assembled.warnings,
      bytes: assembled.bytes,
    };
    if (opts.onFile) {
      await opts.onFile(file);
      files.push({ ...file, bytes: new Uint8Array(0) });
    } else {
      files.push(file);
    }
    opts.onProgress?.(pagesDone, files.length);
    // Let other work (progress writes, timers) run between files.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return { plan, files, warnings: orderWarnings(warnings) };
}
